package main

import (
	"bytes"
	"fmt"
	"regexp"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConcurrentRunVirtualTime pins the concurrent run of the default
// settings on virtual time: the held client is never refused; the
// departure bucket is refused at the first window's end, where the default
// seed delays the first window's first requests more than the next
// window's, and is shut out for the cool-down.
func TestConcurrentRunVirtualTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := defaultConfig()
		cfg.serve = inMemory
		var out bytes.Buffer
		require.NoError(t, run(t.Context(), cfg, &out))
		got := out.String()
		for _, want := range []string{
			"held\n  done in 2:29: 90 of 90 accepted, 0 refusals\n",
			"departure\n" +
				`    1:00  429 Too Many Requests: "departure" is blocked until 6:00` + "\n" +
				"  done in 7:50: 90 of 90 accepted, 79 refusals\n",
			"           held                                departure\n" +
				"     time   sent  429s                          sent  429s\n" +
				"     0:00     30     0 ###############            30     0 ###############\n" +
				"     0:30\n" +
				"     1:00     30     0 ###############             8     8 xxxx\n",
			"The held client was never refused. The departure bucket was refused 79 times\nand shut out:",
		} {
			assert.Contains(t, got, want)
		}
	})
}

// TestHeldNeverRefused runs the concurrent run on virtual time for several
// seeds, worker counts and delays: the held client is never refused,
// whatever the delays drawn.
func TestHeldNeverRefused(t *testing.T) {
	done := regexp.MustCompile(`(?m)^held\n  done in \S+: (\d+) of (\d+) accepted, (\d+) refusals?`)
	var departureRefused int
	for _, workers := range []int{1, 8, 32} {
		for seed := uint64(1); seed <= 4; seed++ {
			t.Run(fmt.Sprintf("%d workers, seed %d", workers, seed), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					cfg := defaultConfig()
					cfg.serve = inMemory
					cfg.count, cfg.rate, cfg.block = 40, 10, cfg.window
					cfg.workers, cfg.seed, cfg.delay = workers, seed, cfg.window/4
					var out bytes.Buffer
					require.NoError(t, run(t.Context(), cfg, &out))
					m := done.FindStringSubmatch(out.String())
					require.NotNil(t, m, out.String())
					assert.Equal(t, []string{"40", "40", "0"}, m[1:])
					if d := regexp.MustCompile(`(?m)^departure\n(?:.*\n)*?  done in \S+: 40 of 40 accepted, (\d+) refusals?`).FindStringSubmatch(out.String()); d != nil && d[1] != "0" {
						departureRefused++
					}
				})
			})
		}
	}
	t.Logf("the departure bucket was refused in %d of 12 runs", departureRefused)
}
