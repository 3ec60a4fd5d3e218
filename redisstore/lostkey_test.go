package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/rxthrottle/rxthrottle"
	"github.com/stretchr/testify/require"
)

// TestLostKeyNeverOpensTheWindow (issue 17, item 7): any one key of a
// schedule deleted on its own mid-run (a DEL, an eviction that picks one
// key) never lets more than N per window through, and no count goes
// negative. (A lost held counted -1 for the schedule's lifetime: Allow
// was true on Per(1, 200ms) while its only token was held; a lost state
// wiped done and held with it.)
func TestLostKeyNeverOpensTheWindow(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name string
		key  int // index in Keys
		hold bool
	}{
		{"held, a token held", 1, true},
		{"done, two completions", 0, false},
		{"state, two completions", 2, false},
		{"state, a token held", 2, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, srv := newTestBucket(t, rxthrottle.Per(2, time.Hour), WithHoldTimeout(time.Hour))
			var tok rxthrottle.Token
			if c.hold {
				var err error
				tok, err = b.AcquireN(ctx, 2)
				require.NoError(t, err)
			} else {
				require.NoError(t, b.WaitN(ctx, 2))
			}
			_, err := srv.Do("DEL", b.keys[c.key])
			require.NoError(t, err)
			requireWindowFull(t, b)
			for _, k := range b.keys[:3] { // runs: made by leases only
				require.Greater(t, pttl(t, srv, k), time.Duration(0), "%s has its expiry", k)
			}
			if c.hold {
				tok.Release()
				ok, err := b.Allow(ctx)
				require.NoError(t, err)
				require.False(t, ok, "a release after the loss frees nothing early")
			}
		})
	}
}

// TestLostRunsNeverOpensTheWindow: the completions of leased tokens
// (runs) deleted on their own never let more than N per window through:
// the next script pauses the schedule until they have renewed.
func TestLostRunsNeverOpensTheWindow(t *testing.T) {
	ctx := context.Background()
	b, srv := newTestBucket(t, rxthrottle.Per(2, time.Hour), WithLease(0), WithTimeout(suiteTimeout))
	require.NoError(t, b.Wait(ctx))
	require.NoError(t, b.Wait(ctx))
	require.NoError(t, b.Close()) // the uses are reported: runs holds them
	require.EqualValues(t, 2, b.Leased())
	require.Len(t, emissions(t, srv, b), 2)
	require.Empty(t, scores(t, srv, b.keys[0]), "in runs, not in done")
	_, err := srv.Do("DEL", b.keys[3])
	require.NoError(t, err)
	requireWindowFull(t, b)
}

// TestLostStateKeepsIDs: a schedule whose state alone was lost takes its
// ids on from the largest left, so a new admission never overwrites a
// token of an older one.
func TestLostStateKeepsIDs(t *testing.T) {
	b, srv := newTestBucket(t, rxthrottle.Per(3, time.Hour))
	reserve(t, b)
	a2 := reserve(t, b)
	_, err := srv.Do("DEL", b.keys[2])
	require.NoError(t, err)
	a3 := reserve(t, b)
	require.Greater(t, a3.id, a2.id)
	require.Len(t, emissions(t, srv, b), 3, "no token overwritten")
	ok, err := b.Allow(context.Background())
	require.NoError(t, err)
	require.False(t, ok)
}

// requireWindowFull checks that b's window of Per(2, time.Hour) is still
// full after the loss of a key: Allow refuses, and a Wait goes no earlier
// than the window allows.
func requireWindowFull(t *testing.T, b *Bucket) {
	t.Helper()
	ctx := context.Background()
	for i := range 3 {
		ok, err := b.Allow(ctx)
		require.NoError(t, err)
		require.False(t, ok, "Allow #%d after the loss: the window is still full", i+1)
	}
	a, err := b.s.admit(ctx, b.keys, request{n: 1})
	require.NoError(t, err)
	require.False(t, a.admitted && a.e < a.now+micros(time.Hour)-micros(time.Second), "a Wait goes no earlier than the window allows: %+v", a)
}
