package rxthrottle

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/rxthrottle/rxthrottle/internal/specmodel"
	"github.com/stretchr/testify/require"
)

// TestThrottleRealClockWindow runs Throttle on the real clock, where the
// emitter of its private bucket stamps emissions before it blocks and
// records them with the next token it takes.
// The consumer reads the clock just before and just after each receive, so
// item i was emitted within [before_i, after_i]. If the window held, then
// for every limit e_(i+N) >= e_i + W, so after_(i+N) - before_i >= W; a
// token renewed early (an emission recorded before it happened) breaks it
// by the consumer's stall. (Counting the after_i readings in windows would
// not be sound: a consumer preempted between a receive and its clock read
// delays after_i past the next emissions' renewal.) The consumer stalls at
// random, so the emitter blocks on the downstream as well as on the source.
// Nothing depends on the machine's speed.
func TestThrottleRealClockWindow(t *testing.T) {
	cases := []struct {
		limits []Limit
		items  int
	}{
		{[]Limit{Per(3, 5*time.Millisecond)}, 150},
		{[]Limit{Per(1, 2*time.Millisecond)}, 100},
		{[]Limit{Per(4, 4*time.Millisecond), Per(10, 15*time.Millisecond)}, 150},
		{[]Limit{Per(70, 10*time.Millisecond)}, 700}, // many tokens free at once
	}
	for ci, c := range cases {
		t.Run(fmt.Sprint(c.limits), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(ci), 7))
			src := make(chan rxgo.Item)
			go func() {
				defer close(src)
				for i := range c.items {
					if r.IntN(20) == 0 { // now and then the source is idle
						time.Sleep(time.Duration(r.IntN(3000)) * time.Microsecond)
					}
					src <- rxgo.Of(i)
				}
			}()
			out := Throttle(c.limits[0], withLimits(c.limits[1:])...)(rxgo.FromChannel(src)).Observe()
			cr := rand.New(rand.NewPCG(uint64(ci), 8))
			start := time.Now()
			var before, after []time.Duration
			for {
				if cr.IntN(10) == 0 { // now and then the consumer stalls
					time.Sleep(time.Duration(cr.IntN(3000)) * time.Microsecond)
				}
				b := time.Since(start)
				item, ok := <-out
				a := time.Since(start)
				if !ok {
					break
				}
				require.Equal(t, len(before), item.V, "items lost or out of order")
				before, after = append(before, b), append(after, a)
			}
			require.Len(t, before, c.items)
			for _, l := range c.limits {
				for i := 0; i+l.N < len(before); i++ {
					require.GreaterOrEqual(t, after[i+l.N]-before[i], l.Window,
						"%v: item %d was emitted less than W after item %d", l, i+l.N, i)
				}
			}
		})
	}
}

// TestThrottlePrivateStats checks the books of Throttle's own bucket after
// a run: every item emitted is one admission, the token of an item the
// downstream never took is a cancellation, and nothing stays held.
func TestThrottlePrivateStats(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, err := NewBucket(Per(100, time.Second))
		require.NoError(t, err)
		src := make(chan rxgo.Item, 10)
		for i := range 10 {
			src <- rxgo.Of(i)
		}
		close(src)
		ctx, cancel := context.WithCancel(t.Context())
		next := make(chan rxgo.Item)
		done := make(chan struct{})
		go func() {
			defer close(done)
			run(ctx, "Throttle", rxgo.FromChannel(src), &emitter{g: b.items(), private: true, op: "Throttle"}, next)
		}()
		for range 3 {
			<-next
		}
		synctest.Wait() // the emitter blocks on sending the fourth item
		cancel()
		<-done
		st := b.Stats()
		require.EqualValues(t, 3, st.Admitted, "Admitted")
		require.EqualValues(t, 1, st.Cancelled, "Cancelled: the fourth item's token")
		require.Zero(t, st.Held)
		require.Zero(t, b.untimedLocked(), "tokens still held")
		require.Equal(t, 97, st.Free)
		time.Sleep(time.Second)
		require.Equal(t, 100, b.Stats().Free)
	})
}

// TestPropertyThrottleWithHookMatchesSpec is TestPropertyThrottleMatchesSpec
// with an OnAdmit hook watching each admission: the schedule is SPEC's to the nanosecond, and
// the hook sees one admission per item that took a token.
func TestPropertyThrottleWithHookMatchesSpec(t *testing.T) {
	for seed := range propertyCases {
		r := rand.New(rand.NewPCG(uint64(seed), 12))
		limits, items := randomCase(r, 3, true)
		for i := range items {
			items[i].cancel = -1
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				var admitted atomic.Int64
				hook := OnAdmit(func(Event) { admitted.Add(1) })
				src := scheduledSource(t.Context(), start, items, 0)
				out := Throttle(limits[0], withLimits(limits[1:], hook)...)(src)
				got, _ := collect(t, start, len(items), out.Observe())
				require.Equal(t, specSchedule(limits, items), got, "limits %v", limits)
				// A grant made by the bucket's timer calls the hook on the
				// timer's goroutine once the lock is released, maybe after
				// the item has gone.
				synctest.Wait()
				require.EqualValues(t, len(tokenTimes(items, got)), admitted.Load(), "OnAdmit calls")
			})
		})
	}
}

// TestPropertyThrottleWithSpacingMatchesSpec: with WithSpacing (the gap
// after an item is only known once its emission is recorded), Throttle's
// schedule is SPEC's,
// spacing included, to the nanosecond.
func TestPropertyThrottleWithSpacingMatchesSpec(t *testing.T) {
	for seed := range propertyCases {
		r := rand.New(rand.NewPCG(uint64(seed), 13))
		limits, items := randomCase(r, 3, false)
		spacing := time.Duration(r.IntN(4)) * time.Millisecond
		cfg := specmodel.Config{Spacing: spacing}
		for _, l := range limits {
			cfg.Limits = append(cfg.Limits, specmodel.Limit{N: l.N, Window: l.Window})
		}
		model := make([]specmodel.Item, len(items))
		for i := range items {
			items[i].cancel = -1
			model[i] = specmodel.Item{Arrive: items[i].arrive, Cancel: -1}
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				src := scheduledSource(t.Context(), start, items, 0)
				opts := withLimits(limits[1:], WithSpacing(spacing))
				got, _ := collect(t, start, len(items), Throttle(limits[0], opts...)(src).Observe())
				require.Equal(t, specmodel.Schedule(cfg, model), got, "limits %v, spacing %v", limits, spacing)
			})
		})
	}
}
