package rxthrottle_test

import (
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
)

// Each field of a Stats is the value of its figure, and the zero Stats
// gives the same figures but for their values.
func TestStatsFigures(t *testing.T) {
	s := rxthrottle.Stats{Admitted: 1, Waited: 2, Cancelled: 3, Refused: 4, TotalWait: 5 * time.Second,
		MaxWait: 1500 * time.Millisecond, Queued: 7, Free: 8, Held: 9, KeysLive: 10, KeysBlocked: 11, ConcurrencyCap: 12,
		Released: 13, TotalHold: 14 * time.Second, Failed: 15}
	got := map[string]float64{}
	for _, f := range s.Figures() {
		assert.Equal(t, "limiter", f.Source, f.Name)
		got[f.Name] = f.Value
	}
	assert.Equal(t, map[string]float64{"admitted": 1, "waited": 2, "cancelled": 3, "refused": 4, "wait": 5,
		"max_wait": 1.5, "queued": 7, "free_tokens": 8, "held_tokens": 9, "keys_live": 10, "keys_blocked": 11, "concurrency_cap": 12,
		"released": 13, "hold": 14, "failed": 15}, got)
	zero := rxthrottle.Stats{}.Figures()
	for i, f := range s.Figures() {
		f.Value = 0
		assert.Equal(t, zero[i], f)
	}
}

// Stats.Released and TotalHold count the holds whose call completed,
// released or timed out, with their lengths on the limiter's clock; a hold
// still open, or given back unused, counts in neither.
func TestStatsHoldTime(t *testing.T) {
	mock := clock.NewMock()
	b, err := rxthrottle.NewBucket(rxthrottle.Per(10, time.Minute), rxthrottle.WithClock(mock),
		rxthrottle.WithHoldTimeout(10*time.Second))
	require.NoError(t, err)
	released, err := b.Acquire(t.Context())
	require.NoError(t, err)
	_, err = b.Acquire(t.Context()) // never released: it times out
	require.NoError(t, err)
	mock.Add(3 * time.Second)
	released.Release()
	open, err := b.Acquire(t.Context())
	require.NoError(t, err)
	cancelled, err := b.Acquire(t.Context())
	require.NoError(t, err)
	cancelled.Cancel() // given back unused: not a completed hold
	s := b.Stats()
	assert.Equal(t, uint64(1), s.Released)
	assert.Equal(t, 3*time.Second, s.TotalHold)

	mock.Add(8 * time.Second) // the second hold times out at 10 s
	s = b.Stats()
	assert.Equal(t, uint64(2), s.Released)
	assert.Equal(t, 13*time.Second, s.TotalHold)
	assert.Equal(t, 1, s.Held)
	open.Release()
	s = b.Stats()
	assert.Equal(t, uint64(3), s.Released)
	assert.Equal(t, 21*time.Second, s.TotalHold)
}
