package redisstore

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
	"github.com/stretchr/testify/require"
)

// TestManyClientsOneBucket: several "processes" (each with its own client
// and its own Bucket value, called by three goroutines, whose admissions
// group commit batches) hammer one bucket for a bounded time.
// On Redis's clock, no window of W holds more than N admissions, every
// admission follows SPEC.md's formula in script order, every Wait was
// admitted exactly once, and the stored history is the newest admissions,
// each once.
func TestManyClientsOneBucket(t *testing.T) {
	const (
		procs = 6
		run   = 400 * time.Millisecond
	)
	limits := []rxthrottle.Limit{rxthrottle.Per(5, 40*time.Millisecond), rxthrottle.Per(12, 150*time.Millisecond)}
	srv := redistest.Start(t)

	var (
		mu       sync.Mutex
		got      []admission
		returned int
		wg       sync.WaitGroup
	)
	ctx, cancel := context.WithTimeout(context.Background(), run)
	defer cancel()
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return returned
	}
	for range procs {
		// The call timeout of the suite (limitertest_test.go): a
		// round trip a loaded machine stalls past the default 500 ms
		// fails a Wait, which this test is not about.
		b, err := NewBucket(srv.Client(t), "shared", limits[0], WithLimit(limits[1]), WithTimeout(suiteTimeout))
		require.NoError(t, err)
		b.s.trace = func(a admission) {
			mu.Lock()
			got = append(got, a)
			mu.Unlock()
		}
		for range 3 {
			wg.Go(func() {
				// Until the run is over and enough admissions were
				// made to say anything (a loaded machine makes fewer).
				for ctx.Err() == nil || count() < 40 {
					// Waits end on their own: the context only stops
					// the loop, so no reservation is left cancelled.
					if err := b.Wait(context.Background()); err != nil {
						t.Errorf("Wait: %v", err)
						return
					}
					mu.Lock()
					returned++
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()

	require.Greater(t, len(got), 20, "too few admissions to say anything")
	require.Equal(t, returned, len(got), "each Wait returned once per admission")
	slices.SortFunc(got, func(a, b admission) int {
		return cmp.Or(cmp.Compare(a.e, b.e), cmp.Compare(a.now, b.now))
	})
	es := make([]int64, len(got))
	arrivals := make([]int64, len(got))
	for i, a := range got {
		es[i], arrivals[i] = a.e, a.now
	}
	for _, l := range limits {
		require.LessOrEqual(t, maxInWindow(es, micros(l.Window)), l.N, "admissions in a window of %v", l.Window)
	}
	want := spec(arrivals, 0, limits)
	for i := range want {
		require.Equal(t, want[i], es[i], "admission %d (script order) of %d", i, len(es))
	}
	runs := map[int64]bool{} // one script run, one now
	for _, a := range got {
		runs[a.now] = true
	}
	t.Logf("%d admissions in %d script runs", len(got), len(runs))
	require.Less(t, len(runs), len(got), "group commit batched nothing")
	b, err := NewBucket(srv.Client(t), "shared", limits[0], WithTimeout(suiteTimeout))
	require.NoError(t, err)
	stored := emissions(t, srv, b)
	require.NotEmpty(t, stored)
	require.Equal(t, es[len(es)-len(stored):], stored, "the stored history is the newest admissions, each once")
}

// TestManyClientsWithCancellations: the same hammering, with half the callers
// giving up after a random short time. Whatever is given back or kept, the
// callers that went never exceed N in any window, and every Wait either went
// once or returned its context's error.
func TestManyClientsWithCancellations(t *testing.T) {
	const (
		procs = 6
		run   = 400 * time.Millisecond
	)
	limit := rxthrottle.Per(4, 30*time.Millisecond)
	srv := redistest.Start(t)

	var (
		mu        sync.Mutex
		went      []int64
		cancelled int
		calls     int
		wg        sync.WaitGroup
	)
	stop := time.Now().Add(run)
	for p := range procs {
		// suiteTimeout: a caller without a deadline is bounded by the call
		// timeout, which the test does not test; DefaultTimeout's 500 ms
		// is less than a loaded CI machine's round trip may take.
		b, err := NewBucket(srv.Client(t), "shared", limit, WithTimeout(suiteTimeout))
		require.NoError(t, err)
		var last admission // this process's latest reservation
		b.s.trace = func(a admission) { last = a }
		wg.Go(func() {
			for i := 0; time.Now().Before(stop); i++ {
				ctx, cancel := context.Background(), context.CancelFunc(func() {})
				if (i+p)%2 == 0 {
					ctx, cancel = context.WithTimeout(ctx, time.Duration(i%7)*5*time.Millisecond)
				}
				err := b.Wait(ctx)
				cancel()
				mu.Lock()
				calls++
				switch {
				case err == nil:
					went = append(went, last.e)
				case errors.Is(err, context.DeadlineExceeded):
					cancelled++
				default:
					t.Errorf("Wait: %v", err)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()

	require.Greater(t, len(went), 20, "too few admissions to say anything")
	require.Greater(t, cancelled, 0, "no caller gave up: the test tests nothing")
	require.Equal(t, calls, len(went)+cancelled, "every Wait went once or gave up")
	slices.Sort(went)
	require.LessOrEqual(t, maxInWindow(went, micros(limit.Window)), limit.N, "callers that went, in a window of %v", limit.Window)
}
