package rxthrottle

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/require"
)

func tierOfUser(key string) []Limit {
	switch key {
	case "paid":
		return []Limit{Per(3, time.Hour)}
	case "bad":
		return []Limit{Per(0, time.Hour)}
	case "twobad":
		return []Limit{Per(1, time.Hour), Per(2, 0)}
	case "panics":
		panic("no tier for you")
	}
	return nil // the limiter's limits
}

// allowed returns how many Allows of key succeed in a row.
func allowed(t *testing.T, k *Keyed, key string) int {
	t.Helper()
	for n := 0; ; n++ {
		ok, err := k.Allow(context.Background(), key)
		require.NoError(t, err)
		if !ok {
			return n
		}
	}
}

func TestKeyLimitsTiers(t *testing.T) {
	k, err := NewKeyed(Per(1, time.Hour), WithKeyLimits(tierOfUser))
	require.NoError(t, err)
	require.Equal(t, 3, allowed(t, k, "paid"), "the paid tier")
	require.Equal(t, 1, allowed(t, k, "free"), "nil: the limiter's limits")
	require.Equal(t, []Limit{Per(1, time.Hour)}, k.Limits(), "Limits are the limiter's")

	// SetLimit changes the keys without a tier, live and new, not the tiers.
	require.NoError(t, k.SetLimit(Per(2, time.Hour)))
	require.Equal(t, 1, allowed(t, k, "free"), "one more of 2")
	require.Equal(t, 2, allowed(t, k, "other"))
	require.Equal(t, 0, allowed(t, k, "paid"), "the tier keeps its 3")
	require.ErrorIs(t, k.WaitN(context.Background(), "paid", 4), ErrInvalidCost, "costs are checked against the tier")
}

func TestKeyLimitsBadTiersAreErrors(t *testing.T) {
	k, err := NewKeyed(Per(1, time.Hour), WithKeyLimits(tierOfUser))
	require.NoError(t, err)
	ctx := context.Background()
	err = k.Wait(ctx, "bad")
	require.ErrorIs(t, err, ErrInvalidLimit)
	require.EqualError(t, err, `rxthrottle: WithKeyLimits: key "bad": limit #1 (0 per 1h0m0s): N must be at least 1: invalid limit`)
	_, err = k.Acquire(ctx, "twobad")
	require.EqualError(t, err, `rxthrottle: WithKeyLimits: key "twobad": limit #2 (2 per 0s): Window must be positive: invalid limit`)
	_, err = k.Allow(ctx, "panics")
	require.EqualError(t, err, `rxthrottle: WithKeyLimits: key "panics": the function panicked: no tier for you`)
	k.Pause("panics", time.Now().Add(time.Hour)) // dropped: nobody of the key can go anyway
	require.Zero(t, k.Stats().KeysLive, "no key made for a bad tier")
	require.NoError(t, k.Wait(ctx, "fine"), "other keys are unaffected")

	_, err = NewKeyed(Per(1, time.Hour), WithKeyLimits(nil))
	require.EqualError(t, err, "rxthrottle: WithKeyLimits(nil): a function is required")
}

// ThrottleBy reads WithKeyLimits: an item of a key whose tier is bad
// becomes an error item in its place, and the others go by their tiers.
func TestThrottleByKeyLimits(t *testing.T) {
	items := []any{"paid", "paid", "bad", "free", "paid"}
	src := rxgo.Just(items...)()
	out := ThrottleBy(Per(1, time.Hour), func(v any) string { return v.(string) }, WithKeyLimits(tierOfUser))(src)
	var got []string
	for item := range out.Observe() {
		if item.E != nil {
			require.True(t, errors.Is(item.E, ErrInvalidLimit), "%v", item.E)
			got = append(got, "error")
			continue
		}
		got = append(got, item.V.(string))
	}
	require.Equal(t, []string{"paid", "paid", "error", "free", "paid"}, got)
}
