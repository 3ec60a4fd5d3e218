package statseries

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
)

// Each known figure has a name of its own in both exporters, one Source
// per Stats type, and a help; the names follow each exporter's rules.
func TestNames(t *testing.T) {
	seen := map[string]bool{}
	for _, figs := range Known() {
		assert.NotEmpty(t, figs)
		for _, f := range figs {
			assert.False(t, seen[OTelName(f)], "%s twice", f.Name)
			seen[OTelName(f)] = true
			assert.Equal(t, figs[0].Source, f.Source, f.Name)
			assert.NotEmpty(t, f.Help, f.Name)
			assert.NotEmpty(t, f.Unit, f.Name)
			assert.NotContains(t, PromName(f), ".", f.Name)
		}
	}
	for _, tc := range []struct {
		f          rxthrottle.Figure
		otel, prom string
	}{
		{rxthrottle.Figure{Name: "admitted", Kind: rxthrottle.FigureCounter, Unit: "{caller}"}, "rxthrottle.admitted", "rxthrottle_admitted_total"},
		{rxthrottle.Figure{Name: "wait", Kind: rxthrottle.FigureCounter, Unit: "s"}, "rxthrottle.wait", "rxthrottle_wait_seconds_total"},
		{rxthrottle.Figure{Name: "max_wait", Kind: rxthrottle.FigureGauge, Unit: "s"}, "rxthrottle.max_wait", "rxthrottle_max_wait_seconds"},
		{rxthrottle.Figure{Name: "transport.holding_past_error", Kind: rxthrottle.FigureUpDown}, "rxthrottle.transport.holding_past_error", "rxthrottle_transport_holding_past_error"},
	} {
		assert.Equal(t, tc.otel, OTelName(tc.f))
		assert.Equal(t, tc.prom, PromName(tc.f))
	}
	for _, f := range (rxthrottle.Stats{}).Figures() {
		assert.False(t, KeyedOnly(f.Name) && SingleOnly(f.Name), f.Name)
	}
	assert.True(t, KeyedOnly("keys_live"))
	assert.True(t, SingleOnly("held_tokens"))
	assert.False(t, SingleOnly("admitted") || KeyedOnly("admitted"))
}

func TestCheckBuckets(t *testing.T) {
	for _, tc := range []struct {
		bounds []float64
		want   string
	}{
		{[]float64{0, 0.5, 1}, ""},
		{nil, "rxx: WithBuckets(): at least one bound is needed"},
		{[]float64{0, math.NaN()}, "rxx: WithBuckets[0 NaN]: bound 1 is NaN, want a finite number of seconds"},
		{[]float64{math.Inf(1)}, "rxx: WithBuckets[+Inf]: bound 0 is +Inf, want a finite number of seconds"},
		{[]float64{2, 1}, "rxx: WithBuckets[2 1]: bound 1 (1) is not above bound 0 (2)"},
	} {
		got, err := CheckBuckets("rxx", tc.bounds)
		if tc.want != "" {
			require.EqualError(t, err, tc.want)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, tc.bounds, got)
		got[0] = 42
		require.NotEqual(t, tc.bounds[0], got[0], "a copy: the caller may reuse its slice")
	}
}
