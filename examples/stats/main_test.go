package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/rxthrottle/rxthrottle/examples/internal/example"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// inMemory serves the example without a socket, so that run can go inside
// a synctest bubble, where time is virtual and every figure is exact.
var inMemory = example.InMemory("http://stats.example")

// TestRunVirtualTime runs the example on virtual time, where the schedule is
// exact at 5 per 100ms per key: alice's 12 calls go 5 at once, 5 at 100ms
// and 2 at 200ms (7 waits, 900ms of waiting); carol's 7 go 5 and 2 (200ms);
// bob's 3 go at once; dave's 6th call has a 50ms deadline and its token
// would come at 100ms, so it is refused at arrival (ErrDeadline): it never
// waits, so OnWait never sees it, and Stats count it as Cancelled. mallory's 11th request blocks her; the 4 after it are
// refused.
func TestRunVirtualTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := defaultConfig()
		cfg.serve = inMemory
		var out bytes.Buffer
		start := time.Now()
		require.NoError(t, run(t.Context(), cfg, &out))
		assert.Equal(t, 200*time.Millisecond, time.Since(start))
		got := out.String()
		assert.Contains(t, got, `A keyed limiter (5 per 100ms per key) and a guard (10 per 1m0s, block 5m0s),
with hooks feeding metrics.
Keyed.Wait calls, all at once: alice 12, bob 3, carol 7, dave 6 (1 refused at once: no token within its 50ms deadline).
Guard.Check requests: mallory 15 (10 allowed), trent 4 (4 allowed).

GET http://stats.example/debug/vars, member "rxthrottle" (expvar.Func):
{
  "keyed": {
    "admitted": 27,
    "waited": 9,
    "cancelled": 1,
    "failed": 0,
    "total_wait_seconds": 1.1,
    "max_wait_seconds": 0.2,
    "queued": 0,
    "keys_live": 4,
    "keys_blocked": 0
  },
  "guard": {
    "checks": 19,
    "allowed": 14,
    "refused": 5,
    "errors": 0,
    "blocks": 1,
    "keys_live": 2,
    "keys_blocked": 1
  },
  "hooks": {
    "waits_by_key": {
      "alice": 7,
      "carol": 2
    },
    "admitted_by_key": {
      "alice": 12,
      "bob": 3,
      "carol": 7,
      "dave": 5
    },
    "guard_refused_by_key": {
      "mallory": 5
    },
    "guard_blocks_by_key": {
      "mallory": 1
    }
  }
}
`)
		for _, line := range []string{
			`rxthrottle_admitted_total{limiter="users"} 27`,
			`rxthrottle_waited_total{limiter="users"} 9`,
			`rxthrottle_cancelled_total{limiter="users"} 1`,
			`rxthrottle_wait_seconds_total{limiter="users"} 1.1`,
			`rxthrottle_max_wait_seconds{limiter="users"} 0.2`,
			`rxthrottle_wait_seconds_bucket{limiter="users",le="0"} 18`,
			`rxthrottle_wait_seconds_bucket{limiter="users",le="0.05"} 18`,
			`rxthrottle_wait_seconds_bucket{limiter="users",le="0.1"} 25`,
			`rxthrottle_wait_seconds_bucket{limiter="users",le="0.2"} 27`,
			`rxthrottle_wait_seconds_bucket{limiter="users",le="+Inf"} 27`,
			`rxthrottle_wait_seconds_count{limiter="users"} 27`,
			`rxthrottle_queued{limiter="users"} 0`,
			`rxthrottle_keys_live{limiter="users"} 4`,
			`rxthrottle_guard_refused_total{guard="api"} 5`,
			`rxthrottle_guard_blocks_total{guard="api"} 1`,
			`rxthrottle_guard_keys_blocked{guard="api"} 1`,
		} {
			assert.Contains(t, got, "\n"+line+"\n")
		}
		// The histogram sums float seconds, so its sum of 1.1 s is
		// 1.0999999999999999; Stats sums nanoseconds.
		waits := assertExposition(t, got)["rxthrottle_wait_seconds"]
		require.NotNil(t, waits)
		assert.InDelta(t, 1.1, waits.GetMetric()[0].GetHistogram().GetSampleSum(), 1e-9)
	})
}

// metricsHeading is what run prints before the /metrics answer.
const metricsHeading = "/metrics (promhttp, an rxprom.Collector):\n"

// assertExposition checks that what run printed after metricsHeading is
// well-formed Prometheus text exposition: the parser reads it whole, and it
// holds the families of a keyed limiter and a guard. It returns the
// families by name.
func assertExposition(t *testing.T, out string) map[string]*dto.MetricFamily {
	t.Helper()
	i := strings.Index(out, metricsHeading)
	require.GreaterOrEqual(t, i, 0, out)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(out[i+len(metricsHeading):]))
	require.NoError(t, err)
	for _, name := range []string{"rxthrottle_admitted_total", "rxthrottle_wait_seconds", "rxthrottle_guard_checks_total"} {
		assert.Contains(t, families, name)
	}
	return families
}

// TestRunLoopback runs the example as main does, over real HTTP on
// 127.0.0.1. Scheduling moves real time around, so it checks what cannot
// depend on it: every call is admitted or gave up, none lost; the guard's
// figures, which never wait; the structure of both answers.
func TestRunLoopback(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), defaultConfig(), &out))
	got := out.String()
	m := regexp.MustCompile(`(?s)GET (http://127\.0\.0\.1:\d+)/debug/vars, member "rxthrottle" \(expvar\.Func\):\n(\{.*?\n\})\n`).FindStringSubmatch(got)
	require.NotNil(t, m, got)
	var vars struct {
		Keyed struct{ Admitted, Waited, Cancelled, Queued int }
		Guard struct{ Checks, Allowed, Refused, Blocks int }
	}
	require.NoError(t, json.Unmarshal([]byte(m[2]), &vars))
	assert.Equal(t, 28, vars.Keyed.Admitted+vars.Keyed.Cancelled, "every call admitted or gave up")
	assert.LessOrEqual(t, vars.Keyed.Cancelled, 1, "only dave gives up")
	assert.Zero(t, vars.Keyed.Queued)
	assert.Equal(t, struct{ Checks, Allowed, Refused, Blocks int }{19, 14, 5, 1}, vars.Guard)
	assert.Contains(t, got, "GET "+m[1]+metricsHeading)
	assertExposition(t, got)
}

// TestRunKeep checks -keep: run serves until its context ends, then
// returns without error.
func TestRunKeep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := defaultConfig()
		cfg.serve, cfg.keep = inMemory, true
		ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
		defer cancel()
		var out bytes.Buffer
		require.NoError(t, run(ctx, cfg, &out))
		assert.Contains(t, out.String(), "\nServing http://stats.example/debug/vars and http://stats.example/metrics until interrupted.\n")
		assert.ErrorIs(t, ctx.Err(), context.DeadlineExceeded)
	})
}

func TestParseFlags(t *testing.T) {
	cfg, err := parseFlags([]string{"-rate", "3", "-window", "1s", "-keep"}, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, config{rate: 3, window: time.Second, keep: true}, cfg)

	var help bytes.Buffer
	_, err = parseFlags([]string{"-h"}, &help)
	require.ErrorIs(t, err, flag.ErrHelp)
	for _, f := range []string{"-rate", "-window", "-keep", "/debug/vars", "/metrics", "127.0.0.1"} {
		assert.Contains(t, help.String(), f)
	}

	for args, want := range map[string]string{
		"-rate 0":    "stats: -rate 0: must be between 1 and 1000",
		"-window 0s": "stats: -window 0s: must be between 1ms and 1m0s",
		"-window 2m": "stats: -window 2m0s: must be between 1ms and 1m0s",
		"extra":      `stats: unexpected argument "extra"`,
		"-rate x":    `invalid value "x" for flag -rate`,
	} {
		var stderr bytes.Buffer
		_, err := parseFlags(strings.Fields(args), &stderr)
		require.Error(t, err, args)
		assert.Contains(t, stderr.String(), want, args)
	}
}
