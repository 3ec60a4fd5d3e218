package rxotel_test

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/guard"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
	rxotel "github.com/rxthrottle/rxthrottle/otel"
)

// newMetrics returns Metrics on a MeterProvider read by a ManualReader.
func newMetrics(t *testing.T, opts ...rxotel.Option) (*rxotel.Metrics, *sdkmetric.ManualReader) {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	m, err := rxotel.New(append([]rxotel.Option{rxotel.WithMeterProvider(mp)}, opts...)...)
	require.NoError(t, err)
	return m, reader
}

// point is one data point as the tests compare it: the instrument's kind
// and unit, and its value (a histogram's as "count sum [bucket counts]").
type point struct {
	kind, unit, value string
}

// collect reads every data point, keyed "name{attr=value}".
func collect(t *testing.T, r *sdkmetric.ManualReader) map[string]point {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.Collect(context.Background(), &rm))
	out := map[string]point{}
	for _, sm := range rm.ScopeMetrics {
		assert.Equal(t, rxotel.ScopeName, sm.Scope.Name)
		for _, m := range sm.Metrics {
			add := func(kind string, attrs attribute.Set, value string) {
				out[m.Name+label(attrs)] = point{kind, m.Unit, value}
			}
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					add(sumKind(d.IsMonotonic), p.Attributes, fmt.Sprint(p.Value))
				}
			case metricdata.Sum[float64]:
				for _, p := range d.DataPoints {
					add(sumKind(d.IsMonotonic), p.Attributes, fmt.Sprint(p.Value))
				}
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					add("gauge", p.Attributes, fmt.Sprint(p.Value))
				}
			case metricdata.Gauge[float64]:
				for _, p := range d.DataPoints {
					add("gauge", p.Attributes, fmt.Sprint(p.Value))
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					add("histogram", p.Attributes, fmt.Sprintf("%d %v %v bounds %v", p.Count, p.Sum, p.BucketCounts, p.Bounds))
				}
			default:
				t.Fatalf("%s: unexpected data %T", m.Name, m.Data)
			}
		}
	}
	return out
}

func sumKind(monotonic bool) string {
	if monotonic {
		return "counter"
	}
	return "updown"
}

func label(s attribute.Set) string {
	var kv []string
	for _, a := range s.ToSlice() {
		kv = append(kv, string(a.Key)+"="+a.Value.String())
	}
	sort.Strings(kv)
	return "{" + strings.Join(kv, ",") + "}"
}

// loadBucket makes 5 callers wait at once on a bucket of 2 per 100ms (on
// the bubble's virtual clock), then one that gives up after 50ms: waits of
// 0, 0, 100ms, 100ms and 200ms, 1 cancelled (rxprom's test load).
func loadBucket(t *testing.T, b *rxthrottle.Bucket) {
	t.Helper()
	var wg sync.WaitGroup
	for range 5 {
		wg.Go(func() { assert.NoError(t, b.Wait(t.Context())) })
	}
	synctest.Wait()
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, b.Wait(ctx), context.DeadlineExceeded)
	wg.Wait()
	synctest.Wait() // the last OnAdmit hook runs after its caller was woken
}

// Every instrument of a Bucket against its schedule, exactly, on virtual
// time: the Stats at the collection and the histogram its OnAdmit hook fed.
func TestBucket(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, r := newMetrics(t, rxotel.WithBuckets(0, 0.1, 0.15))
		b, err := rxthrottle.NewBucket(rxthrottle.Per(2, 100*time.Millisecond),
			rxthrottle.OnAdmit(observeWait(t, m, "api")))
		require.NoError(t, err)
		require.NoError(t, m.AddLimiter("api", b))
		loadBucket(t, b)

		assert.Equal(t, map[string]point{
			"rxthrottle.admitted{limiter=api}":        {"counter", "{caller}", "5"},
			"rxthrottle.waited{limiter=api}":          {"counter", "{caller}", "3"},
			"rxthrottle.cancelled{limiter=api}":       {"counter", "{caller}", "1"},
			"rxthrottle.refused{limiter=api}":         {"counter", "{caller}", "0"},
			"rxthrottle.failed{limiter=api}":          {"counter", "{caller}", "0"},
			"rxthrottle.wait{limiter=api}":            {"counter", "s", "0.4"},
			"rxthrottle.max_wait{limiter=api}":        {"gauge", "s", "0.2"},
			"rxthrottle.queued{limiter=api}":          {"updown", "{caller}", "0"},
			"rxthrottle.free_tokens{limiter=api}":     {"gauge", "{token}", "1"},
			"rxthrottle.held_tokens{limiter=api}":     {"updown", "{token}", "0"},
			"rxthrottle.concurrency_cap{limiter=api}": {"gauge", "{call}", "0"},
			"rxthrottle.released{limiter=api}":        {"counter", "{token}", "0"},
			"rxthrottle.hold{limiter=api}":            {"counter", "s", "0"},
			"rxthrottle.wait.duration{limiter=api}":   {"histogram", "s", "5 0.4 [2 2 0 1] bounds [0 0.1 0.15]"},
		}, collect(t, r))
	})
}

// A held token shows in held_tokens until its Release.
func TestHeldTokens(t *testing.T) {
	m, r := newMetrics(t)
	b, err := rxthrottle.NewBucket(rxthrottle.Per(3, time.Hour))
	require.NoError(t, err)
	require.NoError(t, m.AddLimiter("api", b))
	tok, err := b.Acquire(t.Context())
	require.NoError(t, err)
	got := collect(t, r)
	assert.Equal(t, "1", got["rxthrottle.held_tokens{limiter=api}"].value)
	assert.Equal(t, "2", got["rxthrottle.free_tokens{limiter=api}"].value)
	tok.Release()
	assert.Equal(t, "0", collect(t, r)["rxthrottle.held_tokens{limiter=api}"].value)
}

// concurrency_cap is a fixed cap as set, an adaptive one as it moves
// (WithAdaptiveConcurrency: it starts at its minimum and doubles after a
// round of fast calls that filled it: 4 calls at least).
func TestConcurrencyCap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, r := newMetrics(t)
		fixed, err := rxthrottle.NewBucket(rxthrottle.Per(100, time.Second), rxthrottle.WithConcurrency(5))
		require.NoError(t, err)
		adaptive, err := rxthrottle.NewBucket(rxthrottle.Per(100, time.Second), rxthrottle.WithAdaptiveConcurrency(2, 8))
		require.NoError(t, err)
		require.NoError(t, m.AddLimiter("fixed", fixed))
		require.NoError(t, m.AddLimiter("adaptive", adaptive))
		got := collect(t, r)
		assert.Equal(t, "5", got["rxthrottle.concurrency_cap{limiter=fixed}"].value)
		assert.Equal(t, "2", got["rxthrottle.concurrency_cap{limiter=adaptive}"].value)
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
		assert.Equal(t, "4", collect(t, r)["rxthrottle.concurrency_cap{limiter=adaptive}"].value)
	})
}

// A keyed limiter (no free or held tokens, keys counted, no key
// attribute), a Transport that met a 429 and retried, and a Guard that
// blocked a key, side by side.
func TestKeyedTransportGuard(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, r := newMetrics(t)
		kl, err := rxthrottle.NewKeyed(rxthrottle.Per(1, time.Second))
		require.NoError(t, err)
		require.NoError(t, m.AddKeyed("users", kl))
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
		require.NoError(t, m.AddTransport("api", tr))
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://api.example/", nil)
		require.NoError(t, err)
		resp, err := tr.RoundTrip(req)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())

		g, err := guard.New(guard.Policy{Limit: rxthrottle.Per(2, time.Minute), Block: time.Minute},
			guard.WithLogger(slog.New(slog.DiscardHandler)))
		require.NoError(t, err)
		require.NoError(t, m.AddGuard("server", g))
		for range 3 {
			_, _ = g.Check(t.Context(), "mallory") // the third is refused and blocks her
		}

		got := collect(t, r)
		for name, want := range map[string]point{
			"rxthrottle.admitted{limiter=users}":                {"counter", "{caller}", "3"},
			"rxthrottle.waited{limiter=users}":                  {"counter", "{caller}", "1"},
			"rxthrottle.wait{limiter=users}":                    {"counter", "s", "1"},
			"rxthrottle.keys_live{limiter=users}":               {"updown", "{key}", "2"},
			"rxthrottle.keys_blocked{limiter=users}":            {"updown", "{key}", "0"},
			"rxthrottle.transport.sent{transport=api}":          {"counter", "{request}", "2"},
			"rxthrottle.transport.pushbacks{transport=api}":     {"counter", "{response}", "1"},
			"rxthrottle.transport.retries{transport=api}":       {"counter", "{request}", "1"},
			"rxthrottle.transport.cancelled{transport=api}":     {"counter", "{request}", "0"},
			"rxthrottle.transport.failed{transport=api}":        {"counter", "{request}", "0"},
			"rxthrottle.transport.header_errors{transport=api}": {"counter", "{header}", "0"},
			"rxthrottle.guard.checks{guard=server}":             {"counter", "{check}", "3"},
			"rxthrottle.guard.allowed{guard=server}":            {"counter", "{check}", "2"},
			"rxthrottle.guard.refused{guard=server}":            {"counter", "{check}", "1"},
			"rxthrottle.guard.errors{guard=server}":             {"counter", "{check}", "0"},
			"rxthrottle.guard.blocks{guard=server}":             {"counter", "{block}", "1"},
			"rxthrottle.guard.keys_live{guard=server}":          {"updown", "{key}", "1"},
			"rxthrottle.guard.keys_blocked{guard=server}":       {"updown", "{key}", "1"},
		} {
			assert.Equal(t, want, got[name], name)
		}
		assert.NotContains(t, got, "rxthrottle.free_tokens{limiter=users}", "a keyed limiter has no single free count")
		for name := range got {
			assert.NotContains(t, name, "alice", "keys are not attributes")
		}
		assert.NotContains(t, got, "rxthrottle.wait.duration{limiter=users}", "no hook, no histogram")
	})
}

// TestEveryStatIsExported fails when a Stats type gains a field that no
// instrument exports: each field is listed here with its instrument, and
// each instrument must be collected.
func TestEveryStatIsExported(t *testing.T) {
	m, r := newMetrics(t)
	addOneOfEach(t, m)
	got := collect(t, r)
	names := map[string]bool{}
	for key := range got {
		names[key[:strings.IndexByte(key, '{')]] = true
	}

	for _, s := range []struct {
		stats       any
		instruments map[string]string // field: instrument
	}{
		{rxthrottle.Stats{}, map[string]string{
			"Admitted": "rxthrottle.admitted", "Waited": "rxthrottle.waited",
			"Cancelled": "rxthrottle.cancelled", "Refused": "rxthrottle.refused", "Failed": "rxthrottle.failed",
			"TotalWait": "rxthrottle.wait",
			"MaxWait":   "rxthrottle.max_wait", "Queued": "rxthrottle.queued",
			"Held": "rxthrottle.held_tokens", "Free": "rxthrottle.free_tokens",
			"KeysLive": "rxthrottle.keys_live", "KeysBlocked": "rxthrottle.keys_blocked",
			"ConcurrencyCap": "rxthrottle.concurrency_cap",
			"Released":       "rxthrottle.released", "TotalHold": "rxthrottle.hold",
		}},
		{httpthrottle.TransportStats{}, map[string]string{
			"Sent": "rxthrottle.transport.sent", "Cancelled": "rxthrottle.transport.cancelled",
			"Failed":    "rxthrottle.transport.failed",
			"Pushbacks": "rxthrottle.transport.pushbacks", "Retries": "rxthrottle.transport.retries",
			"RetriesOverBudget":   "rxthrottle.transport.retries_over_budget",
			"RetriesAnsweredLate": "rxthrottle.transport.retries_answered_late",
			"RefusedStreams":      "rxthrottle.transport.refused_streams",
			"HeaderErrors":        "rxthrottle.transport.header_errors",
			"Attempts":            "rxthrottle.transport.attempts", "Resends": "rxthrottle.transport.resends",
			"ErrorsUnwritten": "rxthrottle.transport.errors_unwritten", "ErrorsAfterWrite": "rxthrottle.transport.errors_after_write",
			"HeldPastError": "rxthrottle.transport.held_past_error", "HoldingPastError": "rxthrottle.transport.holding_past_error",
			"AttemptTimeouts": "rxthrottle.transport.attempt_timeouts",
			"LateAnswers":     "rxthrottle.transport.late_answers",
			"PeerCloses":      "rxthrottle.transport.peer_closes",
			"Resets":          "rxthrottle.transport.resets",
			"KeptOpen":        "rxthrottle.transport.kept_open",
		}},
		{httpthrottle.LearnStats{}, map[string]string{
			"Changes": "rxthrottle.learn.changes", "NotApplied": "rxthrottle.learn.not_applied",
			"Refusals": "rxthrottle.learn.refusals", "Buckets": "rxthrottle.learn.buckets",
			"Last": "rxthrottle.learn.last_rate",
		}},
		{guard.Stats{}, map[string]string{
			"Checks": "rxthrottle.guard.checks", "Allowed": "rxthrottle.guard.allowed",
			"Refused": "rxthrottle.guard.refused", "Errors": "rxthrottle.guard.errors",
			"Blocks": "rxthrottle.guard.blocks", "KeysLive": "rxthrottle.guard.keys_live",
			"KeysBlocked": "rxthrottle.guard.keys_blocked", "Full": "rxthrottle.guard.full",
		}},
	} {
		typ := reflect.TypeOf(s.stats)
		var fields []string
		for f := range typ.Fields() {
			fields = append(fields, f.Name)
		}
		assert.ElementsMatch(t, slices.Collect(maps.Keys(s.instruments)), fields, "the fields of %v", typ)
		for field, inst := range s.instruments {
			assert.True(t, names[inst], "%v.%s: %s not collected", typ, field, inst)
		}
	}
	assert.Len(t, got, (8+5)+(8+2)+20+5+8+1, "the points of a limiter, a keyed one, a Transport, its learning, a Guard, and one histogram")
}

// addOneOfEach adds one of each kind to m: a Bucket "b" (with the wait
// hook, and one caller admitted), a Keyed "k", a Transport "t" and a Guard
// "g".
func addOneOfEach(t *testing.T, m *rxotel.Metrics) {
	t.Helper()
	b, err := rxthrottle.NewBucket(rxthrottle.Per(1, time.Second), rxthrottle.OnAdmit(observeWait(t, m, "b")))
	require.NoError(t, err)
	kl, err := rxthrottle.NewKeyed(rxthrottle.Per(1, time.Second))
	require.NoError(t, err)
	tr, err := httpthrottle.NewTransport(b)
	require.NoError(t, err)
	g, err := guard.New(guard.Policy{Limit: rxthrottle.Per(1, time.Second), Block: time.Second})
	require.NoError(t, err)
	require.NoError(t, m.AddLimiter("b", b))
	require.NoError(t, m.AddKeyed("k", kl))
	require.NoError(t, m.AddTransport("t", tr))
	require.NoError(t, rxotel.AddStats(m, "t", tr.LearnStats))
	require.NoError(t, m.AddGuard("g", g))
	require.NoError(t, b.Wait(t.Context()))
}

// Close stops the observations; the histogram keeps what it recorded.
func TestClose(t *testing.T) {
	m, r := newMetrics(t)
	b, err := rxthrottle.NewBucket(rxthrottle.Per(1, time.Second), rxthrottle.OnAdmit(observeWait(t, m, "b")))
	require.NoError(t, err)
	require.NoError(t, m.AddLimiter("b", b))
	require.NoError(t, b.Wait(t.Context()))
	assert.Len(t, collect(t, r), 13+1)
	require.NoError(t, m.Close())
	require.NoError(t, m.Close(), "a second Close")
	got := collect(t, r)
	assert.Len(t, got, 1)
	assert.Contains(t, got, "rxthrottle.wait.duration{limiter=b}")
}

func TestErrors(t *testing.T) {
	_, err := rxotel.New(nil)
	assert.EqualError(t, err, "rxotel: New: option 0 is nil")
	_, err = rxotel.New(rxotel.WithMeterProvider(nil))
	assert.EqualError(t, err, "rxotel: WithMeterProvider(nil): a MeterProvider is required")
	var typedNilMP *sdkmetric.MeterProvider
	_, err = rxotel.New(rxotel.WithMeterProvider(typedNilMP))
	assert.EqualError(t, err, "rxotel: WithMeterProvider(nil): a MeterProvider is required")
	_, err = rxotel.New(rxotel.WithBuckets())
	assert.EqualError(t, err, "rxotel: WithBuckets(): at least one bound is needed")
	_, err = rxotel.New(rxotel.WithBuckets(1, 1))
	assert.EqualError(t, err, "rxotel: WithBuckets[1 1]: bound 1 (1) is not above bound 0 (1)")

	m, _ := newMetrics(t)
	var typedNil *rxthrottle.Bucket
	assert.EqualError(t, m.AddLimiter("a", nil), `rxotel: AddLimiter("a"): the limiter is nil`)
	assert.EqualError(t, m.AddLimiter("a", typedNil), `rxotel: AddLimiter("a"): the limiter is nil`)
	assert.EqualError(t, m.AddKeyed("a", nil), `rxotel: AddKeyed("a"): the limiter is nil`)
	assert.EqualError(t, m.AddTransport("a", nil), `rxotel: AddTransport("a"): the Transport is nil`)
	assert.EqualError(t, m.AddGuard("a", nil), `rxotel: AddGuard("a"): the Guard is nil`)
	b, err := rxthrottle.NewBucket(rxthrottle.Per(1, time.Second))
	require.NoError(t, err)
	assert.EqualError(t, m.AddLimiter("", b), "rxotel: AddLimiter: the name is empty")
	require.NoError(t, m.AddLimiter("a", b))
	assert.EqualError(t, m.AddLimiter("a", b), `rxotel: AddLimiter("a"): a limiter of that name is already added`)

	var zero rxotel.Metrics
	assert.EqualError(t, zero.AddLimiter("a", b), "rxotel: Metrics used without New")
	assert.NoError(t, zero.Close())
	_, err = m.ObserveWait("")
	assert.EqualError(t, err, "rxotel: ObserveWait: the name is empty")
}

// TestObserveWaitWithoutNew: ObserveWait on nil or zero Metrics returns an
// error and no hook. It used to return a hook that panicked with a nil
// pointer at the limiter's first admission, on the limiter's goroutine.
func TestObserveWaitWithoutNew(t *testing.T) {
	for name, m := range map[string]*rxotel.Metrics{"nil": nil, "zero": new(rxotel.Metrics)} {
		hook, err := m.ObserveWait("a")
		assert.EqualError(t, err, "rxotel: Metrics used without New", name)
		assert.Nil(t, hook, name)
	}
}

// observeWait is m.ObserveWait(name), which must succeed.
func observeWait(t *testing.T, m *rxotel.Metrics, name string) func(rxthrottle.Event) {
	t.Helper()
	hook, err := m.ObserveWait(name)
	require.NoError(t, err)
	return hook
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func response(r *http.Request, status int, header ...string) *http.Response {
	h := http.Header{}
	for i := 0; i+1 < len(header); i += 2 {
		h.Set(header[i], header[i+1])
	}
	return &http.Response{StatusCode: status, Header: h, Body: http.NoBody, Request: r}
}
