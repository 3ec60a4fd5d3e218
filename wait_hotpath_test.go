package rxthrottle

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
)

// TestBucketReadsTheRealClockDirectly checks that a bucket on the real
// clock (the default, or clock.New() given) reads it with time.Since, not
// through the clock.Clock interface (hooks.realClock), a Keyed and its
// keys too, and that an injected clock is still the one read.
func TestBucketReadsTheRealClockDirectly(t *testing.T) {
	per := Per(3, time.Second)
	for _, tc := range []struct {
		name string
		opts []Option
	}{{"default", nil}, {"clock.New()", []Option{WithClock(clock.New())}}} {
		b, err := NewBucket(per, tc.opts...)
		if err != nil {
			t.Fatal(err)
		}
		if !b.hooks.realClock {
			t.Errorf("%s: the bucket reads its clock through the interface, want time.Since", tc.name)
		}
		if now := b.now(); now < 0 || now > int64(time.Hour) {
			t.Errorf("%s: now() = %v after NewBucket, want a small offset", tc.name, time.Duration(now))
		}
		k, err := NewKeyed(per, tc.opts...)
		if err != nil {
			t.Fatal(err)
		}
		if !k.realClock {
			t.Errorf("%s: the Keyed reads its clock through the interface, want time.Since", tc.name)
		}
		if err := k.with("a", true, func(kb *Bucket, _ int64) {
			if !kb.hooks.realClock {
				t.Errorf("%s: a Keyed's key reads its clock through the interface", tc.name)
			}
		}); err != nil {
			t.Fatal(err)
		}
	}

	mock := clock.NewMock()
	b, err := NewBucket(per, WithClock(mock))
	if err != nil {
		t.Fatal(err)
	}
	if b.hooks.realClock || b.hooks.clock != mock {
		t.Fatalf("WithClock(mock): the bucket reads %T (real clock %v), want the mock", b.hooks.clock, b.hooks.realClock)
	}
	k, err := NewKeyed(per, WithClock(mock))
	if err != nil {
		t.Fatal(err)
	}
	mock.Add(1500 * time.Millisecond)
	if got := time.Duration(b.now()); got != 1500*time.Millisecond {
		t.Fatalf("now() = %v after the mock moved 1.5s, want 1.5s", got)
	}
	if got := time.Duration(k.now()); k.realClock || got != 1500*time.Millisecond {
		t.Fatalf("Keyed: now() = %v after the mock moved 1.5s (real clock %v), want 1.5s", got, k.realClock)
	}
}

// TestWaitHotPathAgreesWithTheGeneralPath drives twin buckets (the same
// limits, options and mock clock) through random steps: the clock moving
// on, standing still or set back, holds taken and released, pauses, new
// limits. At each step one twin tries Wait's hot path (takeOneLocked) and
// the other the general path (takeLocked). Whenever the hot path grants,
// the general path grants too and the twins end in the same state; when
// it does not, it changed nothing. With nothing held, no pause in force
// and the clock not set back, the hot path decides alone: the two agree.
func TestWaitHotPathAgreesWithTheGeneralPath(t *testing.T) {
	seed := uint64(time.Now().UnixNano()) // a new sample each run; the seed is in every failure
	r := rand.New(rand.NewPCG(seed, 19))
	ms := int64(time.Millisecond)
	for c := range 300 {
		mock := &stepClock{now: time.Unix(0, 0)}
		limits := []Limit{Per(1+r.IntN(4), time.Duration(1+r.IntN(20))*time.Millisecond)}
		for range r.IntN(3) {
			limits = append(limits, Per(1+r.IntN(12), time.Duration(1+r.IntN(60))*time.Millisecond))
		}
		opts := []Option{WithClock(mock)}
		for _, l := range limits[1:] {
			opts = append(opts, WithLimit(l))
		}
		if r.IntN(4) == 0 {
			opts = append(opts, WithSpacing(time.Duration(r.IntN(3))*time.Millisecond))
		}
		hot, err := NewBucket(limits[0], opts...)
		if err != nil {
			t.Fatal(err)
		}
		gen, err := NewBucket(limits[0], opts...)
		if err != nil {
			t.Fatal(err)
		}
		var holds []uint64  // hot's ids
		var gholds []uint64 // gen's, in the same order
		for step := range 200 {
			where := func() string { return fmt.Sprintf("seed %d, case %d (limits %v) step %d", seed, c, limits, step) }
			switch k := r.IntN(20); {
			case k < 6:
				mock.now = mock.now.Add(time.Duration(r.Int64N(3*ms + 1)))
			case k == 6:
				mock.now = mock.now.Add(-time.Duration(r.Int64N(2*ms + 1))) // a clock set back
			case k == 7 && len(holds) < 3:
				hot.mu.Lock()
				id, ok := hot.takeLocked(hot.now(), 1, grantToken)
				hot.unlock()
				gen.mu.Lock()
				gid, gok := gen.takeLocked(gen.now(), 1, grantToken)
				gen.unlock()
				if ok != gok {
					t.Fatalf("%s: twins disagree on a hold: %v and %v", where(), ok, gok)
				}
				if ok {
					holds, gholds = append(holds, id), append(gholds, gid)
				}
			case k == 8 && len(holds) > 0:
				i := r.IntN(len(holds))
				used := r.IntN(2) == 0
				hot.endHold(holds[i], used)
				gen.endHold(gholds[i], used)
				holds, gholds = slices.Delete(holds, i, i+1), slices.Delete(gholds, i, i+1)
			case k == 9 && r.IntN(4) == 0:
				until := mock.now.Add(time.Duration(r.Int64N(5 * ms)))
				hot.Pause(until)
				gen.Pause(until)
			case k == 10 && r.IntN(2) == 0:
				// New limits, a window shorter or longer than before: the
				// ring keeps what a replaced limit may look back to.
				nl := []Limit{Per(1+r.IntN(6), time.Duration(1+r.IntN(20))*time.Millisecond)}
				if r.IntN(3) == 0 {
					nl = append(nl, Per(1+r.IntN(12), time.Duration(1+r.IntN(60))*time.Millisecond))
				}
				if err := hot.SetLimit(nl[0], nl[1:]...); err != nil {
					t.Fatal(err)
				}
				if err := gen.SetLimit(nl[0], nl[1:]...); err != nil {
					t.Fatal(err)
				}
			default:
				hot.mu.Lock()
				now := hot.now()
				before := snapshot(hot)
				quiet := len(holds) == 0 && now >= hot.win.pauseUntil && now >= hot.win.last()
				took := hot.takeOneLocked(now)
				after := snapshot(hot)
				hot.unlock()
				gen.mu.Lock()
				_, gtook := gen.takeLocked(gen.now(), 1, grantRecord)
				gen.unlock()
				switch {
				case took && !gtook:
					t.Fatalf("%s: the hot path granted a token the general path refuses", where())
				case !took && !before.equal(after):
					t.Fatalf("%s: the hot path refused and changed the bucket:\n%+v\n%+v", where(), before, after)
				case quiet && took != gtook:
					t.Fatalf("%s: nothing held, no pause, clock not set back: hot path %v, general path %v", where(), took, gtook)
				case !took && gtook:
					// Undecided (a hold, a pause, the clock set back): the
					// general path granted; the hot twin takes it the same way.
					hot.mu.Lock()
					hot.takeLocked(hot.now(), 1, grantRecord)
					hot.unlock()
				}
			}
			if h, g := snapshot(hot), snapshot(gen); !h.equal(g) {
				t.Fatalf("%s: the twins differ:\nhot %+v\ngen %+v", where(), h, g)
			}
		}
	}
}

// stepClock is a clock the test sets by hand, without clock.Mock's real
// sleep at every move; a bucket that never waits reads only Since.
type stepClock struct {
	clock.Clock // nil: any other method panics
	now         time.Time
}

func (c *stepClock) Now() time.Time                  { return c.now }
func (c *stepClock) Since(t time.Time) time.Duration { return c.now.Sub(t) }

// bucketState is what a grant may change in a bucket, the ring read
// oldest first (whatever its head).
type bucketState struct {
	ring                             []int64
	dropped, lastDeparture, admitted int64
}

func snapshot(b *Bucket) bucketState {
	s := bucketState{dropped: b.win.dropped, lastDeparture: b.win.lastDeparture, admitted: int64(b.ownCounts().Admitted)}
	for i := range b.win.size {
		s.ring = append(s.ring, b.win.at(i))
	}
	return s
}

func (s bucketState) equal(o bucketState) bool {
	return slices.Equal(s.ring, o.ring) && s.dropped == o.dropped && s.lastDeparture == o.lastDeparture && s.admitted == o.admitted
}

// TestWaitHotPathFallsBack checks each case the hot path leaves to the
// general path, through Wait itself on virtual time: an ended context, a
// nil one, a zero Bucket, a caller queued ahead, and a clock set back
// (the departure is then recorded at the newest completion, never before).
func TestWaitHotPathFallsBack(t *testing.T) {
	ctx := context.Background()
	if err := (&Bucket{}).Wait(ctx); err != errNotBuilt {
		t.Errorf("zero Bucket: Wait = %v, want errNotBuilt", err)
	}
	if err := (*Bucket)(nil).Wait(ctx); err != errNotBuilt {
		t.Errorf("nil Bucket: Wait = %v, want errNotBuilt", err)
	}
	mock := clock.NewMock()
	b, err := NewBucket(Per(2, time.Second), WithClock(mock))
	if err != nil {
		t.Fatal(err)
	}
	wait := func() {
		t.Helper()
		if err := b.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	//lint:ignore SA1012 a nil context is what this checks
	if err := b.Wait(nil); err != errNilContext { //nolint:staticcheck
		t.Errorf("Wait(nil) = %v, want errNilContext", err)
	}
	ended, cancel := context.WithCancel(ctx)
	cancel()
	if err := b.Wait(ended); err != context.Canceled {
		t.Errorf("Wait(ended ctx) = %v, want context.Canceled", err)
	}
	if got := b.Stats().Admitted; got != 0 {
		t.Errorf("after refusals: Admitted = %d, want 0", got)
	}
	mock.Add(time.Second)
	wait()
	wait() // the ring is full: 1s, 1s
	mock.Add(1500 * time.Millisecond)
	wait() // 1s, 2.5s
	mock.Set(mock.Now().Add(-300 * time.Millisecond))
	// At 2.2s the token of 1s is free again, but the newest completion is
	// ahead of the clock: the departure is recorded at 2.5s, never before.
	wait()
	b.mu.Lock()
	ring := []int64{b.win.at(0), b.win.at(1)}
	b.mu.Unlock()
	if want := []int64{int64(2500 * time.Millisecond), int64(2500 * time.Millisecond)}; !slices.Equal(ring, want) {
		t.Errorf("after a Wait on a clock set back the ring is %v, want %v", ring, want)
	}
	if got := b.Stats().Admitted; got != 4 {
		t.Errorf("Admitted = %d, want 4", got)
	}
}

// TestWaitHotPathKeepsItsPlaceInLine checks, on virtual time, that a Wait
// finding a token free never overtakes a caller already waiting: with one
// of two tokens out, WaitN(2) waits for both, and a Wait behind it waits
// for its turn although one token is free at once.
func TestWaitHotPathKeepsItsPlaceInLine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		b, err := NewBucket(Per(2, time.Second))
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if err := b.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		wentN := make(chan time.Duration, 1)
		go func() {
			if err := b.WaitN(ctx, 2); err != nil {
				t.Error(err)
			}
			wentN <- time.Since(start)
		}()
		synctest.Wait() // WaitN waits
		if err := b.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		went := time.Since(start)
		if n := <-wentN; n != time.Second || went != 2*time.Second {
			t.Errorf("WaitN(2) went at %v and the Wait behind it at %v, want 1s and 2s", n, went)
		}
	})
}
