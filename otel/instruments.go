package rxotel

import (
	"go.opentelemetry.io/otel/metric"

	"github.com/rxthrottle/rxthrottle/internal/statseries"
)

// observable makes the instrument of s on m: the numbers every exporter of
// rxthrottle reads (package statseries), under their OpenTelemetry names
// and units. A count of now that adds up across sources is an up-down
// counter, one that does not (a minimum, a maximum) a gauge.
func observable[S any](m metric.Meter, s statseries.Series[S]) (metric.Observable, error) {
	name := s.OTelName()
	unit, desc := metric.WithUnit(s.Unit), metric.WithDescription(s.Help)
	if s.Seconds != nil {
		switch s.Kind {
		case statseries.Counter:
			return m.Float64ObservableCounter(name, unit, desc)
		case statseries.UpDown:
			return m.Float64ObservableUpDownCounter(name, unit, desc)
		}
		return m.Float64ObservableGauge(name, unit, desc)
	}
	switch s.Kind {
	case statseries.Counter:
		return m.Int64ObservableCounter(name, unit, desc)
	case statseries.UpDown:
		return m.Int64ObservableUpDownCounter(name, unit, desc)
	}
	return m.Int64ObservableGauge(name, unit, desc)
}

// observe reports the value of s for the snapshot v on o, as inst.
func observe[S any](o metric.Observer, s statseries.Series[S], inst metric.Observable, v S, attrs metric.ObserveOption) {
	if s.Seconds != nil {
		o.ObserveFloat64(inst.(metric.Float64Observable), s.Seconds(v), attrs)
		return
	}
	o.ObserveInt64(inst.(metric.Int64Observable), s.Count(v), attrs)
}
