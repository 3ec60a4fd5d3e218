package rxthrottle

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle/internal/specmodel"
)

// mapCase is a generated ThrottleMap case: the arrivals (error items
// included), how long fn runs for each item and whether it fails.
type mapCase struct {
	limits []Limit
	items  []specItem
	dur    []time.Duration
	fails  []bool
	end    time.Duration // the source completes then
}

func randomMapCase(r *rand.Rand) mapCase {
	limits, items := randomCase(r, 3, true)
	c := mapCase{limits: limits, items: items, dur: make([]time.Duration, len(items)), fails: make([]bool, len(items))}
	for i := range items {
		items[i].cancel = -1
		// Whole milliseconds, so that completions coincide with arrivals and
		// renewals; a few calls take no time at all.
		c.dur[i] = time.Duration(r.IntN(30)) * time.Millisecond
		c.fails[i] = r.IntN(7) == 0
	}
	c.end = time.Duration(r.IntN(50)) * time.Millisecond
	if len(items) > 0 {
		c.end += items[len(items)-1].arrive
	}
	return c
}

// mapSpec returns, by SPEC.md's held-token formula, when each item's call
// starts (its departure, -1 for an error item, which makes no call) and when
// each output goes:
//
//	d_i = max(a_i, d_(i-1), max over k of (c*_(i-N_k) + W_k))
//
// where c*_1 <= c*_2 <= ... are the completions c_j = d_j + dur_j of the
// earlier calls in time order, and output i goes at max(c_i, out_(i-1))
// (an error item: max(a_i, out_(i-1))).
func mapSpec(c mapCase) (departs, outs []time.Duration) {
	departs = make([]time.Duration, len(c.items))
	outs = make([]time.Duration, len(c.items))
	var completions []time.Duration // of the calls so far, sorted
	lastDepart, lastOut := time.Duration(-1<<63), time.Duration(-1<<63)
	for i, it := range c.items {
		if it.isErr {
			departs[i] = -1
			outs[i] = max(it.arrive, lastOut)
			lastOut = outs[i]
			continue
		}
		d := max(it.arrive, lastDepart)
		calls := len(completions) + 1 // this one is call number calls
		for _, l := range c.limits {
			if calls > l.N {
				d = max(d, completions[calls-l.N-1]+l.Window)
			}
		}
		departs[i], lastDepart = d, d
		done := d + c.dur[i]
		at, _ := slices.BinarySearch(completions, done)
		completions = slices.Insert(completions, at, done)
		outs[i] = max(done, lastOut)
		lastOut = outs[i]
	}
	return departs, outs
}

func TestPropertyThrottleMapMatchesSpec(t *testing.T) {
	for seed := range propertyCases {
		r := rand.New(rand.NewPCG(uint64(seed), 9))
		c := randomMapCase(r)
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				var mu sync.Mutex
				departs := make([]time.Duration, len(c.items))
				for i := range departs {
					departs[i] = -1
				}
				fn := func(ctx context.Context, v any) (any, error) {
					i := v.(int)
					mu.Lock()
					departs[i] = time.Since(start)
					mu.Unlock()
					time.Sleep(c.dur[i])
					if c.fails[i] {
						return nil, fmt.Errorf("fn error %d", i)
					}
					return fmt.Sprint("out ", i), nil
				}
				src := scheduledSource(t.Context(), start, c.items, c.end)
				out := ThrottleMap(c.limits[0], fn, withLimits(c.limits[1:])...)(src).Observe()
				outs := []time.Duration{}
				for item := range out {
					i := len(outs)
					switch {
					case c.items[i].isErr:
						require.EqualError(t, item.E, fmt.Sprintf("error item %d", i))
					case c.fails[i]:
						require.EqualError(t, item.E, fmt.Sprintf("fn error %d", i))
					default:
						require.Equal(t, fmt.Sprint("out ", i), item.V)
					}
					outs = append(outs, time.Since(start))
				}
				done := time.Since(start)

				wantDeparts, wantOuts := mapSpec(c)
				require.Equal(t, modelDepartures(c), wantDeparts, "mapSpec against internal/specmodel")
				mu.Lock()
				defer mu.Unlock()
				require.Equal(t, wantDeparts, departs, "departures (fn starts); limits %v", c.limits)
				require.Equal(t, wantOuts, outs, "outputs; limits %v", c.limits)
				last := c.end
				if len(outs) > 0 {
					last = max(last, outs[len(outs)-1])
				}
				require.Equal(t, last, done, "completion")
			})
		})
	}
}

// TestPropertyThrottleMapCancel cancels the subscription at a random
// instant: no call starts after it, every call's context ends at that
// instant, the outputs before it are SPEC's, and every goroutine ends
// (synctest fails the test otherwise).
func TestPropertyThrottleMapCancel(t *testing.T) {
	for seed := range propertyCases / 3 {
		r := rand.New(rand.NewPCG(uint64(seed), 10))
		c := randomMapCase(r)
		cancelAt := time.Duration(r.IntN(100))*time.Millisecond + time.Millisecond/2
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				ctx, cancel := context.WithCancel(context.Background())
				time.AfterFunc(cancelAt, cancel)
				var mu sync.Mutex
				var late []string
				fn := func(ctx context.Context, v any) (any, error) {
					i := v.(int)
					if s := time.Since(start); s > cancelAt {
						mu.Lock()
						late = append(late, fmt.Sprintf("call %d started at %v", i, s))
						mu.Unlock()
					}
					select {
					case <-time.After(c.dur[i]):
					case <-ctx.Done():
						if s := time.Since(start); s != cancelAt {
							mu.Lock()
							late = append(late, fmt.Sprintf("call %d: context ended at %v", i, s))
							mu.Unlock()
						}
						return nil, ctx.Err()
					}
					return i, nil
				}
				src := scheduledSource(ctx, start, c.items, c.end)
				out := ThrottleMap(c.limits[0], fn, withLimits(c.limits[1:])...)(src).Observe(rxgo.WithContext(ctx))
				outs := []time.Duration{}
				for range out {
					outs = append(outs, time.Since(start))
				}
				_, wantOuts := mapSpec(c)
				want := []time.Duration{}
				for _, o := range wantOuts {
					if o < cancelAt {
						want = append(want, o)
					}
				}
				require.Equal(t, want, outs)
				mu.Lock()
				defer mu.Unlock()
				require.Empty(t, late)
			})
		})
	}
}

// modelDepartures returns the departures of c by internal/specmodel, the
// reference model the core's property tests use, with -1 for error items:
// it must agree with mapSpec.
func modelDepartures(c mapCase) []time.Duration {
	cfg := specmodel.Config{HoldTimeout: DefaultHoldTimeout}
	for _, l := range c.limits {
		cfg.Limits = append(cfg.Limits, specmodel.Limit{N: l.N, Window: l.Window})
	}
	var items []specmodel.Item
	for i, it := range c.items {
		if !it.isErr {
			items = append(items, specmodel.Item{Arrive: it.arrive, Cancel: -1, Hold: c.dur[i]})
		}
	}
	model := specmodel.Schedule(cfg, items)
	out := make([]time.Duration, len(c.items))
	k := 0
	for i, it := range c.items {
		if it.isErr {
			out[i] = -1
			continue
		}
		out[i] = model[k]
		k++
	}
	return out
}
