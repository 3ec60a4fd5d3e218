package rxprom

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/internal/statseries"
)

// series is how one source's Figures become Prometheus series: for each
// figure its snapshots give, in their order, the description and the
// type, or a nil description for a figure the source leaves out.
type series struct {
	descs []*prometheus.Desc
	types []prometheus.ValueType
}

// newSeries describes the figures of first (a snapshot's) that keep
// accepts, each with one label: its Source. Counts and gauges of now are
// both gauges here.
func newSeries(first []rxthrottle.Figure, keep func(name string) bool) series {
	s := series{make([]*prometheus.Desc, len(first)), make([]prometheus.ValueType, len(first))}
	for i, f := range first {
		if keep != nil && !keep(f.Name) {
			continue
		}
		s.descs[i] = prometheus.NewDesc(statseries.PromName(f), f.Help, []string{f.Source}, nil)
		s.types[i] = prometheus.GaugeValue
		if f.Kind == rxthrottle.FigureCounter {
			s.types[i] = prometheus.CounterValue
		}
	}
	return s
}

// collect sends the series of the snapshot's figures figs, labelled name.
func (s series) collect(ch chan<- prometheus.Metric, figs []rxthrottle.Figure, name string) {
	for i, f := range figs {
		if i < len(s.descs) && s.descs[i] != nil {
			ch <- prometheus.MustNewConstMetric(s.descs[i], s.types[i], f.Value, name)
		}
	}
}

// describe sends the descriptions of s, each once by seen.
func (s series) describe(ch chan<- *prometheus.Desc, seen map[string]bool) {
	for _, d := range s.descs {
		if d != nil && !seen[d.String()] {
			seen[d.String()] = true
			ch <- d
		}
	}
}

// names returns the Prometheus names s exports.
func (s series) names() []string {
	var out []string
	for _, d := range s.descs {
		if d != nil {
			out = append(out, d.String())
		}
	}
	return out
}

// known is the series of the root module's Stats types (statseries.Known),
// which Describe sends before anything is added.
var known = func() []series {
	var out []series
	for _, figs := range statseries.Known() {
		out = append(out, newSeries(figs, nil))
	}
	return out
}()
