package httpthrottle_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle/throttletest"
)

// TestLearnQuirks: a learning Transport from a wrong limit at throttletest
// servers with the quirks of servers in use, on virtual time (32 workers,
// a round trip of 2 ms, the server's windows 300 ms into the run): the
// refusals stay within issue 26's bounds, the window holds at the server
// where the learner keeps an announced quota (window), and nothing stalls.
func TestLearnQuirks(t *testing.T) {
	const n, total, maxPause = 10, 100, 3 * time.Second
	cases := []struct {
		name       string
		opts       []throttletest.Option
		maxRefused int
		window     bool
	}{
		{"truncated resets, fixed window", []throttletest.Option{throttletest.WithDialect(throttletest.DialectGitHub),
			throttletest.WithAlgorithm(throttletest.FixedWindow), throttletest.WithQuirks(throttletest.QuirkTruncatedReset)}, 2, true},
		{"truncated resets, sliding log", []throttletest.Option{throttletest.WithDialect(throttletest.DialectGitHub),
			throttletest.WithQuirks(throttletest.QuirkTruncatedReset)}, 2, true},
		{"millisecond resets", []throttletest.Option{throttletest.WithDialect(throttletest.DialectGitHub),
			throttletest.WithQuirks(throttletest.QuirkMillisReset)}, 0, true},
		{"503 without Retry-After", []throttletest.Option{throttletest.WithQuirks(throttletest.QuirkRefuse503)}, 10, false},
		// A liar's first burst goes with at most as many in flight as it
		// accepted (the trust ramp: 1, 2, 4, 8), not every worker (32: 22
		// refused above the 10 accepted before the ramp); from its first
		// refusal on, the rate is found from refusals. Issue 26: at most 10.
		{"announcing 1000", []throttletest.Option{throttletest.WithDialect(throttletest.DialectGitHub), throttletest.WithAnnouncedLimit(1000)}, n, false},
		{"announcing 1000 in IETF fields", []throttletest.Option{throttletest.WithDialect(throttletest.DialectIETF), throttletest.WithAnnouncedLimit(1000)}, n, false},
		{"a dialect an answer", []throttletest.Option{throttletest.WithQuirks(throttletest.QuirkFlipDialect)}, 5, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h, err := throttletest.NewHandler(rxthrottle.Per(n, time.Second), c.opts...)
				require.NoError(t, err)
				run := virtualLearnLoad(t, h, 300*time.Millisecond, total, maxPause)
				var times []time.Duration
				for _, a := range h.Log() {
					times = append(times, a.At.Sub(run.start))
				}
				st := h.Stats()
				t.Logf("%d accepted, %d refused in %v (%.1f%% of the quota); last %v", st.Accepted, st.Refused, run.elapsed,
					100*float64(total)/run.elapsed.Seconds()/n, run.tr.LearnStats().Last)
				require.LessOrEqual(t, st.Refused, c.maxRefused, "refused")
				if c.window {
					requireWindow(t, times, n, time.Second)
				}
				requireNoStall(t, times, maxPause)
			})
		})
	}
}
