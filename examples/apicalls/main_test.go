package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/rxthrottle/rxthrottle/examples/internal/example"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// inMemory serves the API without a socket: both sides of the wire in one
// synctest bubble, where time is virtual, latency is zero and every figure
// is exact. (A socket would keep the bubble from ever being idle.)
var inMemory = example.InMemory("http://api.example")

// TestRunVirtualTime runs the demo with its default settings on virtual
// time. The unthrottled client takes 30 requests, is refused on the 31st and
// blocked for 5:00, during which its retries every 30 s are refused (10
// refusals in all, the one at 5:00 sharp being let through: the block is
// over at exactly its end); the same again for requests 31 to 60; then the
// last 30. The throttled client sends 30 per minute and is never refused.
// At the end the guard knows only the throttled client, whose last window
// has just begun: the unthrottled one's ended at 11:00.
func TestRunVirtualTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := defaultConfig()
		cfg.serve = inMemory
		var out bytes.Buffer
		require.NoError(t, run(t.Context(), cfg, &out))
		got := out.String()

		for _, want := range []string{
			"  done in 10:00: 90 of 90 accepted, 20 refusals\n",
			"  done in 2:00: 90 of 90 accepted, 0 refusals\n",
			`    0:00  429 Too Many Requests: "unthrottled" is blocked until 5:00` + "\n",
			"    5:00  accepted again, after 10 refusals in a row\n",
			`    5:00  429 Too Many Requests: "unthrottled" is blocked until 10:00` + "\n",
			"    0:00  RateLimit-Remaining: 0 from the API: the bucket pauses until 1:00\n",
			"    1:00  RateLimit-Remaining: 0 from the API: the bucket pauses until 2:00\n",
			`Timeline: requests reaching the API per 30s of demo time
(# accepted, x refused with 429; each character is up to 2 requests)

           unthrottled                         throttled
     time   sent  429s                          sent  429s
     0:00     31     1 ###############x           30     0 ###############
     0:30      1     1 x
     1:00      1     1 x                          30     0 ###############
     1:30      1     1 x
     2:00      1     1 x                          30     0 ###############
     2:30      1     1 x
`,
			`     4:30      1     1 x
     5:00     31     1 ###############x
     5:30      1     1 x
`,
			`     9:30      1     1 x
    10:00     30     0 ###############

`,
			`Statistics
  throttled client's bucket (rxthrottle.Bucket.Stats)
    admitted 90, waited 2 (longest 1:00, mean 1:00), queued 0, free tokens 0
  throttled client's Transport (httpthrottle.Transport.Stats)
    sent 90, pushbacks 3 (pauses the API asked for), retries 0
  the API's guard (guard.Guard.Stats)
    checks 200: allowed 180, refused 20; blocks 2; keys live 1, blocked 0
`,
			"The throttled client was never refused, and finished in 2:00 instead of\n10:00 (5.0x sooner): each time the unthrottled one went over the quota, the\nAPI shut it out for the 5m0s cool-down, while the throttled one only ever\nwaited for its next token.\n",
		} {
			assert.Contains(t, got, want)
		}
		assert.NotContains(t, got, "\r", "no status line when stdout is not a terminal")
	})
}

// TestRunLiveEndsLikePlain checks the live mode: a status line rewritten
// with '\r' while the clients work, which, once the demo is over, has left
// on the screen exactly what the plain output shows.
func TestRunLiveEndsLikePlain(t *testing.T) {
	cfg := defaultConfig()
	cfg.count = 40
	cfg.serve = inMemory
	var plain, live bytes.Buffer
	synctest.Test(t, func(t *testing.T) {
		require.NoError(t, run(t.Context(), cfg, &plain))
	})
	cfg.live = true
	synctest.Test(t, func(t *testing.T) {
		require.NoError(t, run(t.Context(), cfg, &live))
	})
	assert.Contains(t, live.String(), "\r  unthrottled   0:20  30/40 accepted, 1 refusal  refused: retrying in 30s")
	assert.Contains(t, live.String(), "\r  throttled     0:20  30/40 accepted, 0 refusals  waiting for a token")
	assert.Equal(t, plain.String(), screen(live.String()))
}

// screen returns what a terminal shows after printing s: '\r' moves back
// to the start of the line, and later characters overwrite earlier ones.
// Trailing blanks are dropped.
func screen(s string) string {
	var lines []string
	for _, line := range strings.Split(s, "\n") {
		var cells []rune
		col := 0
		for _, r := range line {
			if r == '\r' {
				col = 0
				continue
			}
			if col < len(cells) {
				cells[col] = r
			} else {
				cells = append(cells, r)
			}
			col++
		}
		lines = append(lines, strings.TrimRight(string(cells), " "))
	}
	return strings.Join(lines, "\n")
}

// TestRunLoopback runs the demo as main does, over real HTTP on 127.0.0.1,
// with a small batch and demo time 3000x faster than real time. Latency and
// scheduling then move the times around, so only what cannot depend on them
// is checked: every request of the unthrottled, throttled and held clients
// is accepted in the end, the throttled and held clients are never refused
// (each window of the API ends with a response saying the quota is spent,
// and the Transport waits that window out before the next request; a held
// token renews a window after its answer), and the report has its parts.
//
// The departure client may give requests up: its eight workers retry into
// one another's cool-downs, so one request can meet a second block before
// its retries outlast the first (CI once saw request 6 given up after 12
// attempts, blocked at 1:05 and again at 7:18). Its line must still add up.
func TestRunLoopback(t *testing.T) {
	cfg := defaultConfig()
	cfg.rate, cfg.count, cfg.speed = 3, 7, 3000
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), cfg, &out))
	got := out.String()
	assert.Regexp(t, `The API at http://127\.0\.0\.1:\d+ allows each client 3 requests per 1m0s`, got)
	for client, want := range map[string]string{
		"unthrottled": `7 of 7 accepted, \d+ refusals?\n`,
		"throttled":   `7 of 7 accepted, 0 refusals\n`,
		"held":        `7 of 7 accepted, 0 refusals\n`,
		"departure":   `(\d) of 7 accepted, \d+ refusals?(, (\d) given up)?\n`,
	} {
		section := regexp.MustCompile(`(?m)^` + client + `\n((?:   .*\n)*)  done in \d+:\d\d: ` + want)
		m := section.FindStringSubmatch(got)
		if !assert.NotNil(t, m, "%s: no section ending in %q in\n%s", client, want, got) {
			continue
		}
		if client != "departure" {
			assert.NotContains(t, m[1], "given up", client)
			continue
		}
		accepted, _ := strconv.Atoi(m[2])
		gaveUp, _ := strconv.Atoi(m[4])
		assert.Equal(t, 7, accepted+gaveUp, "departure: every request is accepted or given up")
		assert.Equal(t, gaveUp, strings.Count(m[1], "given up"), "departure: one event per request given up")
	}
	for _, part := range []string{"Timeline: requests reaching the API per ", "Statistics\n", "    admitted 7, "} {
		assert.Contains(t, got, part)
	}
}

// TestRunSeesRefusals checks, on virtual time, that the unthrottled client
// really is refused and blocked for any small quota, and the throttled one
// never, whatever the batch size.
func TestRunSeesRefusals(t *testing.T) {
	for _, tc := range []struct{ rate, count, refusals int }{
		{rate: 1, count: 1, refusals: 0},
		{rate: 1, count: 2, refusals: 10},
		{rate: 3, count: 7, refusals: 20},
		{rate: 5, count: 5, refusals: 0},
		{rate: 5, count: 6, refusals: 10},
	} {
		t.Run(fmt.Sprintf("%d_of_%d", tc.count, tc.rate), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := defaultConfig()
				cfg.rate, cfg.count, cfg.serve = tc.rate, tc.count, inMemory
				var out bytes.Buffer
				require.NoError(t, run(t.Context(), cfg, &out))
				done := regexp.MustCompile(`done in \S+: (\d+) of (\d+) accepted, (\d+) refusals?`).FindAllStringSubmatch(out.String(), -1)
				require.Len(t, done, 4, out.String())
				assert.Equal(t, []string{fmt.Sprint(tc.count), fmt.Sprint(tc.count), fmt.Sprint(tc.refusals)}, done[0][1:], "unthrottled")
				assert.Equal(t, []string{fmt.Sprint(tc.count), fmt.Sprint(tc.count), "0"}, done[1][1:], "throttled")
				assert.Equal(t, []string{fmt.Sprint(tc.count), fmt.Sprint(tc.count), "0"}, done[2][1:], "held")
			})
		})
	}
}

// TestRunStopsWithContext checks that the demo gives up, with the
// context's error, when its context ends (Ctrl-C in main).
func TestRunStopsWithContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := defaultConfig()
		cfg.serve = inMemory
		ctx, cancel := context.WithTimeout(t.Context(), cfg.real(time.Minute))
		defer cancel()
		err := run(ctx, cfg, &bytes.Buffer{})
		require.ErrorIs(t, err, context.DeadlineExceeded)
	})
}

func TestParseFlags(t *testing.T) {
	cfg, err := parseFlags([]string{"-rate", "10", "-window", "30s", "-block", "2m", "-count", "25", "-retry", "10s", "-speed", "50", "-slot", "1m"}, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, config{rate: 10, window: 30 * time.Second, block: 2 * time.Minute, count: 25, retry: 10 * time.Second, speed: 50, slot: time.Minute,
		workers: 8, delay: 4 * time.Second, seed: 49}, cfg)
	cfg, err = parseFlags([]string{"-workers", "32", "-delay", "10s", "-seed", "7"}, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, []any{32, 10 * time.Second, uint64(7)}, []any{cfg.workers, cfg.delay, cfg.seed})

	cfg, err = parseFlags(nil, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, defaultConfig(), cfg)

	var help bytes.Buffer
	_, err = parseFlags([]string{"-h"}, &help)
	require.ErrorIs(t, err, flag.ErrHelp)
	for _, f := range []string{"-rate", "-window", "-block", "-count", "-retry", "-speed", "-slot", "-workers", "-delay", "-seed", "demo time", "127.0.0.1"} {
		assert.Contains(t, help.String(), f)
	}
}

func TestParseFlagsRejects(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-rate", "0"}, "apicalls: -rate 0: the quota must allow at least 1 request"},
		{[]string{"-window", "0s"}, "apicalls: -window 0s: the window must be positive"},
		{[]string{"-block", "-1s"}, "apicalls: -block -1s: the cool-down must not be negative"},
		{[]string{"-count", "0"}, "apicalls: -count 0: send between 1 and 10000 requests"},
		{[]string{"-count", "10001"}, "apicalls: -count 10001: send between 1 and 10000 requests"},
		{[]string{"-retry", "0s"}, "apicalls: -retry 0s: the unthrottled client must wait a positive time before a retry"},
		{[]string{"-speed", "0"}, "apicalls: -speed 0: must be above 0 and at most 1000000"},
		{[]string{"-speed", "NaN"}, "apicalls: -speed NaN: must be above 0 and at most 1000000"},
		{[]string{"-slot", "-1s"}, "apicalls: -slot -1s: must not be negative"},
		{[]string{"-workers", "0"}, "apicalls: -workers 0: between 1 and 1000"},
		{[]string{"-delay", "-1s"}, "apicalls: -delay -1s: the network delay must not be negative"},
		{[]string{"-speed", "100000"}, "apicalls: -window 1m0s at -speed 100000 lasts 600µs of real time"},
		{[]string{"-retry", "100ms"}, "apicalls: -retry 100ms at -speed 200 lasts 500µs of real time"},
		{[]string{"-count", "10000", "-retry", "1s"}, "apicalls: -count 10000 with -retry 1s against a cool-down of 5m0s could make 3020000 requests"},
		{[]string{"extra"}, `apicalls: unexpected argument "extra"`},
		{[]string{"-rate", "x"}, `invalid value "x" for flag -rate`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stderr bytes.Buffer
			_, err := parseFlags(tc.args, &stderr)
			require.Error(t, err)
			assert.Contains(t, stderr.String(), tc.want)
		})
	}
}

func TestMaxAttemptsOutlastsTheBlock(t *testing.T) {
	for _, tc := range []struct {
		window, block, retry time.Duration
		want                 int
	}{
		{time.Minute, 5 * time.Minute, 30 * time.Second, 12},
		{time.Minute, 0, 30 * time.Second, 4},
		{time.Minute, 5 * time.Minute, 7 * time.Minute, 3},
		{time.Minute, 5 * time.Minute, 299 * time.Second, 4},
	} {
		cfg := config{window: tc.window, block: tc.block, retry: tc.retry}
		assert.Equal(t, tc.want, cfg.maxAttempts(), "window %v block %v retry %v", tc.window, tc.block, tc.retry)
	}
}

func TestWriteTimeline(t *testing.T) {
	var b bytes.Buffer
	writeTimeline(&b, 0, []series{
		{"a", []arrival{{0, false}, {time.Second, false}, {2 * time.Second, true}, {12 * time.Second, true}}},
		{"b", []arrival{{5 * time.Second, false}}},
	})
	assert.Equal(t, `Timeline: requests reaching the API per 1s of demo time
(# accepted, x refused with 429; each character is 1 request)

           a                                   b
     time   sent  429s                          sent  429s
     0:00      1     0 #
     0:01      1     0 #
     0:02      1     1 x
     0:03
     0:04
     0:05                                          1     0 #
     0:06
     0:07
     0:08
     0:09
     0:10
     0:11
     0:12      1     1 x
`, b.String())
}

func TestWriteTimelineBoundsRows(t *testing.T) {
	var b bytes.Buffer
	writeTimeline(&b, time.Millisecond, []series{{"a", []arrival{{0, false}, {10 * time.Minute, true}}}})
	head, _, _ := strings.Cut(b.String(), "\n")
	assert.Equal(t, "Timeline: requests reaching the API per 1s of demo time (-slot 1ms would take 600001 rows)", head)
	assert.Equal(t, 5+601, strings.Count(b.String(), "\n"))
}

func TestPickSlot(t *testing.T) {
	for _, tc := range []struct {
		span time.Duration
		want time.Duration
	}{
		{0, time.Millisecond},
		{10 * time.Minute, 30 * time.Second},
		{2 * time.Minute, 10 * time.Second},
		{23 * time.Second, time.Second},
		{24 * time.Second, 2 * time.Second},
		{1000 * time.Hour, 44 * time.Hour},
	} {
		assert.Equal(t, tc.want, pickSlot(tc.span, defaultMaxRows), "span %v", tc.span)
	}
}

func TestMoral(t *testing.T) {
	cfg := defaultConfig()
	for _, tc := range []struct {
		block        time.Duration
		plain, paced outcome
		want         string
	}{
		{cfg.block, outcome{refused: 3, elapsed: time.Hour}, outcome{elapsed: time.Minute},
			"The throttled client was never refused, and finished in 1:00 instead of\n1:00:00 (60.0x sooner): each time the unthrottled one went over the quota,\nthe API shut it out for the 5m0s cool-down, while the throttled one only\never waited for its next token."},
		{0, outcome{refused: 1, elapsed: time.Minute}, outcome{elapsed: time.Minute},
			"The throttled client was never refused; the unthrottled one was refused 1\ntime, as each time it went over the quota the API refused it until its\nwindow was over."},
		{cfg.block, outcome{}, outcome{},
			"Neither client went over the quota: with this batch the API never pushed\nback. Try a larger -count."},
		{cfg.block, outcome{refused: 3}, outcome{refused: 2},
			"The throttled client was refused 2 times: its bucket counts from when\nrequests leave, the API from when they arrive, and nothing closed the gap."},
	} {
		cfg.block = tc.block
		got := moral(cfg, tc.plain, tc.paced)
		assert.Equal(t, tc.want, got)
		for _, line := range strings.Split(got, "\n") {
			assert.LessOrEqual(t, len(line), 76, line)
		}
	}
}

func TestClock(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                              "0:00",
		499 * time.Millisecond:         "0:00",
		time.Second:                    "0:01",
		4*time.Minute + 30*time.Second: "4:30",
		time.Hour + 2*time.Minute + 3*time.Second: "1:02:03",
		-90 * time.Second:                         "-1:30",
	} {
		assert.Equal(t, want, clock(d), "%v", d)
	}
}

// TestThrottledSurvivesLatency delays the first request of each client by
// 20ms of real time (4s of demo time) on its way to the API, so that the
// API's first window ends 20ms after the bucket's. The bucket alone would
// then send request 31 while the API's window is still open, and be refused;
// the pause the Transport takes from the API's "RateLimit-Remaining: 0"
// keeps it out until the API's window is over.
func TestThrottledSurvivesLatency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := defaultConfig()
		cfg.count = 61
		cfg.serve = func(h http.Handler) (http.RoundTripper, string, func(), error) {
			rt, url, stop, err := inMemory(h)
			var mu sync.Mutex
			seen := map[string]bool{}
			slow := example.RoundTripFunc(func(r *http.Request) (*http.Response, error) {
				mu.Lock()
				first := !seen[r.Header.Get(clientHeader)]
				seen[r.Header.Get(clientHeader)] = true
				mu.Unlock()
				if first {
					time.Sleep(20 * time.Millisecond)
				}
				return rt.RoundTrip(r)
			})
			return slow, url, stop, err
		}
		var out bytes.Buffer
		require.NoError(t, run(t.Context(), cfg, &out))
		assert.Contains(t, out.String(), "  done in 2:04: 61 of 61 accepted, 0 refusals\n")
		assert.Contains(t, out.String(), "    0:04  RateLimit-Remaining: 0 from the API: the bucket pauses until 1:04\n")
	})
}
