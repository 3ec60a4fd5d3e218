package statseries

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestNames(t *testing.T) {
	seen := map[string]bool{}
	check := func(otel, prom, unit string, hasCount bool) {
		t.Helper()
		assert.False(t, seen[otel], "%s twice", otel)
		seen[otel] = true
		assert.Equal(t, unit == "s", !hasCount, "%s: a duration is read in seconds, a count as a count", otel)
		assert.NotContains(t, prom, ".", otel)
	}
	for _, s := range Limiter {
		check(s.OTelName(), s.PromName(), s.Unit, s.Count != nil)
	}
	for _, s := range Single {
		check(s.OTelName(), s.PromName(), s.Unit, s.Count != nil)
	}
	for _, s := range Keyed {
		check(s.OTelName(), s.PromName(), s.Unit, s.Count != nil)
	}
	for _, s := range Transport {
		check(s.OTelName(), s.PromName(), s.Unit, s.Count != nil)
	}
	for _, s := range Guard {
		check(s.OTelName(), s.PromName(), s.Unit, s.Count != nil)
	}
	for _, tc := range []struct {
		s          Series[struct{}]
		otel, prom string
	}{
		{Series[struct{}]{Name: "admitted", Kind: Counter, Unit: "{caller}"}, "rxthrottle.admitted", "rxthrottle_admitted_total"},
		{Series[struct{}]{Name: "wait", Kind: Counter, Unit: "s"}, "rxthrottle.wait", "rxthrottle_wait_seconds_total"},
		{Series[struct{}]{Name: "max_wait", Kind: Gauge, Unit: "s"}, "rxthrottle.max_wait", "rxthrottle_max_wait_seconds"},
		{Series[struct{}]{Name: "transport.holding_past_error", Kind: UpDown}, "rxthrottle.transport.holding_past_error", "rxthrottle_transport_holding_past_error"},
	} {
		assert.Equal(t, tc.otel, tc.s.OTelName())
		assert.Equal(t, tc.prom, tc.s.PromName())
	}
}
