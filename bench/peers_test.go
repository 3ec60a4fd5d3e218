package bench_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/ratelimit"
	"golang.org/x/time/rate"

	"github.com/rxthrottle/rxthrottle"
)

// The quota of TestPeersBreakTheStrictWindow: 5 per second, a burst of 5.
const (
	quotaN      = 5
	quotaWindow = time.Second
)

// TestPeersBreakTheStrictWindow backs README's claims with exact times, as
// offsets from the first call, on virtual time (a synctest bubble, where
// every limiter reads its ordinary clock). A caller asks every millisecond
// for one second, as many times as the limiter lets it:
//
//   - x/time/rate (rate 5/s, burst 5) refills continuously and admits 9
//     calls: 5 at 0s, then one every 200ms. A server that counts a sliding
//     second refuses the last four.
//   - go.uber.org/ratelimit (5 per second) spaces a burst of 5 evenly, one
//     every 200ms: the burst does not go at once.
//   - rxthrottle's Per(5, time.Second) admits 5 at 0s and nothing more
//     before 1s, and the server refuses none.
//
// Run it with -v to see the times.
func TestPeersBreakTheStrictWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim := rate.NewLimiter(rate.Every(quotaWindow/quotaN), quotaN)
		xrate := admitEveryMillisecond(lim.Allow)

		bucket, err := rxthrottle.NewBucket(rxthrottle.Per(quotaN, quotaWindow))
		require.NoError(t, err)
		ours := admitEveryMillisecond(func() bool {
			ok, err := bucket.Allow(context.Background())
			require.NoError(t, err)
			return ok
		})

		uber := ratelimit.New(quotaN, ratelimit.Per(quotaWindow))
		start := time.Now()
		var spaced []time.Duration
		for range quotaN {
			spaced = append(spaced, uber.Take().Sub(start))
		}

		t.Logf("x/time/rate NewLimiter(Every(200ms), 5) admits at %v", xrate)
		t.Logf("  a server counting a sliding %v refuses those at %v", quotaWindow, refused(xrate))
		t.Logf("go.uber.org/ratelimit New(5) lets a burst of 5 go at %v", spaced)
		t.Logf("rxthrottle Per(5, time.Second) admits at %v", ours)
		t.Logf("  a server counting a sliding %v refuses those at %v", quotaWindow, refused(ours))

		ms := time.Millisecond
		require.Equal(t, []time.Duration{0, 0, 0, 0, 0, 200 * ms, 400 * ms, 600 * ms, 800 * ms}, xrate, "x/time/rate")
		require.Equal(t, []time.Duration{200 * ms, 400 * ms, 600 * ms, 800 * ms}, refused(xrate), "refused of x/time/rate's")
		require.Equal(t, []time.Duration{0, 200 * ms, 400 * ms, 600 * ms, 800 * ms}, spaced, "go.uber.org/ratelimit")
		require.Equal(t, []time.Duration{0, 0, 0, 0, 0}, ours, "rxthrottle")
		require.Empty(t, refused(ours), "refused of rxthrottle's")
	})
}

// admitEveryMillisecond calls allow at every millisecond of one window, as
// many times as it says yes, and returns the offset of each yes from the
// first call. It runs on the bubble's virtual clock.
func admitEveryMillisecond(allow func() bool) []time.Duration {
	start := time.Now()
	var admitted []time.Duration
	for time.Since(start) < quotaWindow {
		for allow() {
			admitted = append(admitted, time.Since(start))
		}
		time.Sleep(time.Millisecond)
	}
	return admitted
}

// refused returns the arrivals, in order, that a server enforcing the quota
// strictly refuses: one that finds quotaN accepted arrivals in the window
// that ends at it.
func refused(arrivals []time.Duration) []time.Duration {
	var accepted, out []time.Duration
	for _, at := range arrivals {
		inWindow := 0
		for _, a := range accepted {
			if at-a < quotaWindow {
				inWindow++
			}
		}
		if inWindow >= quotaN {
			out = append(out, at)
			continue
		}
		accepted = append(accepted, at)
	}
	return out
}
