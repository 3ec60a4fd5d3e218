package rxotel_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	rxotel "github.com/rxthrottle/rxthrottle/otel"
)

// callStats is a Stats of another module as rxotel sees it: anything with
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

// AddStats exports any Figures with their Source's attribute, through
// instruments made when a figure is first added, read at each collection;
// a second source of the same figures shares the instruments; Close stops
// them too.
func TestAddStats(t *testing.T) {
	m, r := newMetrics(t)
	now := callStats{calls: 3, pending: 1, rate: 2.5}
	require.NoError(t, rxotel.AddStats(m, "api", func() callStats { return now }))
	require.NoError(t, rxotel.AddStats(m, "batch", func() callStats { return callStats{calls: 7} }))
	b, err := rxthrottle.NewBucket(rxthrottle.Per(1, 1e9))
	require.NoError(t, err)
	require.NoError(t, m.AddLimiter("api", b))
	now = callStats{calls: 5, pending: 0, rate: 0.5} // read at the collection, not at AddStats

	got := collect(t, r)
	assert.Equal(t, point{"counter", "{call}", "5"}, got["rxthrottle.client.calls{client=api}"])
	assert.Equal(t, point{"updown", "{call}", "0"}, got["rxthrottle.client.pending{client=api}"])
	assert.Equal(t, point{"gauge", "{call}/s", "0.5"}, got["rxthrottle.client.rate{client=api}"])
	assert.Equal(t, point{"counter", "{call}", "7"}, got["rxthrottle.client.calls{client=batch}"])
	assert.Equal(t, point{"counter", "{caller}", "0"}, got["rxthrottle.admitted{limiter=api}"])
	assert.Len(t, got, 3+3+13)

	err = rxotel.AddStats(m, "api", func() callStats { return callStats{} })
	assert.ErrorContains(t, err, `rxotel: AddStats("api"): a client of that name is already added`)
	assert.ErrorContains(t, rxotel.AddStats[callStats](m, "nil", nil), "stats is nil")
	assert.ErrorContains(t, rxotel.AddStats(new(rxotel.Metrics), "z", func() callStats { return now }), "without New")

	require.NoError(t, m.Close())
	assert.Empty(t, collect(t, r))
	require.NoError(t, rxotel.AddStats(m, "late", func() callStats { return now }))
	assert.Empty(t, collect(t, r), "a source added after Close is not observed")
}

// gridStats is a Stats whose figure's name is its own: each gets new
// instruments and a callback of its own.
type gridStats struct{ i int }

func (s gridStats) Figures() []rxthrottle.Figure {
	return []rxthrottle.Figure{{Source: "grid", Name: fmt.Sprintf("grid.cell%d", s.i), Help: "A cell.",
		Kind: rxthrottle.FigureUpDown, Unit: "{cell}", Value: float64(s.i)}}
}

// Sources added during collections, each with instruments of its own,
// deadlock nothing: the SDK is called without the Metrics' lock, which New's
// callback takes under the SDK's.
func TestAddStatsDuringCollections(t *testing.T) {
	m, r := newMetrics(t)
	b, err := rxthrottle.NewBucket(rxthrottle.Per(1, 1e9))
	require.NoError(t, err)
	require.NoError(t, m.AddLimiter("b", b)) // New's callback has a source to read
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 50 {
			assert.NoError(t, rxotel.AddStats(m, fmt.Sprint(i), func() gridStats { return gridStats{i} }))
		}
	}()
	for collecting := true; collecting; {
		select {
		case <-done:
			collecting = false
		default:
			collect(t, r)
		}
	}
	got := collect(t, r)
	assert.Equal(t, point{"updown", "{cell}", "49"}, got["rxthrottle.grid.cell49{grid=49}"])
}
