package rxthrottle

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rxthrottle/rxthrottle/internal/specmodel"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The held-token property tests draw random limits, costs, spacings, hold
// timeouts and callers (plain waits, holds of random length released or
// given back unused, holds never released, waits cancelled before their
// grant) and compare every departure, to the nanosecond of virtual time,
// with the reference model of SPEC.md (internal/specmodel).

// heldCase is one random case of the reference model.
type heldCase struct{ specmodel.Case }

func randomHeldCase(r *rand.Rand, maxLimits int) heldCase {
	return heldCase{specmodel.RandomCase(r, maxLimits)}
}

func (c heldCase) options(opts ...Option) (Limit, []Option) {
	for _, l := range c.Config.Limits[1:] {
		opts = append(opts, WithLimit(Per(l.N, l.Window)))
	}
	opts = append(opts, WithSpacing(c.Config.Spacing), WithHoldTimeout(c.Config.HoldTimeout))
	l := c.Config.Limits[0]
	return Per(l.N, l.Window), opts
}

// acquirer is Bucket's or Keyed's AcquireN and WaitN for one caller.
type acquirer struct {
	acquire func(ctx context.Context, n int) (Token, error)
	wait    func(ctx context.Context, n int) error
}

// bucketAcquirer is b's acquirer for caller i: AcquireN and WaitN, or, for
// every other caller, Acquire and Wait when it costs one token, so that the
// model checks their hot paths too (wait_hotpath.go, wait_fastpath.go),
// which AcquireN and WaitN never take.
func bucketAcquirer(b *Bucket, i int) acquirer {
	if i%2 == 1 {
		return acquirer{b.AcquireN, b.WaitN}
	}
	return acquirer{
		func(ctx context.Context, n int) (Token, error) {
			if n == 1 {
				return b.Acquire(ctx)
			}
			return b.AcquireN(ctx, n)
		},
		func(ctx context.Context, n int) error {
			if n == 1 {
				return b.Wait(ctx)
			}
			return b.WaitN(ctx, n)
		},
	}
}

// driveHeld runs the callers of c from start, each at its arrival time, and
// returns their departures (-1 for a cancelled wait). Each holder ends its
// hold as its item says.
func driveHeld(t *testing.T, start time.Time, c heldCase, with func(i int) acquirer) []time.Duration {
	got := make([]time.Duration, len(c.Items))
	var wg sync.WaitGroup
	for i, it := range c.Items {
		sleepUntil(start.Add(it.Arrive))
		ctx, cancel := context.Background(), context.CancelFunc(func() {})
		if it.Cancel >= 0 {
			ctx, cancel = context.WithDeadline(ctx, start.Add(it.Cancel))
		}
		a := with(i)
		wg.Go(func() {
			defer cancel()
			var tok Token
			var err error
			if c.Acquire[i] {
				tok, err = a.acquire(ctx, it.Cost)
			} else {
				err = a.wait(ctx, it.Cost)
			}
			if err != nil {
				assert.ErrorIs(t, err, context.DeadlineExceeded)
				got[i] = -1
				return
			}
			got[i] = time.Since(start)
			if !c.Acquire[i] || it.Hold < 0 {
				return // a plain wait, or a hold nobody ends
			}
			time.Sleep(it.Hold)
			if it.Unused {
				tok.Cancel()
			} else {
				tok.Release()
			}
			tok.Release() // idempotent: changes nothing
		})
		synctest.Wait()
	}
	wg.Wait()
	return got
}

func TestPropertyBucketHeldTokensMatchSpec(t *testing.T) {
	for seed := range propertyCases {
		r := rand.New(rand.NewPCG(uint64(seed), 7))
		c := randomHeldCase(r, 3)
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				limit, opts := c.options()
				b, err := NewBucket(limit, opts...)
				require.NoError(t, err)
				got := driveHeld(t, start, c, func(i int) acquirer { return bucketAcquirer(b, i) })
				want := specmodel.Schedule(c.Config, c.Items)
				require.Equal(t, want, got, "config %+v", c.Config)
				time.Sleep(time.Hour) // every hold ends, by its caller or its timeout
				st := b.Stats()
				require.Zero(t, st.Held, "Stats().Held")
				require.Zero(t, st.Queued, "Stats().Queued")
				require.Equal(t, b.win.smallestN(), st.Free, "every token is back")
			})
		})
	}
}

// TestPropertyKeyedHeldTokensMatchSpec spreads the callers over three keys:
// each key keeps the model's schedule over its own callers alone.
func TestPropertyKeyedHeldTokensMatchSpec(t *testing.T) {
	for seed := range propertyCases / 3 {
		r := rand.New(rand.NewPCG(uint64(seed), 8))
		c := randomHeldCase(r, 2)
		keys := make([]string, len(c.Items))
		for i := range keys {
			keys[i] = fmt.Sprint("k", r.IntN(3))
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				limit, opts := c.options()
				k, err := NewKeyed(limit, opts...)
				require.NoError(t, err)
				got := driveHeld(t, start, c, func(i int) acquirer {
					key := keys[i]
					return acquirer{
						func(ctx context.Context, n int) (Token, error) { return k.AcquireN(ctx, key, n) },
						func(ctx context.Context, n int) error { return k.WaitN(ctx, key, n) },
					}
				})
				for _, key := range []string{"k0", "k1", "k2"} {
					var sub []specmodel.Item
					gotSub := []time.Duration{}
					for i := range c.Items {
						if keys[i] == key {
							sub = append(sub, c.Items[i])
							gotSub = append(gotSub, got[i])
						}
					}
					require.Equal(t, specmodel.Schedule(c.Config, sub), gotSub, "key %s, config %+v", key, c.Config)
				}
			})
		})
	}
}
