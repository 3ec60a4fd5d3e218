package rxthrottle_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
)

// TestThrottleMapCallContextWhy: fn's context ends with the reason it
// ended for: the subscription's own error when the subscription ends
// (context.DeadlineExceeded for an Observe context past its deadline,
// context.Canceled for one cancelled), at that instant, with the earlier
// of the two deadlines as its Deadline; context.DeadlineExceeded at its
// own deadline. The call keeps its reason however its Err is read.
func TestThrottleMapCallContextWhy(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name     string
		obs      func() (context.Context, context.CancelFunc)
		hold     time.Duration
		deadline time.Duration // fn's context's Deadline
		endAt    time.Duration // when it ends
		want     error         // its Err then
	}{
		{"subscription deadline", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 20*ms)
		}, 40 * ms, 20 * ms, 20 * ms, context.DeadlineExceeded},
		{"subscription cancelled", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(20*ms, cancel)
			return ctx, cancel
		}, 40 * ms, 40 * ms, 20 * ms, context.Canceled},
		{"own deadline", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), time.Second)
		}, 30 * ms, 30 * ms, 30 * ms, context.DeadlineExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				obs, cancel := tc.obs()
				defer cancel()
				var deadline, endAt time.Duration
				var errs []error
				fn := func(ctx context.Context, _ any) (any, error) {
					d, _ := ctx.Deadline()
					deadline = d.Sub(start)
					<-ctx.Done()
					endAt = time.Since(start)
					errs = append(errs, ctx.Err(), ctx.Err())
					return nil, ctx.Err()
				}
				out := rxthrottle.ThrottleMap(rxthrottle.Per(1, time.Second), fn, rxthrottle.WithHoldTimeout(tc.hold))(
					rxgo.Just("a")()).Observe(rxgo.WithContext(obs))
				var items []rxgo.Item
				for item := range out {
					items = append(items, item)
				}
				synctest.Wait()
				require.Equal(t, []error{tc.want, tc.want}, errs)
				require.Equal(t, tc.deadline, deadline, "Deadline")
				require.Equal(t, tc.endAt, endAt, "ended at")
				if tc.name == "own deadline" {
					require.Len(t, items, 1)
					require.ErrorIs(t, items[0].E, rxthrottle.ErrHoldTimeout)
				}
			})
		})
	}
}

// TestThrottleMapCallContextRealClock: on the real clock, fn's deadline is
// its grant plus the hold timeout, a time with the monotonic reading
// (time.Until measures it), and its String names the item.
func TestThrottleMapCallContextRealClock(t *testing.T) {
	const hold = time.Hour
	type seen struct {
		left time.Duration
		str  string
	}
	got := make(chan seen, 2)
	fn := func(ctx context.Context, v any) (any, error) {
		d, ok := ctx.Deadline()
		require.True(t, ok)
		got <- seen{time.Until(d), fmt.Sprint(ctx)}
		return v, nil
	}
	before := time.Now()
	out := rxthrottle.ThrottleMap(rxthrottle.Per(5, time.Second), fn, rxthrottle.WithHoldTimeout(hold))(
		rxgo.Just("a", "b")()).Observe()
	for item := range out {
		require.NoError(t, item.E)
	}
	elapsed := time.Since(before)
	close(got)
	var names []string
	for s := range got {
		require.LessOrEqual(t, s.left, hold)
		require.Greater(t, s.left, hold-elapsed-time.Second) // the Second: a slow machine's reading of Until
		names = append(names, s.str[:strings.Index(s.str, ").")+1])
	}
	slices.Sort(names) // the calls may run at once
	require.Equal(t, []string{"rxthrottle.ThrottleMap(item #1)", "rxthrottle.ThrottleMap(item #2)"}, names)
}
