package rxthrottle

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A bad argument is its call's error before a context that has ended
// (SPEC.md, "Weights"): a cost out of range on a Keyed, for a live key, a
// key of a tier and a key not yet made, an empty key, and a cost below 1
// on Unlimited; none counts in Stats. Beside limitertest's check, which
// asks it of ForKey's one key.
func TestBadArgumentsBeforeEndedContext(t *testing.T) {
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	k, err := NewKeyed(Per(3, time.Hour), WithKeyLimits(func(key string) []Limit {
		if key == "paid" {
			return []Limit{Per(10, time.Hour)}
		}
		return nil
	}))
	require.NoError(t, err)
	require.NoError(t, k.Wait(context.Background(), "live"))
	for _, key := range []string{"live", "new", "paid"} {
		n := 4
		if key == "paid" {
			n = 11
		}
		require.ErrorIs(t, k.WaitN(ended, key, n), ErrInvalidCost, "WaitN(ended, %q, %d)", key, n)
		_, err := k.AcquireN(ended, key, 0)
		require.ErrorIs(t, err, ErrInvalidCost, "AcquireN(ended, %q, 0)", key)
		_, err = k.AllowN(ended, key, n)
		require.ErrorIs(t, err, ErrInvalidCost, "AllowN(ended, %q, %d)", key, n)
	}
	require.ErrorIs(t, k.WaitN(ended, "paid", 10), context.Canceled, "a tier's cost in range: the context's error")
	require.ErrorIs(t, k.Wait(ended, ""), errEmptyKey)
	_, err = k.Allow(ended, "")
	require.ErrorIs(t, err, errEmptyKey)
	require.ErrorIs(t, k.WaitN(ended, "", 0), errEmptyKey, "the key before the cost")
	// A nil context before an empty key: the arguments in their order
	// (SPEC.md, "Cancellation"), as redisstore's Keyed.
	//lint:ignore SA1012 a nil context is what this checks
	require.ErrorIs(t, k.WaitN(nil, "", 0), errNilContext) //nolint:staticcheck
	//lint:ignore SA1012 a nil context is what this checks
	_, err = k.AcquireN(nil, "", 0) //nolint:staticcheck
	require.ErrorIs(t, err, errNilContext)
	//lint:ignore SA1012 a nil context is what this checks
	_, err = k.AllowN(nil, "", 0) //nolint:staticcheck
	require.ErrorIs(t, err, errNilContext)
	st := k.Stats()
	require.Equal(t, [2]uint64{1, 1}, [2]uint64{st.Admitted, st.Cancelled}, "Admitted, Cancelled")

	u := Unlimited()
	require.ErrorIs(t, u.WaitN(ended, 0), ErrInvalidCost)
	_, err = u.AllowN(ended, -1)
	require.ErrorIs(t, err, ErrInvalidCost)
	require.ErrorIs(t, u.Wait(ended), context.Canceled)
}
