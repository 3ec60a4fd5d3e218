package rxthrottle_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/rxthrottle/rxthrottle"
)

// Each field of a Stats is the value of its figure, and the zero Stats
// gives the same figures but for their values.
func TestStatsFigures(t *testing.T) {
	s := rxthrottle.Stats{Admitted: 1, Waited: 2, Cancelled: 3, Refused: 4, TotalWait: 5 * time.Second,
		MaxWait: 1500 * time.Millisecond, Queued: 7, Free: 8, Held: 9, KeysLive: 10, KeysBlocked: 11, ConcurrencyCap: 12}
	got := map[string]float64{}
	for _, f := range s.Figures() {
		assert.Equal(t, "limiter", f.Source, f.Name)
		got[f.Name] = f.Value
	}
	assert.Equal(t, map[string]float64{"admitted": 1, "waited": 2, "cancelled": 3, "refused": 4, "wait": 5,
		"max_wait": 1.5, "queued": 7, "free_tokens": 8, "held_tokens": 9, "keys_live": 10, "keys_blocked": 11, "concurrency_cap": 12}, got)
	zero := rxthrottle.Stats{}.Figures()
	for i, f := range s.Figures() {
		f.Value = 0
		assert.Equal(t, zero[i], f)
	}
}
