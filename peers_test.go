package rxthrottle_test

import (
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"

	"github.com/rxthrottle/rxthrottle"
)

// TestPeersBreakTheStrictWindow backs README's claim with exact times: for
// "5 per second", x/time/rate's token bucket (rate 5/s, burst 5) refills
// continuously and admits 9 calls within one second, which a server counting
// a sliding second refuses; rxthrottle admits 5.
func TestPeersBreakTheStrictWindow(t *testing.T) {
	start := time.Unix(0, 0)
	lim := rate.NewLimiter(5, 5)
	admitted := 0
	for ms := 0; ms < 1000; ms++ {
		for lim.AllowN(start.Add(time.Duration(ms)*time.Millisecond), 1) {
			admitted++
		}
	}
	require.Equal(t, 9, admitted, "x/time/rate within [0s, 1s)")

	mock := clock.NewMock()
	b, err := rxthrottle.NewBucket(rxthrottle.Per(5, time.Second), rxthrottle.WithClock(mock))
	require.NoError(t, err)
	ours := 0
	for range 100 {
		for b.Allow() {
			ours++
		}
		mock.Set(mock.Now().Add(10 * time.Millisecond))
	}
	require.Equal(t, 5, ours, "rxthrottle within [0s, 1s)")
}
