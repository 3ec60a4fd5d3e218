// Package statseries is what rxthrottle's metric exporters (rxprom for
// Prometheus, rxotel for OpenTelemetry) share about the numbers they
// export: every Stats snapshot describes its own (rxthrottle.Figures), and
// this package names them for each exporter, lists the Figures of the
// root module's Stats types, which both exporters describe before anything
// is added, and says which of a limiter's Figures belong to one kind of
// limiter only.
package statseries

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/guard"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
)

// OTelName is the OpenTelemetry instrument's name: "rxthrottle.transport.sent".
func OTelName(f rxthrottle.Figure) string { return "rxthrottle." + f.Name }

// PromName is the Prometheus name: "rxthrottle_transport_sent_total",
// "rxthrottle_wait_seconds_total", "rxthrottle_queued".
func PromName(f rxthrottle.Figure) string {
	name := "rxthrottle_" + strings.ReplaceAll(f.Name, ".", "_")
	if f.Unit == "s" {
		name += "_seconds"
	}
	if f.Kind == rxthrottle.FigureCounter {
		name += "_total"
	}
	return name
}

// Known returns the Figures of the zero Stats of each Stats type of the
// root module: a limiter's, a Transport's, a learning Transport's and a
// Guard's. The other modules' (grpcthrottle, redisstore) are described
// when they are added, so that no exporter imports them.
func Known() [][]rxthrottle.Figure {
	return [][]rxthrottle.Figure{
		rxthrottle.Stats{}.Figures(),
		httpthrottle.TransportStats{}.Figures(),
		httpthrottle.LearnStats{}.Figures(),
		guard.Stats{}.Figures(),
	}
}

// KeyedOnly reports whether a limiter's figure of this name belongs to a
// keyed limiter only; SingleOnly, to a single-quota limiter only.
func KeyedOnly(name string) bool { return slices.Contains([]string{"keys_live", "keys_blocked"}, name) }

// SingleOnly: see KeyedOnly.
func SingleOnly(name string) bool {
	return slices.Contains([]string{"free_tokens", "held_tokens", "concurrency_cap", "released", "hold"}, name)
}

// WaitBuckets returns the default bucket bounds, in seconds, of the wait
// histogram: 0 counts the callers that did not wait, the rest spans a
// millisecond to five minutes (a 429's typical pause).
func WaitBuckets() []float64 {
	return []float64{0, 0.001, 0.01, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300}
}

// CheckBuckets returns a copy of the bounds given to an exporter's
// WithBuckets (the caller may reuse its slice), or an error, prefixed pkg
// ("rxprom", "rxotel"), unless there is at least one and they are finite
// and increasing.
func CheckBuckets(pkg string, bounds []float64) ([]float64, error) {
	if len(bounds) == 0 {
		return nil, fmt.Errorf("%s: WithBuckets(): at least one bound is needed", pkg)
	}
	for i, b := range bounds {
		switch {
		case math.IsNaN(b) || math.IsInf(b, 0):
			return nil, fmt.Errorf("%s: WithBuckets%v: bound %d is %v, want a finite number of seconds", pkg, bounds, i, b)
		case i > 0 && b <= bounds[i-1]:
			return nil, fmt.Errorf("%s: WithBuckets%v: bound %d (%v) is not above bound %d (%v)", pkg, bounds, i, b, i-1, bounds[i-1])
		}
	}
	return slices.Clone(bounds), nil
}

// Check returns an error unless first is a snapshot's figures that
// a source may export: some, all of one Source, each name once, and none
// of a name that a known figure has with another help, unit, kind or
// Source.
func Check(first []rxthrottle.Figure) error {
	if len(first) == 0 {
		return errors.New("the Stats have no figures")
	}
	seen := map[string]bool{}
	for _, f := range first {
		if f.Source != first[0].Source || f.Source == "" || f.Name == "" {
			return fmt.Errorf("figure %q: every figure needs a name and the Source of the others (%q)", f.Name, first[0].Source)
		}
		if seen[f.Name] {
			return fmt.Errorf("figure %q twice", f.Name)
		}
		seen[f.Name] = true
		for _, figs := range Known() {
			for _, k := range figs {
				if PromName(k) == PromName(f) && (k.Help != f.Help || k.Source != f.Source || k.Unit != f.Unit || k.Kind != f.Kind) {
					return fmt.Errorf("figure %q: %s is rxthrottle's own, with another help, unit, kind or Source", f.Name, PromName(f))
				}
			}
		}
	}
	return nil
}

// Float reports whether an exporter reads f as a float (a duration in
// seconds, a rate per second) rather than as a whole count.
func Float(f rxthrottle.Figure) bool { return f.Unit == "s" || strings.HasSuffix(f.Unit, "/s") }
