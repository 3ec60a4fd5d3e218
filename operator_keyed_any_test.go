package rxthrottle

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/require"
)

// otherKeyed is a KeyedLimiter that is not a *Keyed (as redisstore's
// Keyed is not), so that ThrottleByWith takes its path for any limiter.
type otherKeyed struct{ KeyedLimiter }

// TestPropertyThrottleByWithAnyKeyedLimiter: over a KeyedLimiter that is
// not a *Keyed, ThrottleByWith keeps every key's schedule to the
// nanosecond, keeps each key's order, and loses nothing.
func TestPropertyThrottleByWithAnyKeyedLimiter(t *testing.T) {
	for seed := range propertyCases / 3 {
		r := rand.New(rand.NewPCG(uint64(seed), 12))
		limits, items, keys := keyedCase(r)
		for i := range items {
			items[i].cancel = -1
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				k, err := NewKeyed(limits[0], withLimits(limits[1:])...)
				require.NoError(t, err)
				start := time.Now()
				src := scheduledSource(t.Context(), start, items, 0)
				keyOf := func(v any) string { return keys[v.(int)] }
				out := ThrottleByWith(otherKeyed{k}, keyOf)(src).Observe()
				got := collectKeyed(t, start, out, keys)
				require.Equal(t, perKeySchedule(limits, items, keys), got, "limits %v keys %v", limits, keys)
				synctest.Wait()
				st := k.Stats()
				require.EqualValues(t, len(items), st.Admitted)
				require.Zero(t, st.Queued)
			})
		})
	}
}

// failingKeyed fails every Acquire of key "bad".
type failingKeyed struct{ KeyedLimiter }

var errBadKey = errors.New("store down for this key")

func (f failingKeyed) Acquire(ctx context.Context, key string) (Token, error) {
	if key == "bad" {
		return Token{}, errBadKey
	}
	return f.KeyedLimiter.Acquire(ctx, key)
}

// TestThrottleByWithAnyKeyedLimiterErrorsAndCancel: a failed Acquire is an
// error item that wraps the cause and the stream goes on; cancelling the
// subscription gives back every token and ends every goroutine (synctest
// fails the test otherwise).
func TestThrottleByWithAnyKeyedLimiterErrorsAndCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k, err := NewKeyed(Per(1, time.Hour))
		require.NoError(t, err)
		key := func(v any) string { return v.(string) }
		out := ThrottleByWith(failingKeyed{k}, key)(rxgo.Just("a", "bad", "b")()).Observe()
		var got []string
		for item := range out {
			if item.Error() {
				require.ErrorIs(t, item.E, errBadKey)
				got = append(got, "error")
				continue
			}
			got = append(got, item.V.(string))
		}
		require.ElementsMatch(t, []string{"a", "error", "b"}, got)

		ctx, cancel := context.WithCancel(context.Background())
		out = ThrottleByWith(otherKeyed{k}, key)(rxgo.Just("a", "c", "c")()).Observe(rxgo.WithContext(ctx))
		item := <-out
		require.Equal(t, "c", item.V, "a waits an hour, c goes")
		cancel()
		for range out {
		}
		synctest.Wait()
		require.Zero(t, k.Stats().Queued, "the waits were withdrawn")
	})
}
