package rxprom_test

import (
	"context"
	"log/slog"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/guard"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
	rxprom "github.com/rxthrottle/rxthrottle/prometheus"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// loadBucket makes 5 callers wait at once on a bucket of 2 per 100ms (on
// the bubble's virtual clock), then one that gives up after 50ms: waits of
// 0, 0, 100ms, 100ms and 200ms, 1 cancelled. It returns at 200ms, when the
// token taken at 100ms is free again.
func loadBucket(t *testing.T, b *rxthrottle.Bucket) {
	t.Helper()
	var wg sync.WaitGroup
	for range 5 {
		wg.Go(func() { assert.NoError(t, b.Wait(t.Context())) })
	}
	synctest.Wait() // 2 admitted, 3 queued
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, b.Wait(ctx), context.DeadlineExceeded)
	wg.Wait()
}

// TestCollectorBucket checks every series of a Bucket against its
// schedule, exactly, on virtual time: the Stats at the scrape and the
// histogram the OnAdmit hook fed.
func TestCollectorBucket(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, err := rxprom.NewCollector(rxprom.WithBuckets(0, 0.1, 0.15))
		require.NoError(t, err)
		b, err := rxthrottle.NewBucket(rxthrottle.Per(2, 100*time.Millisecond),
			rxthrottle.OnAdmit(observeWait(t, c, "api")))
		require.NoError(t, err)
		require.NoError(t, c.AddLimiter("api", b))
		loadBucket(t, b)

		assert.Equal(t, `# HELP rxthrottle_admitted_total Callers or items the limiter let through.
# TYPE rxthrottle_admitted_total counter
rxthrottle_admitted_total{limiter="api"} 5
# HELP rxthrottle_cancelled_total Waits that ended without a token.
# TYPE rxthrottle_cancelled_total counter
rxthrottle_cancelled_total{limiter="api"} 1
# HELP rxthrottle_concurrency_cap Cap on the calls in flight now (WithConcurrency, or WithAdaptiveConcurrency as it moved); 0 for none.
# TYPE rxthrottle_concurrency_cap gauge
rxthrottle_concurrency_cap{limiter="api"} 0
# HELP rxthrottle_failed_total Callers that ended with an error of the limiter's store (a shared store's outage under FailClosed).
# TYPE rxthrottle_failed_total counter
rxthrottle_failed_total{limiter="api"} 0
# HELP rxthrottle_free_tokens Tokens free now (for several limits, the smallest count).
# TYPE rxthrottle_free_tokens gauge
rxthrottle_free_tokens{limiter="api"} 1
# HELP rxthrottle_held_tokens Tokens held now by the Tokens of Acquire, not yet released.
# TYPE rxthrottle_held_tokens gauge
rxthrottle_held_tokens{limiter="api"} 0
# HELP rxthrottle_hold_seconds_total Sum of the holds of the Tokens of Acquire whose call completed, from admission to release or timeout.
# TYPE rxthrottle_hold_seconds_total counter
rxthrottle_hold_seconds_total{limiter="api"} 0
# HELP rxthrottle_max_wait_seconds Longest wait of an admitted caller so far.
# TYPE rxthrottle_max_wait_seconds gauge
rxthrottle_max_wait_seconds{limiter="api"} 0.2
# HELP rxthrottle_queued Callers waiting now.
# TYPE rxthrottle_queued gauge
rxthrottle_queued{limiter="api"} 0
# HELP rxthrottle_refused_total Callers refused at once because the queue bound was reached (WithMaxQueue).
# TYPE rxthrottle_refused_total counter
rxthrottle_refused_total{limiter="api"} 0
# HELP rxthrottle_released_total Tokens of Acquire whose call completed: released or timed out.
# TYPE rxthrottle_released_total counter
rxthrottle_released_total{limiter="api"} 0
# HELP rxthrottle_wait_seconds How long each admitted caller waited for a token (fed by the limiter's OnAdmit hook).
# TYPE rxthrottle_wait_seconds histogram
rxthrottle_wait_seconds_bucket{limiter="api",le="0"} 2
rxthrottle_wait_seconds_bucket{limiter="api",le="0.1"} 4
rxthrottle_wait_seconds_bucket{limiter="api",le="0.15"} 4
rxthrottle_wait_seconds_bucket{limiter="api",le="+Inf"} 5
rxthrottle_wait_seconds_sum{limiter="api"} 0.4
rxthrottle_wait_seconds_count{limiter="api"} 5
# HELP rxthrottle_wait_seconds_total Sum of the waits of admitted callers.
# TYPE rxthrottle_wait_seconds_total counter
rxthrottle_wait_seconds_total{limiter="api"} 0.4
# HELP rxthrottle_waited_total Admitted callers that had to wait for a token or a pause.
# TYPE rxthrottle_waited_total counter
rxthrottle_waited_total{limiter="api"} 3
`, exposition(t, c))
	})
}

// TestCollectorHeld checks rxthrottle_held_tokens: a token of Acquire
// counts as held, and no longer once released, when its hold counts in
// rxthrottle_released_total and rxthrottle_hold_seconds_total.
func TestCollectorHeld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, err := rxprom.NewCollector()
		require.NoError(t, err)
		b, err := rxthrottle.NewBucket(rxthrottle.Per(3, time.Hour))
		require.NoError(t, err)
		require.NoError(t, c.AddLimiter("api", b))
		tok, err := b.Acquire(t.Context())
		require.NoError(t, err)
		got := exposition(t, c)
		assert.Contains(t, got, "\n"+`rxthrottle_held_tokens{limiter="api"} 1`+"\n")
		assert.Contains(t, got, "\n"+`rxthrottle_free_tokens{limiter="api"} 2`+"\n")
		time.Sleep(2 * time.Second) // the bubble's clock: the hold lasts 2 s exactly
		tok.Release()
		got = exposition(t, c)
		assert.Contains(t, got, "\n"+`rxthrottle_held_tokens{limiter="api"} 0`+"\n")
		assert.Contains(t, got, "\n"+`rxthrottle_released_total{limiter="api"} 1`+"\n")
		assert.Contains(t, got, "\n"+`rxthrottle_hold_seconds_total{limiter="api"} 2`+"\n")
	})
}

// TestCollectorConcurrencyCap checks rxthrottle_concurrency_cap: a fixed
// cap as set, an adaptive one as it moves (WithAdaptiveConcurrency: it
// starts at its minimum and doubles after a round of fast calls that
// filled it: 4 calls at least).
func TestCollectorConcurrencyCap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, err := rxprom.NewCollector()
		require.NoError(t, err)
		fixed, err := rxthrottle.NewBucket(rxthrottle.Per(100, time.Second), rxthrottle.WithConcurrency(5))
		require.NoError(t, err)
		adaptive, err := rxthrottle.NewBucket(rxthrottle.Per(100, time.Second), rxthrottle.WithAdaptiveConcurrency(2, 8))
		require.NoError(t, err)
		require.NoError(t, c.AddLimiter("fixed", fixed))
		require.NoError(t, c.AddLimiter("adaptive", adaptive))
		got := exposition(t, c)
		assert.Contains(t, got, "\n"+`rxthrottle_concurrency_cap{limiter="fixed"} 5`+"\n")
		assert.Contains(t, got, "\n"+`rxthrottle_concurrency_cap{limiter="adaptive"} 2`+"\n")
		for range 2 { // a round: 4 calls (the least), 2 at once
			var toks []rxthrottle.Token
			for range 2 {
				tok, err := adaptive.Acquire(t.Context())
				require.NoError(t, err)
				toks = append(toks, tok)
			}
			time.Sleep(10 * time.Millisecond) // the calls' latency
			for _, tok := range toks {
				tok.Release()
			}
		}
		require.Equal(t, 4, adaptive.Stats().ConcurrencyCap)
		assert.Contains(t, exposition(t, c), "\n"+`rxthrottle_concurrency_cap{limiter="adaptive"} 4`+"\n")
	})
}

// TestCollectorKeyConcurrencyCap: AddLimiter over rxthrottle.ForKey
// exports one key's cap of a Keyed limiter as it moves (each key learns
// its own; Keyed.ConcurrencyCap), where the Keyed itself has no one cap.
func TestCollectorKeyConcurrencyCap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, err := rxprom.NewCollector()
		require.NoError(t, err)
		k, err := rxthrottle.NewKeyed(rxthrottle.Per(100, time.Second), rxthrottle.WithAdaptiveConcurrency(2, 8))
		require.NoError(t, err)
		require.NoError(t, c.AddLimiter("search", rxthrottle.ForKey(k, "search")))
		require.NoError(t, c.AddLimiter("export", rxthrottle.ForKey(k, "export")))
		for range 2 { // a round of search's: 4 calls (the least), 2 at once
			var toks []rxthrottle.Token
			for range 2 {
				tok, err := k.Acquire(t.Context(), "search")
				require.NoError(t, err)
				toks = append(toks, tok)
			}
			time.Sleep(10 * time.Millisecond) // the calls' latency
			for _, tok := range toks {
				tok.Release()
			}
		}
		require.Equal(t, 4, k.ConcurrencyCap("search"))
		got := exposition(t, c)
		assert.Contains(t, got, "\n"+`rxthrottle_concurrency_cap{limiter="search"} 4`+"\n")
		assert.Contains(t, got, "\n"+`rxthrottle_concurrency_cap{limiter="export"} 2`+"\n")
	})
}

// TestEveryStatIsExported fails when a Stats type gains a field that no
// series exports: each field is listed here with its series, and each
// series must be in the exposition.
func TestEveryStatIsExported(t *testing.T) {
	got := exposition(t, fullCollector(t))

	for _, s := range []struct {
		stats  any
		series map[string]string // field: series
	}{
		{rxthrottle.Stats{}, map[string]string{
			"Admitted": "rxthrottle_admitted_total", "Waited": "rxthrottle_waited_total",
			"Cancelled": "rxthrottle_cancelled_total", "Refused": "rxthrottle_refused_total", "Failed": "rxthrottle_failed_total",
			"TotalWait": "rxthrottle_wait_seconds_total",
			"MaxWait":   "rxthrottle_max_wait_seconds", "Queued": "rxthrottle_queued",
			"Held": "rxthrottle_held_tokens", "Free": "rxthrottle_free_tokens",
			"KeysLive": "rxthrottle_keys_live", "KeysBlocked": "rxthrottle_keys_blocked",
			"ConcurrencyCap": "rxthrottle_concurrency_cap",
			"Released":       "rxthrottle_released_total", "TotalHold": "rxthrottle_hold_seconds_total",
		}},
		{httpthrottle.TransportStats{}, map[string]string{
			"Sent": "rxthrottle_transport_sent_total", "Cancelled": "rxthrottle_transport_cancelled_total",
			"Failed":    "rxthrottle_transport_failed_total",
			"Pushbacks": "rxthrottle_transport_pushbacks_total", "Retries": "rxthrottle_transport_retries_total",
			"RetriesOverBudget":   "rxthrottle_transport_retries_over_budget_total",
			"RetriesAnsweredLate": "rxthrottle_transport_retries_answered_late_total",
			"RefusedStreams":      "rxthrottle_transport_refused_streams_total",
			"HeaderErrors":        "rxthrottle_transport_header_errors_total",
			"Attempts":            "rxthrottle_transport_attempts_total", "Resends": "rxthrottle_transport_resends_total",
			"ErrorsUnwritten":  "rxthrottle_transport_errors_unwritten_total",
			"ErrorsAfterWrite": "rxthrottle_transport_errors_after_write_total",
			"HeldPastError":    "rxthrottle_transport_held_past_error_total",
			"HoldingPastError": "rxthrottle_transport_holding_past_error",
			"AttemptTimeouts":  "rxthrottle_transport_attempt_timeouts_total",
			"LateAnswers":      "rxthrottle_transport_late_answers_total",
			"PeerCloses":       "rxthrottle_transport_peer_closes_total",
			"Resets":           "rxthrottle_transport_resets_total",
			"KeptOpen":         "rxthrottle_transport_kept_open",
		}},
		{guard.Stats{}, map[string]string{
			"Checks": "rxthrottle_guard_checks_total", "Allowed": "rxthrottle_guard_allowed_total",
			"Refused": "rxthrottle_guard_refused_total", "Errors": "rxthrottle_guard_errors_total",
			"Blocks": "rxthrottle_guard_blocks_total", "KeysLive": "rxthrottle_guard_keys_live",
			"KeysBlocked": "rxthrottle_guard_keys_blocked", "Full": "rxthrottle_guard_full_total",
		}},
		{httpthrottle.LearnStats{}, map[string]string{
			"Changes": "rxthrottle_learn_changes_total", "NotApplied": "rxthrottle_learn_not_applied_total",
			"Refusals": "rxthrottle_learn_refusals_total", "Buckets": "rxthrottle_learn_buckets",
			"Last": "rxthrottle_learn_last_rate",
		}},
	} {
		typ := reflect.TypeOf(s.stats)
		var fields []string
		for f := range typ.Fields() {
			fields = append(fields, f.Name)
		}
		assert.ElementsMatch(t, slices.Collect(maps.Keys(s.series)), fields, "the fields of %v", typ)
		for field, series := range s.series {
			assert.Contains(t, got, "\n"+series+"{", "%v.%s", typ, field)
		}
	}
}

// TestCollectorKeyedTransportGuard checks the series of a keyed limiter (no
// free_tokens, keys gauges, no key label), a Transport that met a 429 and
// retried, and a Guard that blocked a key, side by side in one Collector.
func TestCollectorKeyedTransportGuard(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, err := rxprom.NewCollector()
		require.NoError(t, err)

		kl, err := rxthrottle.NewKeyed(rxthrottle.Per(1, time.Second))
		require.NoError(t, err)
		require.NoError(t, c.AddKeyed("users", kl))
		for _, key := range []string{"alice", "bob", "alice"} {
			require.NoError(t, kl.Wait(t.Context(), key)) // alice's second waits 1s
		}

		b, err := rxthrottle.NewBucket(rxthrottle.Per(10, time.Second))
		require.NoError(t, err)
		calls := 0
		tr, err := httpthrottle.NewTransport(b, httpthrottle.WithMaxAttempts(2),
			httpthrottle.WithBase(roundTripFunc(func(r *http.Request) (*http.Response, error) {
				calls++
				if calls == 1 {
					return response(r, http.StatusTooManyRequests, "Retry-After", "2"), nil
				}
				return response(r, http.StatusOK), nil
			})))
		require.NoError(t, err)
		require.NoError(t, c.AddTransport("api", tr))
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.example/", nil)
		require.NoError(t, err)
		resp, err := tr.RoundTrip(req)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		assert.Equal(t, http.StatusOK, resp.StatusCode)

		g, err := guard.New(guard.Policy{Limit: rxthrottle.Per(2, time.Minute), Block: time.Minute},
			guard.WithLogger(slog.New(slog.DiscardHandler)))
		require.NoError(t, err)
		require.NoError(t, c.AddGuard("server", g))
		for range 3 {
			_, _ = g.Check(t.Context(), "mallory") // the third is refused and blocks her
		}

		got := exposition(t, c)
		for _, line := range []string{
			`rxthrottle_admitted_total{limiter="users"} 3`,
			`rxthrottle_waited_total{limiter="users"} 1`,
			`rxthrottle_wait_seconds_total{limiter="users"} 1`,
			`rxthrottle_keys_live{limiter="users"} 2`,
			`rxthrottle_keys_blocked{limiter="users"} 0`,
			`rxthrottle_transport_sent_total{transport="api"} 2`,
			`rxthrottle_transport_pushbacks_total{transport="api"} 1`,
			`rxthrottle_transport_retries_total{transport="api"} 1`,
			`rxthrottle_transport_cancelled_total{transport="api"} 0`,
			`rxthrottle_transport_failed_total{transport="api"} 0`,
			`rxthrottle_transport_header_errors_total{transport="api"} 0`,
			`rxthrottle_guard_checks_total{guard="server"} 3`,
			`rxthrottle_guard_allowed_total{guard="server"} 2`,
			`rxthrottle_guard_refused_total{guard="server"} 1`,
			`rxthrottle_guard_errors_total{guard="server"} 0`,
			`rxthrottle_guard_blocks_total{guard="server"} 1`,
			`rxthrottle_guard_keys_live{guard="server"} 1`,
			`rxthrottle_guard_keys_blocked{guard="server"} 1`,
		} {
			assert.Contains(t, got, "\n"+line+"\n")
		}
		assert.NotContains(t, got, `rxthrottle_free_tokens{limiter="users"}`, "a keyed limiter has no single free count")
		assert.NotContains(t, got, "alice", "keys are not labels")
		assert.NotContains(t, got, "rxthrottle_wait_seconds_bucket", "no hook, no histogram")
	})
}

// TestCollectorLint runs client_golang's metric linter over every series.
func TestCollectorLint(t *testing.T) {
	c := fullCollector(t)
	problems, err := testutil.CollectAndLint(c)
	require.NoError(t, err)
	assert.Empty(t, problems)
	assert.Equal(t, (8+5)+(8+2)+20+5+8+1, testutil.CollectAndCount(c),
		"the series of a limiter, a keyed one, a Transport, its learning, a Guard, and one histogram")
}

// fullCollector returns a Collector with one of each kind added: a Bucket
// "b" (with the wait hook, and one caller admitted), a Keyed "k", a
// Transport "t" and a Guard "g".
func fullCollector(t *testing.T) *rxprom.Collector {
	t.Helper()
	c, err := rxprom.NewCollector()
	require.NoError(t, err)
	b, err := rxthrottle.NewBucket(rxthrottle.Per(1, time.Second), rxthrottle.OnAdmit(observeWait(t, c, "b")))
	require.NoError(t, err)
	kl, err := rxthrottle.NewKeyed(rxthrottle.Per(1, time.Second))
	require.NoError(t, err)
	tr, err := httpthrottle.NewTransport(b)
	require.NoError(t, err)
	g, err := guard.New(guard.Policy{Limit: rxthrottle.Per(1, time.Second), Block: time.Second})
	require.NoError(t, err)
	require.NoError(t, c.AddLimiter("b", b))
	require.NoError(t, c.AddKeyed("k", kl))
	require.NoError(t, c.AddTransport("t", tr))
	require.NoError(t, rxprom.AddStats(c, "t", tr.LearnStats))
	require.NoError(t, c.AddGuard("g", g))
	require.NoError(t, b.Wait(t.Context()))
	return c
}

func TestCollectorErrors(t *testing.T) {
	c, err := rxprom.NewCollector()
	require.NoError(t, err)
	b, err := rxthrottle.NewBucket(rxthrottle.Per(1, time.Second))
	require.NoError(t, err)
	kl, err := rxthrottle.NewKeyed(rxthrottle.Per(1, time.Second))
	require.NoError(t, err)
	var (
		nilBucket    *rxthrottle.Bucket
		nilKeyed     *rxthrottle.Keyed
		nilTransport *httpthrottle.Transport
		nilGuard     *guard.Guard
	)
	require.NoError(t, c.AddLimiter("api", b))
	steps := []struct {
		name string
		err  error
		want string
	}{
		{"empty name", c.AddLimiter("", b), "rxprom: AddLimiter: the name is empty"},
		{"nil limiter", c.AddLimiter("x", nil), `rxprom: AddLimiter("x"): the limiter is nil`},
		{"nil *Bucket", c.AddLimiter("x", nilBucket), `rxprom: AddLimiter("x"): the limiter is nil`},
		{"name taken", c.AddLimiter("api", b), `rxprom: AddLimiter("api"): a limiter of that name is already added`},
		{"name taken by a keyed", c.AddKeyed("api", kl), `rxprom: AddKeyed("api"): a limiter of that name is already added`},
		{"nil *Keyed", c.AddKeyed("k", nilKeyed), `rxprom: AddKeyed("k"): the limiter is nil`},
		{"nil Transport", c.AddTransport("t", nilTransport), `rxprom: AddTransport("t"): the Transport is nil`},
		{"nil Guard", c.AddGuard("g", nilGuard), `rxprom: AddGuard("g"): the Guard is nil`},
	}
	for i, s := range steps {
		assert.EqualError(t, s.err, s.want, "step %d (%s)", i, s.name)
	}

	_, err = c.ObserveWait("")
	assert.EqualError(t, err, "rxprom: ObserveWait: the name is empty")

	for _, s := range []struct {
		opts []rxprom.Option
		want string
	}{
		{[]rxprom.Option{nil}, "rxprom: NewCollector: option 0 is nil"},
		{[]rxprom.Option{rxprom.WithBuckets()}, "rxprom: WithBuckets(): at least one bound is needed"},
		{[]rxprom.Option{rxprom.WithBuckets(1, 1)}, "rxprom: WithBuckets[1 1]: bound 1 (1) is not above bound 0 (1)"},
		{[]rxprom.Option{rxprom.WithBuckets(2, 1)}, "rxprom: WithBuckets[2 1]: bound 1 (1) is not above bound 0 (2)"},
	} {
		c, err := rxprom.NewCollector(s.opts...)
		assert.Nil(t, c)
		assert.EqualError(t, err, s.want)
	}
}

// exposition gathers c through a pedantic registry (which checks that what
// Collect sends matches what Describe announced) and returns the text
// format, as /metrics would serve it.
func exposition(t *testing.T, c prometheus.Collector) string {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(c))
	mfs, err := reg.Gather()
	require.NoError(t, err)
	var b strings.Builder
	for _, mf := range mfs {
		_, err := expfmt.MetricFamilyToText(&b, mf)
		require.NoError(t, err)
	}
	return b.String()
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// response is a response to r with status and header pairs, and an empty
// body.
func response(r *http.Request, status int, header ...string) *http.Response {
	h := http.Header{}
	for i := 0; i+1 < len(header); i += 2 {
		h.Set(header[i], header[i+1])
	}
	return &http.Response{StatusCode: status, Header: h, Body: http.NoBody, Request: r}
}

// TestCollectorWithoutNew: a nil or zero Collector returns errors from
// ObserveWait and the Adds, and exports nothing; it used to panic with a
// nil pointer in ObserveWait, and at the scrape after an Add.
func TestCollectorWithoutNew(t *testing.T) {
	b, err := rxthrottle.NewBucket(rxthrottle.Per(1, time.Second))
	require.NoError(t, err)
	for name, c := range map[string]*rxprom.Collector{"nil": nil, "zero": new(rxprom.Collector)} {
		hook, err := c.ObserveWait("a")
		assert.EqualError(t, err, "rxprom: Collector used without NewCollector", name)
		assert.Nil(t, hook, name)
		assert.EqualError(t, c.AddLimiter("a", b), "rxprom: Collector used without NewCollector", name)
		assert.Equal(t, "", exposition(t, c), name)
	}
}

// observeWait is c.ObserveWait(name), which must succeed.
func observeWait(t *testing.T, c *rxprom.Collector, name string) func(rxthrottle.Event) {
	t.Helper()
	hook, err := c.ObserveWait(name)
	require.NoError(t, err)
	return hook
}
