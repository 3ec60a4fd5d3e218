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
	kind   []failKind    // how a failing call's error is marked
	bound  time.Duration // WithInFlightBound
	end    time.Duration // the source completes then
}

// failKind is what a failing call's error says of its request.
type failKind int

const (
	failAnswered failKind = iota // Answered: released at the error
	failInFlight                 // unmarked: held for the in-flight bound
	failNotSent                  // NotSent: given back at the error
)

// fnError returns the error of a failing call i of c, marked by its kind.
func (c mapCase) fnError(i int) error {
	err := fmt.Errorf("fn error %d", i)
	switch c.kind[i] {
	case failAnswered:
		return Answered(err)
	case failNotSent:
		return NotSent(err)
	}
	return err
}

// hasNotSent reports whether a call of c gives its token back, which
// mapSpec does not model (internal/specmodel does).
func (c mapCase) hasNotSent() bool {
	for i, f := range c.fails {
		if f && c.kind[i] == failNotSent {
			return true
		}
	}
	return false
}

// completion returns when call i, departed at d, ends its token: at its
// return, or for an error that may still arrive, the in-flight bound
// later.
func (c mapCase) completion(i int, d time.Duration) time.Duration {
	if c.fails[i] && c.kind[i] == failInFlight {
		return d + c.dur[i] + c.bound
	}
	return d + c.dur[i]
}

func randomMapCase(r *rand.Rand) mapCase {
	limits, items := randomCase(r, 3, true)
	c := mapCase{limits: limits, items: items, dur: make([]time.Duration, len(items)), fails: make([]bool, len(items)),
		kind: make([]failKind, len(items)), bound: time.Duration(r.IntN(21)) * time.Millisecond}
	for i := range items {
		items[i].cancel = -1
		// Whole milliseconds, so that completions coincide with arrivals and
		// renewals; a few calls take no time at all.
		c.dur[i] = time.Duration(r.IntN(30)) * time.Millisecond
		c.fails[i] = r.IntN(7) == 0
		c.kind[i] = failKind(r.IntN(3))
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
// earlier calls in time order (plus the in-flight bound for an error that
// may still arrive), and output i goes at max(d_i + dur_i, out_(i-1))
// (an error item: max(a_i, out_(i-1))). Calls that give their token back
// (NotSent) are not modelled here.
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
		done := c.completion(i, d)
		at, _ := slices.BinarySearch(completions, done)
		completions = slices.Insert(completions, at, done)
		outs[i] = max(d+c.dur[i], lastOut)
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
						return nil, c.fnError(i)
					}
					return fmt.Sprint("out ", i), nil
				}
				src := scheduledSource(t.Context(), start, c.items, c.end)
				out := ThrottleMap(c.limits[0], fn, withLimits(c.limits[1:], WithInFlightBound(c.bound))...)(src).Observe()
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

				wantDeparts := modelDepartures(c)
				wantOuts := mapOuts(c, wantDeparts)
				if !c.hasNotSent() {
					specDeparts, specOuts := mapSpec(c)
					require.Equal(t, wantDeparts, specDeparts, "mapSpec against internal/specmodel")
					require.Equal(t, wantOuts, specOuts, "mapSpec's outputs")
				}
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
		clear(c.fails) // its calls return their item, or ctx.Err() at the cancellation
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
			hold := c.dur[i]
			if c.fails[i] && c.kind[i] == failInFlight {
				hold += c.bound
			}
			unused := c.fails[i] && c.kind[i] == failNotSent
			items = append(items, specmodel.Item{Arrive: it.arrive, Cancel: -1, Hold: hold, Unused: unused})
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

// mapOuts returns when each output of c goes, given the departures: output
// i at max(d_i + dur_i, out_(i-1)), an error item at max(a_i, out_(i-1)).
func mapOuts(c mapCase, departs []time.Duration) []time.Duration {
	outs := make([]time.Duration, len(c.items))
	last := time.Duration(-1 << 63)
	for i, it := range c.items {
		if it.isErr {
			outs[i] = max(it.arrive, last)
		} else {
			outs[i] = max(departs[i]+c.dur[i], last)
		}
		last = outs[i]
	}
	return outs
}
