package rxthrottle

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The property tests draw random limits and arrival patterns (simultaneous
// arrivals, exact renewals, cancellations, error items) and compare every
// emission, to the nanosecond of virtual time, with SPEC.md's formula.

const propertyCases = 300

func withLimits(limits []Limit, opts ...Option) []Option {
	for _, l := range limits {
		opts = append(opts, WithLimit(l))
	}
	return opts
}

func sleepUntil(t time.Time) { time.Sleep(time.Until(t)) }

// sleepCtx sleeps until t or until ctx ends, and returns ctx.Err() then.
// It waits on a channel closed by time.AfterFunc, not on a timer channel:
// go1.26.8 crashed once (SIGSEGV in runtime.(*timer).maybeRunChan) in a
// synctest bubble selecting on a timer channel and ctx.Done, in 60,000 runs.
// It makes no timer for an instant already reached: go1.26.8 also crashed
// once (SIGSEGV in runtime.(*timer).modify, under time.AfterFunc(0, ...))
// in a bubble, in CI, and such a sleep has nothing to wait for.
func sleepCtx(ctx context.Context, t time.Time) error {
	if time.Until(t) <= 0 {
		return ctx.Err()
	}
	due := make(chan struct{})
	timer := time.AfterFunc(time.Until(t), func() { close(due) })
	defer timer.Stop()
	select {
	case <-due:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func TestPropertyBucketWaitMatchesSpec(t *testing.T) {
	for seed := range propertyCases {
		r := rand.New(rand.NewPCG(uint64(seed), 1))
		limits, items := randomCase(r, 3, false)
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				b, err := NewBucket(limits[0], withLimits(limits[1:])...)
				require.NoError(t, err)
				got := driveWaits(t, start, items, func(ctx context.Context, _ int) error { return b.Wait(ctx) })

				want := specSchedule(limits, items)
				require.Equal(t, want, got, "limits %v", limits)
				checkWindows(t, limits, got)
				admitted, cancelled := countOutcomes(got)
				st := b.Stats()
				require.Equal(t, admitted, st.Admitted, "Stats().Admitted")
				require.Equal(t, cancelled, st.Cancelled, "Stats().Cancelled")
				require.Zero(t, st.Queued, "Stats().Queued")
			})
		})
	}
}

func TestPropertyThrottleMatchesSpec(t *testing.T) {
	for seed := range propertyCases {
		r := rand.New(rand.NewPCG(uint64(seed), 2))
		limits, items := randomCase(r, 3, true)
		for i := range items {
			items[i].cancel = -1 // the operator cancels whole subscriptions
		}
		end := time.Duration(r.IntN(200)) * time.Millisecond
		if len(items) > 0 {
			end += items[len(items)-1].arrive
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				src := scheduledSource(t.Context(), start, items, end)
				out := Throttle(limits[0], withLimits(limits[1:])...)(src)
				got, done := collect(t, start, len(items), out.Observe())

				want := specSchedule(limits, items)
				require.Equal(t, want, got, "limits %v", limits)
				checkWindows(t, limits, tokenTimes(items, got))
				last := end
				if len(want) > 0 {
					last = max(last, want[len(want)-1])
				}
				require.Equal(t, last, done, "completion time")
			})
		})
	}
}

// TestPropertyThrottleDisposal disposes of the subscription at a random
// instant: the items emitted before are exactly SPEC's, none comes after, and
// every goroutine ends (synctest fails the test otherwise).
func TestPropertyThrottleDisposal(t *testing.T) {
	for seed := range propertyCases {
		r := rand.New(rand.NewPCG(uint64(seed), 3))
		limits, items := randomCase(r, 2, true)
		for i := range items {
			items[i].cancel = -1
		}
		disposeAt := time.Duration(r.IntN(60))*time.Millisecond + time.Millisecond/2
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				ctx, cancel := context.WithDeadline(t.Context(), start.Add(disposeAt))
				defer cancel()
				src := scheduledSource(ctx, start, items, time.Hour)
				out := Throttle(limits[0], withLimits(limits[1:])...)(src)
				got, done := collect(t, start, len(items), out.Observe(rxgo.WithContext(ctx)))

				want := specSchedule(limits, items)
				for i, e := range want {
					if e > disposeAt {
						want[i] = -1
					}
				}
				require.Equal(t, want, got, "limits %v", limits)
				require.Equal(t, disposeAt, done, "the output closes when disposed of")
			})
		})
	}
}

// TestThrottleSlowConsumer checks that an item counts as emitted when the
// downstream receives it: with a consumer slower than the quota, the window
// holds for the times the consumer received the items.
func TestThrottleSlowConsumer(t *testing.T) {
	const n, w = 3, 10 * time.Millisecond
	for _, c := range []struct {
		name string
		op   func() func(rxgo.Observable) rxgo.Observable
	}{
		{"Throttle", func() func(rxgo.Observable) rxgo.Observable { return Throttle(Per(n, w)) }},
		{"ThrottleWith(*Bucket)", func() func(rxgo.Observable) rxgo.Observable {
			b, err := NewBucket(Per(n, w))
			require.NoError(t, err)
			return ThrottleWith(b)
		}},
		// Any other Limiter keeps the same counting rule: its tokens are
		// held until the downstream has the item.
		{"ThrottleWith(another Limiter)", func() func(rxgo.Observable) rxgo.Observable {
			b, err := NewBucket(Per(n, w))
			require.NoError(t, err)
			return ThrottleWith(otherLimiter{b})
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				items := make([]specItem, 12)
				for i := range items {
					items[i] = specItem{arrive: 0, cancel: -1}
				}
				out := c.op()(scheduledSource(t.Context(), start, items, 0)).Observe()
				var got []time.Duration
				for i := 0; ; i++ {
					// The consumer stalls for 7ms before it reads the second item.
					if i == 1 {
						time.Sleep(7 * time.Millisecond)
					}
					if _, ok := <-out; !ok {
						break
					}
					got = append(got, time.Since(start))
				}
				require.Len(t, got, len(items))
				require.LessOrEqual(t, maxInWindow(got, w), n)
				// The second and third items are received at 7ms, so their
				// tokens renew at 17ms, not at 10ms: the fifth and sixth
				// items wait until then.
				require.Equal(t, []time.Duration{0, 7, 7, 10, 17, 17, 20, 27, 27, 30, 37, 37},
					millis(got))
			})
		})
	}
}

// otherLimiter is a Limiter that is not a *Bucket, over one.
type otherLimiter struct{ *Bucket }

// driveWaits calls wait for each item at its arrival time, from a goroutine
// of its own, with a context that ends at the item's cancel time, and
// returns when each call returned (-1 for a cancelled one). Each call is
// queued before the next item arrives, so the arrival order is the order of
// items even for simultaneous arrivals.
func driveWaits(t *testing.T, start time.Time, items []specItem, wait func(ctx context.Context, i int) error) []time.Duration {
	got := make([]time.Duration, len(items))
	var wg sync.WaitGroup
	for i, it := range items {
		sleepUntil(start.Add(it.arrive))
		ctx, cancel := context.Background(), context.CancelFunc(func() {})
		if it.cancel >= 0 {
			ctx, cancel = context.WithDeadline(ctx, start.Add(it.cancel))
		}
		wg.Go(func() {
			defer cancel()
			if err := wait(ctx, i); err != nil {
				assert.ErrorIs(t, err, context.DeadlineExceeded)
				got[i] = -1
				return
			}
			got[i] = time.Since(start)
		})
		synctest.Wait()
	}
	wg.Wait()
	return got
}

// scheduledSource returns a cold Observable that emits items at their
// arrival times after start (an error item for isErr) and completes at end.
// Its buffer holds every item, so back-pressure never delays an arrival.
// It stops early when ctx ends.
func scheduledSource(ctx context.Context, start time.Time, items []specItem, end time.Duration) rxgo.Observable {
	ch := make(chan rxgo.Item, len(items))
	go func() {
		defer close(ch)
		for i, it := range items {
			if sleepCtx(ctx, start.Add(it.arrive)) != nil {
				return
			}
			if it.isErr {
				ch <- rxgo.Error(fmt.Errorf("error item %d", i))
				continue
			}
			ch <- rxgo.Of(i)
		}
		_ = sleepCtx(ctx, start.Add(end))
	}()
	return rxgo.FromChannel(ch)
}

// collect reads out until it closes and returns, for each of n items, the
// time it was received (-1 if never) and the time out closed.
func collect(t *testing.T, start time.Time, n int, out <-chan rxgo.Item) ([]time.Duration, time.Duration) {
	t.Helper()
	got := make([]time.Duration, 0, n)
	for item := range out {
		i := len(got)
		if item.Error() {
			require.EqualError(t, item.E, fmt.Sprintf("error item %d", i))
		} else {
			require.Equal(t, i, item.V, "items out of order")
		}
		got = append(got, time.Since(start))
	}
	done := time.Since(start)
	for len(got) < n {
		got = append(got, -1)
	}
	return got, done
}

// checkWindows asserts SPEC's strict window for every limit.
func checkWindows(t *testing.T, limits []Limit, got []time.Duration) {
	t.Helper()
	for _, l := range limits {
		require.LessOrEqual(t, maxInWindow(got, l.Window), l.N, "more than %v", l)
	}
}

// tokenTimes returns the emission times of the items that took a token.
func tokenTimes(items []specItem, got []time.Duration) []time.Duration {
	var out []time.Duration
	for i, it := range items {
		if !it.isErr {
			out = append(out, got[i])
		}
	}
	return out
}

func countOutcomes(got []time.Duration) (admitted, cancelled uint64) {
	for _, g := range got {
		if g < 0 {
			cancelled++
		} else {
			admitted++
		}
	}
	return admitted, cancelled
}

func millis(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d / time.Millisecond
	}
	return out
}
