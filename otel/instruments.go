package rxotel

import (
	"go.opentelemetry.io/otel/metric"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/internal/statseries"
)

// observable makes the instrument of f on m: the numbers every exporter of
// rxthrottle reads (rxthrottle.Figures), under their OpenTelemetry names
// and units. A duration or a rate is a float, a count an integer; a count
// of now that adds up across sources is an up-down counter, one that does
// not (a minimum, a maximum) a gauge.
func observable(m metric.Meter, f rxthrottle.Figure) (metric.Observable, error) {
	name := statseries.OTelName(f)
	unit, desc := metric.WithUnit(f.Unit), metric.WithDescription(f.Help)
	if statseries.Float(f) {
		switch f.Kind {
		case rxthrottle.FigureCounter:
			return m.Float64ObservableCounter(name, unit, desc)
		case rxthrottle.FigureUpDown:
			return m.Float64ObservableUpDownCounter(name, unit, desc)
		}
		return m.Float64ObservableGauge(name, unit, desc)
	}
	switch f.Kind {
	case rxthrottle.FigureCounter:
		return m.Int64ObservableCounter(name, unit, desc)
	case rxthrottle.FigureUpDown:
		return m.Int64ObservableUpDownCounter(name, unit, desc)
	}
	return m.Int64ObservableGauge(name, unit, desc)
}
