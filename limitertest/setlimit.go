package limitertest

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
)

// checkSetLimitCost: a SetLimit that lowers the smallest N below the cost
// of a waiting caller ends its wait with an error wrapping
// rxthrottle.ErrInvalidCost (SPEC.md, "Changing limits"), and Stats counts
// it in Cancelled (a wait that ended without a token), so that Admitted +
// Cancelled + Refused + Failed + Queued is still every call. The window is
// an hour, so that on the real clock the caller is surely still waiting
// when the SetLimit comes: were it left waiting, it would go under the old
// limits, its cost more than the new N.
func (c Config) checkSetLimitCost(t *testing.T, _, _ time.Duration) {
	l := c.New(t, Setup{Limits: []rxthrottle.Limit{rxthrottle.Per(3, time.Hour)}})
	ctx := context.Background()
	require.NoError(t, l.WaitN(ctx, 3))
	done := make(chan error, 1)
	go func() { done <- l.WaitN(ctx, 3) }()
	c.waitQueued(t, l, 1)
	require.NoError(t, l.SetLimit(rxthrottle.Per(2, time.Hour)))
	select {
	case err := <-done:
		require.ErrorIs(t, err, rxthrottle.ErrInvalidCost, "the wait a SetLimit made impossible")
	case <-time.After(30 * time.Second): // a virtual limiter's comes at once
		t.Fatal("a caller of 3 still waits under Per(2, time.Hour)")
	}
	st := l.Stats()
	require.Equal(t, [5]uint64{1, 1, 0, 0, 0}, [5]uint64{st.Admitted, st.Cancelled, st.Refused, st.Failed, uint64(st.Queued)},
		"Admitted, Cancelled, Refused, Failed, Queued")
}

// waitQueued waits until n callers wait in l: in a virtual limiter's
// bubble, until every goroutine is blocked.
func (c Config) waitQueued(t *testing.T, l rxthrottle.Limiter, n int) {
	t.Helper()
	if c.Virtual {
		synctest.Wait()
		require.Equal(t, n, l.Stats().Queued, "callers waiting")
		return
	}
	for end := time.Now().Add(30 * time.Second); l.Stats().Queued < n; time.Sleep(time.Millisecond) {
		require.True(t, time.Now().Before(end), "%d callers waiting, want %d", l.Stats().Queued, n)
	}
}
