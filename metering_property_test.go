package rxthrottle

import (
	"context"
	"errors"
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

// The metering property tests draw random cases that mix every rule of
// SPEC.md (a concurrency cap, priorities, a queue bound, deadlines decided
// at arrival and plain cancellations, ReleaseN of less, as much or more than
// acquired, holds released, given back and timed out, weights, spacing,
// several limits) and compare every outcome, to the nanosecond of virtual
// time, with internal/specmodel's simulation.

const meteredCases = 150

var allFeatures = specmodel.Features{Concurrency: true, Priorities: true, QueueBound: true, Deadlines: true, ReleaseN: true}

// meteredOptions returns the options of c's configuration.
func meteredOptions(cfg specmodel.Config) (Limit, []Option) {
	var opts []Option
	for _, l := range cfg.Limits[1:] {
		opts = append(opts, WithLimit(Per(l.N, l.Window)))
	}
	opts = append(opts, WithSpacing(cfg.Spacing), WithHoldTimeout(cfg.HoldTimeout))
	if cfg.Concurrency > 0 {
		opts = append(opts, WithConcurrency(cfg.Concurrency))
	}
	if cfg.QueueBounded {
		opts = append(opts, WithMaxQueue(cfg.MaxQueue))
	}
	l := cfg.Limits[0]
	return Per(l.N, l.Window), opts
}

// driveMetered runs the callers of items from start, each at its arrival
// once everything due at that instant has happened (as the model orders
// it), ends each hold as its item says, and returns each caller's outcome.
func driveMetered(t *testing.T, start time.Time, items []specmodel.Item, want []specmodel.Outcome, with func(i int) acquirer) []specmodel.Outcome {
	got := make([]specmodel.Outcome, len(items))
	var wg sync.WaitGroup
	for i, it := range items {
		sleepUntil(start.Add(it.Arrive))
		synctest.Wait()
		ctx, cancel := specmodel.FairContext(start, it, WithPriority, WithTenant)
		a := with(i)
		wg.Go(func() {
			defer cancel()
			got[i] = meteredCall(t, ctx, start, i, it, a, want[i])
		})
		synctest.Wait()
	}
	wg.Wait()
	return got
}

// meteredCall makes caller i's call and returns its outcome as the model
// states it.
func meteredCall(t *testing.T, ctx context.Context, start time.Time, i int, it specmodel.Item, a acquirer, want specmodel.Outcome) specmodel.Outcome {
	var tok Token
	var err error
	if it.Acquire {
		tok, err = a.acquire(ctx, max(it.Cost, 1))
	} else {
		err = a.wait(ctx, max(it.Cost, 1))
	}
	o := specmodel.Outcome{Depart: -1}
	switch {
	case err == nil:
		o.Result, o.Depart = specmodel.Departed, time.Since(start)
	case errors.Is(err, ErrDeadline) && errors.Is(err, context.DeadlineExceeded):
		o.Result = specmodel.DeadlineRefused
	case errors.Is(err, ErrQueueFull):
		o.Result = specmodel.QueueFull
	case errors.Is(err, ctx.Err()):
		o.Result = specmodel.Cancelled
	default:
		t.Errorf("caller %d: unexpected error %v", i, err)
	}
	// What the model says of the hold's end is checked through ReleaseN's
	// error and the Stats.
	o.TimedOut, o.GivenBack = want.TimedOut, want.GivenBack
	if err != nil || !it.Acquire || it.Hold < 0 {
		return o
	}
	time.Sleep(it.Hold)
	switch {
	case it.Unused:
		tok.Cancel()
	case it.ReleaseN:
		if err := tok.ReleaseN(it.Used); want.TimedOut {
			assert.ErrorIs(t, err, ErrTokenEnded, "caller %d: ReleaseN(%d) after the hold timeout", i, it.Used)
		} else {
			assert.NoError(t, err, "caller %d: ReleaseN(%d)", i, it.Used)
		}
	default:
		tok.Release()
	}
	return o
}

func TestPropertyMeteredBucketMatchesModel(t *testing.T) {
	for seed := range meteredCases {
		r := rand.New(rand.NewPCG(uint64(seed), 21))
		c := specmodel.RandomMeteredCase(r, 3, allFeatures)
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				limit, opts := meteredOptions(c.Config)
				b, err := NewBucket(limit, opts...)
				require.NoError(t, err)
				want := specmodel.Run(c.Config, c.Items)
				got := driveMetered(t, start, c.Items, want, func(i int) acquirer { return bucketAcquirer(b, i) })
				require.Equal(t, want, got, "config %+v\nitems %+v", c.Config, c.Items)
				time.Sleep(time.Hour) // every hold ends, by its caller or its timeout
				st := b.Stats()
				admitted, cancelled, refused := specmodel.Counts(want)
				require.Equal(t, [3]uint64{admitted, cancelled, refused}, [3]uint64{st.Admitted, st.Cancelled, st.Refused}, "Stats admitted, cancelled, refused")
				require.Zero(t, st.Held, "Stats().Held")
				require.Zero(t, st.Queued, "Stats().Queued")
			})
		})
	}
}

// TestPropertyMeteredKeyedMatchesModel spreads the callers over three keys,
// one of them with limits of its own (WithKeyLimits): each key keeps the
// model's schedule over its own callers alone, under its own limits.
func TestPropertyMeteredKeyedMatchesModel(t *testing.T) {
	for seed := range meteredCases / 3 {
		r := rand.New(rand.NewPCG(uint64(seed), 22))
		c := specmodel.RandomMeteredCase(r, 2, allFeatures)
		keys := make([]string, len(c.Items))
		for i := range keys {
			keys[i] = fmt.Sprint("k", r.IntN(3))
		}
		// k2's tier: the first limit doubled, the window halved.
		tierCfg := c.Config
		tierCfg.Limits = append([]specmodel.Limit(nil), c.Config.Limits...)
		tierCfg.Limits[0] = specmodel.Limit{N: 2 * c.Config.Limits[0].N, Window: max(c.Config.Limits[0].Window/2, time.Millisecond)}
		tier := func(key string) []Limit {
			if key != "k2" {
				return nil
			}
			var ls []Limit
			for _, l := range tierCfg.Limits {
				ls = append(ls, Per(l.N, l.Window))
			}
			return ls
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				limit, opts := meteredOptions(c.Config)
				k, err := NewKeyed(limit, append(opts, WithKeyLimits(tier))...)
				require.NoError(t, err)
				want := make([]specmodel.Outcome, len(c.Items))
				for _, key := range []string{"k0", "k1", "k2"} {
					cfg := c.Config
					if key == "k2" {
						cfg = tierCfg
					}
					var sub []specmodel.Item
					var idx []int
					for i := range c.Items {
						if keys[i] == key {
							sub, idx = append(sub, c.Items[i]), append(idx, i)
						}
					}
					for j, o := range specmodel.Run(cfg, sub) {
						want[idx[j]] = o
					}
				}
				got := driveMetered(t, start, c.Items, want, func(i int) acquirer {
					key := keys[i]
					return acquirer{
						func(ctx context.Context, n int) (Token, error) { return k.AcquireN(ctx, key, n) },
						func(ctx context.Context, n int) error { return k.WaitN(ctx, key, n) },
					}
				})
				require.Equal(t, want, got, "config %+v, keys %v", c.Config, keys)
				st := k.Stats()
				admitted, cancelled, refused := specmodel.Counts(want)
				require.Equal(t, [3]uint64{admitted, cancelled, refused}, [3]uint64{st.Admitted, st.Cancelled, st.Refused}, "Stats admitted, cancelled, refused")
			})
		})
	}
}
