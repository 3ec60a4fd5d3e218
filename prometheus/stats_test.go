package rxprom_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	rxprom "github.com/rxthrottle/rxthrottle/prometheus"
)

// callStats is a Stats of another module as rxprom sees it: anything with
// Figures (grpcthrottle.Stats, redisstore.LeaseStats, or a user's own).
type callStats struct {
	calls   uint64
	pending int
	rate    float64
}

func (s callStats) Figures() []rxthrottle.Figure {
	return []rxthrottle.Figure{
		{Source: "client", Name: "client.calls", Help: "Calls made.", Kind: rxthrottle.FigureCounter, Unit: "{call}", Value: float64(s.calls)},
		{Source: "client", Name: "client.pending", Help: "Calls pending now.", Kind: rxthrottle.FigureUpDown, Unit: "{call}", Value: float64(s.pending)},
		{Source: "client", Name: "client.rate", Help: "Calls a second.", Kind: rxthrottle.FigureGauge, Unit: "{call}/s", Value: s.rate},
	}
}

// badStats gives whatever figures it is told to.
type badStats []rxthrottle.Figure

func (s badStats) Figures() []rxthrottle.Figure { return s }

// AddStats exports any Figures under their Source's label, read at each
// scrape; a name may be shared by sources of one Source whose figures
// differ (a limiter and its lease figures), never by two with a figure in
// common.
func TestAddStats(t *testing.T) {
	c, err := rxprom.NewCollector()
	require.NoError(t, err)
	now := callStats{calls: 3, pending: 1, rate: 2.5}
	require.NoError(t, rxprom.AddStats(c, "api", func() callStats { return now }))
	b, err := rxthrottle.NewBucket(rxthrottle.Per(1, 1e9))
	require.NoError(t, err)
	require.NoError(t, c.AddLimiter("api", b))
	now = callStats{calls: 5, pending: 0, rate: 0.5} // read at the scrape, not at AddStats

	got := exposition(t, c)
	for _, line := range []string{
		"# TYPE rxthrottle_client_calls_total counter", `rxthrottle_client_calls_total{client="api"} 5`,
		"# TYPE rxthrottle_client_pending gauge", `rxthrottle_client_pending{client="api"} 0`,
		"# HELP rxthrottle_client_rate Calls a second.", `rxthrottle_client_rate{client="api"} 0.5`,
		`rxthrottle_admitted_total{limiter="api"} 0`,
	} {
		assert.Contains(t, got, "\n"+line+"\n")
	}

	err = rxprom.AddStats(c, "api", func() callStats { return callStats{} })
	assert.ErrorContains(t, err, `rxprom: AddStats("api"): a client of that name is already added`)
	assert.NoError(t, rxprom.AddStats(c, "other", func() callStats { return callStats{} }))
	for _, tc := range []struct {
		figs badStats
		want string
	}{
		{nil, "no figures"},
		{badStats{{Source: "a", Name: "x", Unit: "{x}"}, {Source: "b", Name: "y", Unit: "{y}"}}, `figure "y": every figure needs a name and the Source of the others ("a")`},
		{badStats{{Source: "a", Name: "x", Unit: "{x}"}, {Source: "a", Name: "x", Unit: "{x}"}}, `figure "x" twice`},
		{badStats{{Source: "limiter", Name: "admitted", Help: "Mine.", Unit: "{caller}"}}, "rxthrottle_admitted_total is rxthrottle's own"},
	} {
		err := rxprom.AddStats(c, "bad", func() badStats { return tc.figs })
		assert.ErrorContains(t, err, tc.want)
	}
	assert.ErrorContains(t, rxprom.AddStats[callStats](c, "nil", nil), "stats is nil")
	assert.ErrorContains(t, rxprom.AddStats(new(rxprom.Collector), "z", func() callStats { return now }), "without NewCollector")
}
