package rxthrottle_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
)

// otherKeyed is a KeyedLimiter that is not a *Keyed, as redisstore's
// Keyed is: ThrottleByWith holds a Token of Acquire for each item over it.
type otherKeyed struct{ *rxthrottle.Keyed }

// A downstream slower than the limiter's hold timeout must not make the
// operators over a Limiter that is not a *Bucket emit more than N in a
// window: an item's Token that timed out completed at its deadline, and
// its token came back W after, while the item went later still. Each
// operator, over Per(2, 10s) with a hold timeout of 1s, feeds a consumer
// that sleeps 0 to 3 s (virtual time, seeded) between items; every item
// arrives, in order, and every window of 10 s holds at most 2 emissions.
// Without the renewal (operator_renew.go) the emissions 2 apart came as
// little as 6 s apart.
func TestOperatorsOverTimedTokensKeepTheWindowForSlowConsumers(t *testing.T) {
	for name, op := range renewedOps() {
		t.Run(name, func(t *testing.T) { testSlowConsumer(t, name, op) })
	}
}

// renewedOps returns the operators whose items hold a Token over a Limiter
// that is not a *Keyed, over k's key "a": each returns the operator's own
// output, read by the consumer (a stage between them would receive, and so
// emit, before the consumer).
func renewedOps() map[string]func(k *rxthrottle.Keyed, ctx context.Context, src []int) func() (int, bool) {
	return map[string]func(k *rxthrottle.Keyed, ctx context.Context, src []int) func() (int, bool){
		"ThrottleWith": func(k *rxthrottle.Keyed, ctx context.Context, src []int) func() (int, bool) {
			return observed(ctx, rxthrottle.ThrottleWith(rxthrottle.ForKey(k, "a")), src)
		},
		"ThrottleByWith": func(k *rxthrottle.Keyed, ctx context.Context, src []int) func() (int, bool) {
			return observed(ctx, rxthrottle.ThrottleByWith(otherKeyed{k}, func(any) string { return "a" }), src)
		},
		"ThrottleChan": func(k *rxthrottle.Keyed, ctx context.Context, src []int) func() (int, bool) {
			in := make(chan int, len(src))
			for _, v := range src {
				in <- v
			}
			close(in)
			out, _ := rxthrottle.ThrottleChan(ctx, rxthrottle.ForKey(k, "a"), in)
			return func() (int, bool) { v, ok := <-out; return v, ok }
		},
	}
}

// testSlowConsumer runs op over 20 seeds of TestOperatorsOverTimedTokensKeepTheWindowForSlowConsumers.
func testSlowConsumer(t *testing.T, name string, op func(k *rxthrottle.Keyed, ctx context.Context, src []int) func() (int, bool)) {
	const n, w, hold, items = 2, 10 * time.Second, time.Second, 12
	for seed := range uint64(20) {
		synctest.Test(t, func(t *testing.T) {
			k, err := rxthrottle.NewKeyed(rxthrottle.Per(n, w), rxthrottle.WithHoldTimeout(hold))
			require.NoError(t, err)
			rng := rand.New(rand.NewPCG(seed, 1))
			src := make([]int, items)
			for i := range src {
				src[i] = i
			}
			start := time.Now()
			var at []time.Duration
			next := op(k, t.Context(), src)
			for v, ok := next(); ok; v, ok = next() {
				require.Equal(t, len(at), v, "%s, seed %d: in order", name, seed)
				at = append(at, time.Since(start))
				time.Sleep(time.Duration(rng.Int64N(int64(3 * hold))))
			}
			require.Len(t, at, items, "%s, seed %d: every item arrives", name, seed)
			for i := n; i < len(at); i++ {
				require.GreaterOrEqual(t, at[i]-at[i-n], w, "%s, seed %d: emissions %v: %d in a window", name, seed, at, n+1)
			}
		})
	}
}

// observed subscribes op to the values of src and returns a function that
// reads the output's next value, false at its end or at an error item.
func observed(ctx context.Context, op func(rxgo.Observable) rxgo.Observable, src []int) func() (int, bool) {
	vs := make([]any, len(src))
	for i, v := range src {
		vs[i] = v
	}
	out := op(rxgo.Just(vs...)()).Observe(rxgo.WithContext(ctx))
	return func() (int, bool) {
		item, ok := <-out
		if !ok || item.E != nil {
			return 0, false
		}
		return item.V.(int), true
	}
}

// The renewal runs on the clock the tokens time out on: a Keyed built with
// WithClock times its holds out on that clock, and ForKey's Limiter over
// it (and a KeyedLimiter wrapping it) must renew an item's Token on it
// too. Over Per(2, 10s) with a hold timeout of 1s on a mock clock moved in
// steps of 100 ms, a consumer takes item 0 at once and item 1 only at 5 s,
// then each as it comes; every window of 10 s (mock time) holds at most 2
// emissions. With the renewal on the real clock, item 1's Token timed out
// at 1 s, its token came back at 11 s, and items 1 to 3 went at 5, 10 and
// 11 s.
func TestOperatorsRenewOnTheLimitersClock(t *testing.T) {
	for name, op := range renewedOps() {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const n, w, hold, items = 2, 10 * time.Second, time.Second, 4
				mock := clock.NewMock()
				k, err := rxthrottle.NewKeyed(rxthrottle.Per(n, w), rxthrottle.WithHoldTimeout(hold), rxthrottle.WithClock(mock))
				require.NoError(t, err)
				start := mock.Now()
				next := op(k, t.Context(), []int{0, 1, 2, 3})
				may := make(chan struct{}, items)
				var mu sync.Mutex
				var got []int
				var at []time.Duration
				go func() {
					for range may {
						v, ok := next()
						if !ok {
							return
						}
						mu.Lock()
						got, at = append(got, v), append(at, mock.Now().Sub(start))
						mu.Unlock()
					}
				}()
				may <- struct{}{} // item 0 at once
				for step := range 300 {
					if step == 50 { // item 1 at 5 s, then each as it comes
						for range items - 1 {
							may <- struct{}{}
						}
					}
					synctest.Wait()
					mock.Add(100 * time.Millisecond)
				}
				close(may)
				synctest.Wait()
				mu.Lock()
				defer mu.Unlock()
				require.Equal(t, []int{0, 1, 2, 3}, got, "%s: every item arrives, in order (at %v)", name, at)
				for i := n; i < len(at); i++ {
					require.GreaterOrEqual(t, at[i]-at[i-n], w, "%s: emissions %v: %d in a window", name, at, n+1)
				}
			})
		})
	}
}

// ThrottleByWith over a KeyedLimiter that is not a *Keyed takes one token
// at a time for a key's items not yet taken downstream: with a consumer
// slower than the hold timeout, every token the limiter counts is an
// item's (the tokens changed by the renewal go back unused), none one that
// timed out on an item waiting behind another of its key. Per(2, 10s),
// hold timeout 1s, consumer sleeping 0-3 s (virtual time, seeded).
// Before, an item granted behind the one being offered held its token
// until it timed out, and took a new one when its turn came: Admitted
// counted up to twice the items.
func TestThrottleByWithWastesNoTokenOnASlowConsumer(t *testing.T) {
	const n, w, hold, items = 2, 10 * time.Second, time.Second, 12
	for seed := range uint64(20) {
		synctest.Test(t, func(t *testing.T) {
			k, err := rxthrottle.NewKeyed(rxthrottle.Per(n, w), rxthrottle.WithHoldTimeout(hold))
			require.NoError(t, err)
			rng := rand.New(rand.NewPCG(seed, 2))
			src := make([]int, items)
			for i := range src {
				src[i] = i
			}
			next := observed(t.Context(), rxthrottle.ThrottleByWith(otherKeyed{k}, func(any) string { return "a" }), src)
			got := 0
			for v, ok := next(); ok; v, ok = next() {
				require.Equal(t, got, v, "seed %d: in order", seed)
				got++
				time.Sleep(time.Duration(rng.Int64N(int64(3 * hold))))
			}
			require.Equal(t, items, got, "seed %d: every item arrives", seed)
			require.Equal(t, uint64(items), k.Stats().Admitted, "seed %d: tokens counted, one per item", seed)
		})
	}
}
