// Package storetest checks that an implementation of guard.Store follows the
// rules documented on guard.Store, to the nanosecond. It is a test helper,
// like testing/fstest: import it only from _test.go files.
//
// The suite gives Hit its own now values, so a store that reads its own clock
// (as a store shared between processes may) must be tested in a mode where it
// takes now from the caller.
package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/guard"
	"github.com/stretchr/testify/require"
)

// T0 returns the instant the suite's virtual time starts at; step times
// are offsets from it. It is a function, not a variable, so that no test
// can move it under another.
func T0() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }

// Step is one Hit and the Result it must return.
type Step struct {
	At   time.Duration // offset from T0
	Key  string
	Want guard.Result
}

// RunSteps hits s with each step in order, under p, and fails the test at the
// first result that differs from the step's Want.
func RunSteps(t testing.TB, s guard.Store, p guard.Policy, steps []Step) {
	t.Helper()
	ctx := context.Background()
	for i, st := range steps {
		got, err := s.Hit(ctx, st.Key, p, T0().Add(st.At))
		require.NoError(t, err, "step %d: Hit(%q) at %v", i, st.Key, st.At)
		require.Equal(t, st.Want, got, "step %d: Hit(%q) at %v = %+v, want %+v", i, st.Key, st.At, got, st.Want)
	}
}

// Run runs the whole suite against the stores that newStore returns, a new
// empty one for each subtest.
func Run(t *testing.T, newStore func(t *testing.T) guard.Store) {
	for _, c := range Cases() {
		t.Run(c.Name, func(t *testing.T) {
			RunSteps(t, newStore(t), c.Policy, c.Steps)
		})
	}
	t.Run("concurrent hits on one key", func(t *testing.T) {
		testConcurrent(t, newStore(t))
	})
}

// Case is a named step table under one policy.
type Case struct {
	Name   string
	Policy guard.Policy
	Steps  []Step
}

func allowed(count int, reset time.Duration) guard.Result {
	return guard.Result{Allowed: true, Count: count, Reset: reset}
}

func blocks(count int, reset time.Duration) guard.Result {
	return guard.Result{Blocked: true, Count: count, Reset: reset}
}

func refused(count int, reset time.Duration) guard.Result {
	return guard.Result{Count: count, Reset: reset}
}

const s = time.Second

// Cases returns the suite's step tables.
func Cases() []Case {
	return append(threePerMinuteCases(), policyCases()...)
}

// threePerMinuteCases are the tables under 3 per minute, blocking for 5
// minutes.
func threePerMinuteCases() []Case {
	p3 := guard.Policy{Limit: rxthrottle.Per(3, 60*s), Block: 300 * s}
	return []Case{
		{"block and exact unblocking", p3, []Step{
			{0, "a", allowed(1, 60*s)},
			{10 * s, "a", allowed(2, 50*s)},
			{20 * s, "a", allowed(3, 40*s)},
			{30 * s, "a", blocks(4, 300*s)},  // until = 330 s
			{30 * s, "a", refused(4, 300*s)}, // refused: not counted
			{60 * s, "a", refused(4, 270*s)}, // the window's end frees nothing
			{330*s - 1, "a", refused(4, 1)},  // last refused instant
			{330 * s, "a", allowed(1, 60*s)}, // fresh at exactly until
			{330 * s, "a", allowed(2, 60*s)}, // same instant, same window
			{390*s - 1, "a", allowed(3, 1)},  // window [330 s, 390 s)
			{390 * s, "a", allowed(1, 60*s)}, // new window, no block
		}},
		{"window expires at its exact end", p3, []Step{
			{0, "a", allowed(1, 60*s)},
			{1 * s, "a", allowed(2, 59*s)},
			{60*s - 1, "a", allowed(3, 1)},
			{60 * s, "a", allowed(1, 60*s)},
			{61 * s, "a", allowed(2, 59*s)},
		}},
		{"a burst at one instant", p3, []Step{
			{5 * s, "a", allowed(1, 60*s)},
			{5 * s, "a", allowed(2, 60*s)},
			{5 * s, "a", allowed(3, 60*s)},
			{5 * s, "a", blocks(4, 300*s)},
			{5 * s, "a", refused(4, 300*s)},
			{305 * s, "a", allowed(1, 60*s)},
		}},
		{"keys are independent", p3, []Step{
			{0, "a", allowed(1, 60*s)},
			{0, "a", allowed(2, 60*s)},
			{0, "a", allowed(3, 60*s)},
			{0, "a", blocks(4, 300*s)},
			{1 * s, "b", allowed(1, 60*s)},
			{2 * s, "a", refused(4, 298*s)},
			{2 * s, "b", allowed(2, 59*s)},
			{61 * s, "b", allowed(1, 60*s)},
			{61 * s, "a", refused(4, 239*s)},
		}},
		{"the empty-looking keys are keys too", p3, []Step{
			{0, " ", allowed(1, 60*s)},
			{0, "  ", allowed(1, 60*s)},
			{0, "ü", allowed(1, 60*s)},
		}},
	}
}

// policyCases are the tables of the edges of a policy: a limit of 1, no
// block, a block shorter or longer than the rest of the window, windows of
// nanoseconds.
func policyCases() []Case {
	return []Case{
		{"limit 1", guard.Policy{Limit: rxthrottle.Per(1, 10*s), Block: 20 * s}, []Step{
			{0, "a", allowed(1, 10*s)},
			{1 * s, "a", blocks(2, 20*s)},
			{21 * s, "a", allowed(1, 10*s)},
			{31 * s, "a", allowed(1, 10*s)},
		}},
		{"block 0 is a plain fixed window", guard.Policy{Limit: rxthrottle.Per(2, 10*s)}, []Step{
			{0, "a", allowed(1, 10*s)},
			{1 * s, "a", allowed(2, 9*s)},
			{4 * s, "a", blocks(3, 6*s)},
			{9 * s, "a", refused(3, 1*s)},
			{10 * s, "a", allowed(1, 10*s)},
		}},
		{"block shorter than the rest of the window lasts to the window's end", guard.Policy{Limit: rxthrottle.Per(1, 60*s), Block: 5 * s}, []Step{
			{0, "a", allowed(1, 60*s)},
			{10 * s, "a", blocks(2, 50*s)},
			{16 * s, "a", refused(2, 44*s)},
			{60 * s, "a", allowed(1, 60*s)},
		}},
		{"block longer than the rest of the window", guard.Policy{Limit: rxthrottle.Per(1, 60*s), Block: 5 * s}, []Step{
			{0, "a", allowed(1, 60*s)},
			{58 * s, "a", blocks(2, 5*s)},
			{62 * s, "a", refused(2, 1*s)},
			{63 * s, "a", allowed(1, 60*s)},
		}},
		{"nanosecond windows", guard.Policy{Limit: rxthrottle.Per(2, 3), Block: 5}, []Step{
			{0, "a", allowed(1, 3)},
			{1, "a", allowed(2, 2)},
			{2, "a", blocks(3, 5)},
			{6, "a", refused(3, 1)},
			{7, "a", allowed(1, 3)},
		}},
	}
}

// testConcurrent hits one key from many goroutines at one instant: exactly
// Limit hits are allowed, exactly one blocks the key, and the others are
// refused without counting.
func testConcurrent(t *testing.T, st guard.Store) {
	const goroutines, each = 16, 25
	p := guard.Policy{Limit: rxthrottle.Per(100, time.Minute), Block: time.Hour}
	var (
		mu                        sync.Mutex
		nAllowed, nBlocks, nRefus int
		counts                    = map[int]bool{}
		wg                        sync.WaitGroup
	)
	for range goroutines {
		wg.Go(func() {
			for range each {
				r, err := st.Hit(context.Background(), "k", p, T0())
				mu.Lock()
				switch {
				case err != nil:
					t.Errorf("Hit(%q): %v", "k", err)
				case r.Allowed:
					nAllowed++
					if counts[r.Count] {
						t.Errorf("count %d returned twice", r.Count)
					}
					counts[r.Count] = true
				case r.Blocked:
					nBlocks++
				default:
					nRefus++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	require.Equal(t, p.Limit.N, nAllowed, "allowed")
	require.Equal(t, 1, nBlocks, "blocks")
	require.Equal(t, goroutines*each-p.Limit.N-1, nRefus, "refused")
	r, err := st.Hit(context.Background(), "k", p, T0().Add(time.Hour))
	require.NoError(t, err)
	require.Equal(t, guard.Result{Allowed: true, Count: 1, Reset: time.Minute}, r, "after the block")
}
