package rxprom

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/rxthrottle/rxthrottle/internal/statseries"
)

// metric is one series read from a Stats snapshot S: its description, its
// type and how to read its value.
type metric[S any] struct {
	desc  *prometheus.Desc
	typ   prometheus.ValueType
	value func(S) float64
}

// newMetric describes the series name with help and one label.
func newMetric[S any](name, label, help string, typ prometheus.ValueType, value func(S) float64) metric[S] {
	return metric[S]{prometheus.NewDesc(name, help, []string{label}, nil), typ, value}
}

// collect sends the series of ms for the snapshot s, labelled name.
func collect[S any](ch chan<- prometheus.Metric, ms []metric[S], s S, name string) {
	for _, m := range ms {
		ch <- prometheus.MustNewConstMetric(m.desc, m.typ, m.value(s), name)
	}
}

// fromSeries makes the Prometheus series of ss, labelled label: the
// numbers every exporter of rxthrottle reads (package statseries), under
// their Prometheus names. Counts and gauges of now are both gauges here.
func fromSeries[S any](label string, ss []statseries.Series[S]) []metric[S] {
	out := make([]metric[S], len(ss))
	for i, s := range ss {
		typ := prometheus.GaugeValue
		if s.Kind == statseries.Counter {
			typ = prometheus.CounterValue
		}
		out[i] = newMetric(s.PromName(), label, s.Help, typ, s.Value)
	}
	return out
}

// The series of every limiter, labelled limiter="name"; of a single-quota
// limiter only; of a keyed limiter only; of an httpthrottle.Transport,
// labelled transport="name"; of a guard.Guard, labelled guard="name".
var (
	limiterMetrics   = fromSeries("limiter", statseries.Limiter)
	singleMetrics    = fromSeries("limiter", statseries.Single)
	keyedMetrics     = fromSeries("limiter", statseries.Keyed)
	transportMetrics = fromSeries("transport", statseries.Transport)
	guardMetrics     = fromSeries("guard", statseries.Guard)
)

// describe sends the descriptions of ms.
func describe[S any](ch chan<- *prometheus.Desc, ms []metric[S]) {
	for _, m := range ms {
		ch <- m.desc
	}
}
