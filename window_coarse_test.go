package rxthrottle

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle/internal/specmodel"
)

// forceCoarse gives w coarse history with a ring of ringCap, whatever its
// limits: the tests' way to make small limits look back through the runs.
func forceCoarse(w *window, ringCap int) {
	w.extended().coarse = newCoarse(w.largestW(), ringCap, coarseRuns)
	w.coarse().forced = true
	w.setCoarse()
}

// TestCoarseWindowMatchesExact runs the same random completions (Waits,
// releases, late hold timeouts inserted in their place, debts, pauses and
// departures for the spacing) through a window that remembers each
// completion and one with coarse history and a ring of 1 to 4: at
// millisecond instants, a grain or more apart, every answer a limiter asks
// for (when a caller may go, how many tokens are free, the deadline rule's
// bound) is the same, to the nanosecond.
func TestCoarseWindowMatchesExact(t *testing.T) {
	for seed := range uint64(500) {
		r := rand.New(rand.NewPCG(seed, 5))
		limits := []Limit{Per(1+r.IntN(8), time.Duration(1+r.IntN(20))*time.Millisecond)}
		if r.IntN(2) == 0 {
			limits = append(limits, Per(1+r.IntN(12), time.Duration(1+r.IntN(40))*time.Millisecond))
		}
		exact, coarse := newWindow(limits), newWindow(limits)
		exact.spacing = int64(r.IntN(3)) * int64(time.Millisecond)
		coarse.spacing = exact.spacing
		forceCoarse(&coarse, 1+r.IntN(4))
		now := int64(0)
		for step := range 200 {
			now += int64(r.IntN(3)) * int64(time.Millisecond)
			both := func(f func(w *window)) { f(&exact); f(&coarse) }
			switch op := r.IntN(10); {
			case op < 5:
				both(func(w *window) { w.record(now); w.depart(now) })
			case op < 7:
				late := max(0, now-int64(r.IntN(30))*int64(time.Millisecond))
				both(func(w *window) { w.recordAt(late) })
			case op < 8:
				used := 1 + r.IntN(2*exact.maxN)
				both(func(w *window) { w.recordDebt(now, used) })
			case op < 9:
				until := now + int64(r.IntN(5))*int64(time.Millisecond)
				both(func(w *window) { w.pause(until) })
			default:
				k := 1 + r.IntN(6)
				both(func(w *window) { w.recordN(now, k) })
			}
			// Plain comparisons, not testify's: this loop makes about a
			// million of them, and require's reflection made the test
			// take 20 s under -race.
			for held := range 3 {
				for n := 1; n <= exact.smallestN(); n++ {
					if e, c := max(now, exact.freeAt(held, n)), max(now, coarse.freeAt(held, n)); e != c {
						t.Fatalf("seed %d step %d: freeAt(%d, %d) = %d coarse, want %d (exact), limits %v", seed, step, held, n, c, e, limits)
					}
					if e, c := exact.earliest(now, held, n), coarse.earliest(now, held, n); e != c {
						t.Fatalf("seed %d step %d: earliest(%d, %d) = %d coarse, want %d (exact)", seed, step, held, n, c, e)
					}
				}
				if e, c := exact.free(now, held), coarse.free(now, held); e != c {
					t.Fatalf("seed %d step %d: free(%d) = %d coarse, want %d (exact)", seed, step, held, c, e)
				}
			}
			if len(coarse.ring) > coarse.coarse().ringCap {
				t.Fatalf("seed %d: the ring's length %d is past its %d", seed, len(coarse.ring), coarse.coarse().ringCap)
			}
		}
	}
}

// TestCoarseWindowNeverEarlier: at instants closer than a grain (the real
// clock's), runs count completions later than they were read, never
// earlier: every instant a limiter gets from the coarse window is no
// earlier than the exact one, and at most a grain later.
func TestCoarseWindowNeverEarlier(t *testing.T) {
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 6))
		w := time.Duration(1+r.IntN(10)) * time.Millisecond
		limits := []Limit{Per(2+r.IntN(30), w)}
		exact, coarse := newWindow(limits), newWindow(limits)
		forceCoarse(&coarse, 1+r.IntN(4))
		grain := coarse.coarse().grain
		now := int64(0)
		for step := range 300 {
			now += int64(r.IntN(int(3 * grain)))
			exact.record(now)
			coarse.record(now)
			// Plain comparisons, not testify's: a million of them, which
			// took 40 s under -race with require's reflection.
			for n := 1; n <= limits[0].N; n++ {
				e, c := max(now, exact.freeAt(0, n)), max(now, coarse.freeAt(0, n))
				if c < e {
					t.Fatalf("seed %d step %d n %d: earlier than the formula: %d < %d", seed, step, n, c, e)
				}
				if c-e >= grain {
					t.Fatalf("seed %d step %d n %d: more than a grain later: %d - %d >= %d", seed, step, n, c, e, grain)
				}
			}
			if c, e := coarse.free(now, 0), exact.free(now, 0); c > e {
				t.Fatalf("seed %d step %d: more tokens free: %d > %d", seed, step, c, e)
			}
		}
	}
}

// TestHugeNMemoryBounded: Per(1<<30, time.Second) kept 8 bytes for every
// admission of the last second (268 MB after 33M free Waits; 40 MB for the
// 5M here). With coarse history its ring and runs stay within their
// bounds whatever the rate, and it still never refuses a token free.
func TestHugeNMemoryBounded(t *testing.T) {
	w := newWindow([]Limit{Per(1<<30, time.Second)})
	const calls, gap = 5_000_000, 50 // 20M admissions a second
	for i := range int64(calls) {
		now := i * gap
		if w.freeAt(0, 1) > now {
			t.Fatalf("call %d: no token free at %v", i, time.Duration(now))
		}
		w.record(now)
	}
	require.Equal(t, coarseRing, len(w.ring), "the ring's length")
	require.NotNil(t, w.coarse())
	require.LessOrEqual(t, w.coarse().size, coarseRuns+1, "runs in a window")
	require.LessOrEqual(t, len(w.coarse().runs), 2*(coarseRuns+1), "the runs' slice")
	require.Equal(t, calls-coarseRing, int(w.coarse().total()), "every completion of the window is counted")
	require.Equal(t, 1<<30-calls, w.free(calls*gap, 0))
}

// TestHugeNBucketMemory: free Waits on a Bucket of Per(1<<30, time.Second)
// allocate no more than the coarse history's bounds (it grew 8 bytes a
// call, in doublings).
func TestHugeNBucketMemory(t *testing.T) {
	b, err := NewBucket(Per(1<<30, time.Second))
	require.NoError(t, err)
	ctx := t.Context()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 1_000_000 {
		require.NoError(t, b.Wait(ctx))
	}
	runtime.ReadMemStats(&after)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "bytes allocated by 1M free Waits")
	require.LessOrEqual(t, len(b.win.ring), coarseRing)
}

// TestRecordAtDuringKeep: a hold's deadline noticed late, while a replaced
// limit's history is kept, took the place of a newer completion: with
// Per(2, 10ms) set again at 0 (kept until 10ms), completions at 11 and
// 12ms and a deadline at 5ms noticed after them, the next token was free
// at 15ms (5 + 10), three in [11ms, 21ms). It is 21ms, 11 + 10.
func TestRecordAtDuringKeep(t *testing.T) {
	ms := int64(time.Millisecond)
	limits := []Limit{Per(2, 10*time.Millisecond)}
	w := newWindow(limits)
	w.setLimits(limits, 0)
	w.record(11 * ms)
	w.record(12 * ms)
	w.recordAt(5 * ms)
	require.Equal(t, 21*ms, w.freeAt(0, 1))
}

// TestPropertyCoarseBucketMatchesModel is TestPropertyMeteredBucketMatchesModel
// with the Bucket's window given coarse history and a ring of 1 to 3, so
// that its limits look back through the runs: on virtual time its schedule
// is still internal/specmodel's, to the nanosecond.
func TestPropertyCoarseBucketMatchesModel(t *testing.T) {
	for seed := range meteredCases {
		r := rand.New(rand.NewPCG(uint64(seed), 23))
		c := specmodel.RandomMeteredCase(r, 3, allFeatures)
		ringCap := 1 + r.IntN(3)
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				limit, opts := meteredOptions(c.Config)
				b, err := NewBucket(limit, opts...)
				require.NoError(t, err)
				b.mu.Lock()
				forceCoarse(&b.win, ringCap)
				b.mu.Unlock()
				want := specmodel.Run(c.Config, c.Items)
				got := driveMetered(t, start, c.Items, want, func(i int) acquirer { return bucketAcquirer(b, i) })
				require.Equal(t, want, got, "ring %d, config %+v\nitems %+v", ringCap, c.Config, c.Items)
			})
		})
	}
}

// TestTakeOneCoarseAgreesWithRecord drives twin windows of one limit with
// coarse history through random clock readings (standing still, moving on
// by less or more than a grain, set back): one takes each token with the
// hot path's takeOneCoarse, the other with the general path's check and
// record. They agree on every grant and end in the same state: the ring,
// the runs and what was dropped.
func TestTakeOneCoarseAgreesWithRecord(t *testing.T) {
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 7))
		limits := []Limit{Per(1+r.IntN(10), time.Duration(1+r.IntN(20))*time.Millisecond)}
		hot, gen := newWindow(limits), newWindow(limits)
		ringCap := 1 + r.IntN(4)
		forceCoarse(&hot, ringCap)
		forceCoarse(&gen, ringCap)
		grain := hot.coarse().grain
		now := int64(0)
		for step := range 300 {
			switch r.IntN(6) {
			case 0:
			case 1:
				now -= r.Int64N(2 * grain) // a clock set back
			default:
				now += r.Int64N(4 * grain)
			}
			took := hot.takeOneCoarse(hot.coarse(), now)
			e, ok := gen.fromEnd(limits[0].N)
			gtook := !ok || addSat(e, int64(limits[0].Window)) <= now
			if gtook {
				gen.record(now)
			}
			// Compared without building windowState's strings but on a
			// failure: 90,000 steps of two fmt-built states took 20 s
			// under -race.
			if took != gtook {
				t.Fatalf("seed %d step %d: takeOneCoarse took %v, check and record %v", seed, step, took, gtook)
			}
			if !sameState(&gen, &hot) {
				t.Fatalf("seed %d step %d:\ncheck and record %s\ntakeOneCoarse    %s", seed, step, windowState(&gen), windowState(&hot))
			}
		}
	}
}

// sameState reports whether a and b, windows with coarse history, have
// the same windowState.
func sameState(a, b *window) bool {
	ca, cb := a.coarse(), b.coarse()
	if a.size != b.size || ca.size != cb.size || ca.base != cb.base || ca.pushed != cb.pushed || a.dropped != b.dropped {
		return false
	}
	for i := range a.size {
		if a.at(i) != b.at(i) {
			return false
		}
	}
	for i := range ca.size {
		if *ca.at(i) != *cb.at(i) {
			return false
		}
	}
	return true
}

// windowState is what a grant may change in a window with coarse history.
func windowState(w *window) string {
	s := "ring "
	for i := range w.size {
		s += fmt.Sprint(w.at(i), " ")
	}
	c := w.coarse()
	s += "runs "
	for i := range c.size {
		s += fmt.Sprintf("%+v ", *c.at(i))
	}
	return s + fmt.Sprint("base ", c.base, " pushed ", c.pushed, " dropped ", w.dropped)
}
