package rxthrottle

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rxthrottle/rxthrottle/internal/specmodel"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRealClockMetering runs many goroutines on the real clock against one
// Bucket with every metering rule at once (a concurrency cap, a queue
// bound, random priorities, deadlines, cancellations and ReleaseN of less
// or more than acquired) and checks what must always hold, whatever the
// machine's load: never more holds open than the cap (counted by the
// callers, inside each hold), never more than N arrivals in a window for
// the tokens the limiter granted and the calls used (an arrival drawn
// inside each hold, as a server would see it; debts are extra by SPEC and
// not drawn), every
// refusal a clear one, and everything ended.
func TestRealClockMetering(t *testing.T) {
	const k, n, w, callers = 3, 6, 60 * time.Millisecond, 300
	b, err := NewBucket(Per(n, w), WithConcurrency(k), WithMaxQueue(40))
	require.NoError(t, err)
	var open, most atomic.Int32
	var mu sync.Mutex
	var arrivals []time.Duration
	var refused, deadlines, cancelled atomic.Int32
	start := time.Now()
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(i), 31))
			time.Sleep(time.Duration(r.IntN(400)) * time.Millisecond)
			ctx := WithPriority(context.Background(), r.IntN(3)-1)
			var cancel context.CancelFunc = func() {}
			switch r.IntN(4) {
			case 0:
				ctx, cancel = context.WithTimeout(ctx, time.Duration(r.IntN(100))*time.Millisecond)
			case 1:
				ctx, cancel = context.WithCancel(ctx)
				time.AfterFunc(time.Duration(r.IntN(100))*time.Millisecond, cancel)
			}
			defer cancel()
			if r.IntN(3) == 0 {
				err := b.Wait(ctx)
				countRefusal(t, err, &refused, &deadlines, &cancelled)
				return
			}
			cost := 1 + r.IntN(2)
			tok, err := b.AcquireN(ctx, cost)
			if err != nil {
				countRefusal(t, err, &refused, &deadlines, &cancelled)
				return
			}
			in := open.Add(1)
			for m := most.Load(); in > m && !most.CompareAndSwap(m, in); m = most.Load() {
			}
			departed := time.Since(start)
			used := cost // Release; else ReleaseN of less, as much, or a debt
			if r.IntN(2) == 0 {
				used = r.IntN(2*cost + 1)
			}
			time.Sleep(time.Duration(r.IntN(20)) * time.Millisecond)
			released := time.Since(start)
			mu.Lock()
			for range min(used, cost) { // what the server counts of what was granted
				arrivals = append(arrivals, departed+time.Duration(r.Int64N(int64(released-departed)+1)))
			}
			mu.Unlock()
			open.Add(-1)
			assert.NoError(t, tok.ReleaseN(used))
		})
	}
	wg.Wait()
	require.LessOrEqual(t, most.Load(), int32(k), "holds open at once")
	require.LessOrEqual(t, specmodel.MaxInWindow(arrivals, nil, w), n, "granted arrivals in a window")
	time.Sleep(2 * w)
	st := b.Stats()
	require.Zero(t, st.Queued)
	require.Zero(t, st.Held)
	require.EqualValues(t, refused.Load(), st.Refused, "Stats().Refused")
	t.Logf("%d holds at most of k=%d; %d arrivals; refused: %d by the queue bound, %d by their deadline; %d cancelled waiting",
		most.Load(), k, len(arrivals), refused.Load(), deadlines.Load(), cancelled.Load())
}

// countRefusal checks that err is one a metered caller may get, and counts
// it.
func countRefusal(t *testing.T, err error, refused, deadlines, cancelled *atomic.Int32) {
	switch {
	case err == nil:
	case errors.Is(err, ErrQueueFull):
		refused.Add(1)
	case errors.Is(err, ErrDeadline):
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		deadlines.Add(1)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		cancelled.Add(1)
	default:
		t.Errorf("unexpected error %v", err)
	}
}
