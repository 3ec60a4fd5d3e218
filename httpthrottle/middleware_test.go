package httpthrottle_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/guard"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
)

var guardT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// noTimeLogger logs to buf as text, without the handler's real-time stamp.
func noTimeLogger(buf *bytes.Buffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey && len(groups) == 0 {
				return slog.Attr{}
			}
			return a
		},
	}))
}

// guardServer is a loopback server whose handler is guarded by Middleware
// over a guard.Guard on a virtual clock.
type guardServer struct {
	srv   *httptest.Server
	mock  *clock.Mock
	calls atomic.Int64 // requests that reached the handler
	log   bytes.Buffer // the guard's log
}

func newGuardServer(t *testing.T, p guard.Policy, gopts []guard.Option, opts ...httpthrottle.MiddlewareOption) *guardServer {
	t.Helper()
	gs := &guardServer{mock: clock.NewMock()}
	gs.mock.Set(guardT0)
	g, err := guard.New(p, append([]guard.Option{guard.WithClock(gs.mock), guard.WithLogger(noTimeLogger(&gs.log))}, gopts...)...)
	require.NoError(t, err)
	mw, err := httpthrottle.Middleware(g, opts...)
	require.NoError(t, err)
	gs.srv = httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gs.calls.Add(1)
		_, _ = io.WriteString(w, "ok")
	})))
	t.Cleanup(gs.srv.Close)
	return gs
}

// reply is what a test reads of a response.
type reply struct {
	status int
	header map[string]string // only the fields the test names
	body   string
}

func (gs *guardServer) get(t *testing.T, user string, fields ...string) reply {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, gs.srv.URL+"/api", nil)
	require.NoError(t, err)
	if user != "" {
		req.Header.Set("X-User-ID", user)
	}
	resp, err := gs.srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	r := reply{status: resp.StatusCode, header: map[string]string{}, body: string(body)}
	for _, f := range fields {
		r.header[f] = resp.Header.Get(f)
	}
	return r
}

var quotaFields = []string{"Retry-After", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "RateLimit-Policy", "Content-Type"}

func quota(retry, limit, remaining, reset, policy, ctype string) map[string]string {
	return map[string]string{
		"Retry-After": retry, "RateLimit-Limit": limit, "RateLimit-Remaining": remaining,
		"RateLimit-Reset": reset, "RateLimit-Policy": policy, "Content-Type": ctype,
	}
}

const jsonType = "application/json; charset=utf-8"

func TestMiddlewareSteps(t *testing.T) {
	gs := newGuardServer(t, guard.Policy{Limit: rxthrottle.Per(3, time.Minute), Block: 5 * time.Minute}, nil,
		httpthrottle.WithKey(httpthrottle.KeyByHeader("X-User-ID")))
	ok := func(remaining, reset string) reply {
		return reply{200, quota("", "3", remaining, reset, "3;w=60", "text/plain; charset=utf-8"), "ok"}
	}
	limited := func(retry, msg string) reply {
		return reply{429, quota(retry, "3", "0", retry, "3;w=60", jsonType), `{"message":"` + msg + `"}` + "\n"}
	}
	steps := []struct {
		at    time.Duration
		user  string
		want  reply
		calls int64 // handler calls so far
	}{
		{0, "alice", ok("2", "60"), 1},
		{10 * time.Second, "alice", ok("1", "50"), 2},
		{59*time.Second + 500*time.Millisecond, "alice", ok("0", "1"), 3}, // 0.5 s rounds up
		{59*time.Second + 500*time.Millisecond, "alice", limited("300", "Too many requests: retry in 300 seconds."), 3},
		{59*time.Second + 500*time.Millisecond, "bob", ok("2", "60"), 4},
		{60 * time.Second, "alice", limited("300", "Too many requests: retry in 300 seconds."), 4}, // 299.5 s rounds up
		{61 * time.Second, "alice", limited("299", "Too many requests: retry in 299 seconds."), 4},
		{359 * time.Second, "alice", limited("1", "Too many requests: retry in 1 second."), 4},
		{359*time.Second + 500*time.Millisecond - 1, "alice", limited("1", "Too many requests: retry in 1 second."), 4},
		{359*time.Second + 500*time.Millisecond, "alice", ok("2", "60"), 5}, // fresh at exactly the block's end
		{400 * time.Second, "", ok("2", "60"), 6},                           // no header: keyed by 127.0.0.1
	}
	for i, st := range steps {
		gs.mock.Set(guardT0.Add(st.at))
		got := gs.get(t, st.user, quotaFields...)
		require.Equal(t, st.want, got, "step %d: GET as %q at %v = %+v, want %+v", i, st.user, st.at, got, st.want)
		require.Equal(t, st.calls, gs.calls.Load(), "step %d: handler calls", i)
	}
	require.Equal(t,
		`level=WARN msg="key is over the usage limit" key=alice count=4 limit=3 window=1m0s until=2026-03-01T12:05:59.500Z`+"\n",
		gs.log.String())
}

func TestMiddlewareSeedPolicyOverLoopback(t *testing.T) {
	// 30 per 60 s, cool-down 300 s, keyed by the client's IP.
	gs := newGuardServer(t, guard.Policy{Limit: rxthrottle.Per(30, time.Minute), Block: 5 * time.Minute}, nil)
	for i := range 30 {
		r := gs.get(t, "", "RateLimit-Remaining")
		require.Equal(t, 200, r.status, "request %d", i)
		require.Equal(t, fmt.Sprint(29-i), r.header["RateLimit-Remaining"], "request %d", i)
	}
	r := gs.get(t, "", "Retry-After")
	require.Equal(t, 429, r.status)
	require.Equal(t, "300", r.header["Retry-After"])
	require.Contains(t, gs.log.String(), `key=127.0.0.1 count=31 limit=30`)

	gs.mock.Add(5*time.Minute - time.Nanosecond)
	r = gs.get(t, "", "Retry-After")
	require.Equal(t, 429, r.status)
	require.Equal(t, "1", r.header["Retry-After"])
	gs.mock.Add(time.Nanosecond)
	require.Equal(t, 200, gs.get(t, "").status, "the cool-down ends at exactly 300 s")
	require.Equal(t, int64(31), gs.calls.Load())
}

func TestMiddlewareConcurrentClients(t *testing.T) {
	// Many concurrent requests at one instant from a few users: each user
	// gets exactly Limit responses 200, the handler runs exactly that many
	// times, and every other response is a 429.
	const users, goroutines, each, limit = 3, 8, 20, 25
	gs := newGuardServer(t, guard.Policy{Limit: rxthrottle.Per(limit, time.Minute), Block: time.Hour}, nil,
		httpthrottle.WithKey(httpthrottle.KeyByHeader("X-User-ID")))
	var (
		mu     sync.Mutex
		status = map[string]map[int]int{}
		wg     sync.WaitGroup
	)
	for i := range goroutines {
		wg.Go(func() {
			for j := range each {
				user := fmt.Sprint("u", (i+j)%users)
				req, err := http.NewRequest(http.MethodGet, gs.srv.URL, nil)
				if err != nil {
					t.Error(err)
					return
				}
				req.Header.Set("X-User-ID", user)
				resp, err := gs.srv.Client().Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				mu.Lock()
				if status[user] == nil {
					status[user] = map[int]int{}
				}
				status[user][resp.StatusCode]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	total := 0
	for u := range users {
		user := fmt.Sprint("u", u)
		assert.Equal(t, limit, status[user][200], "%s: 200s", user)
		total += status[user][200] + status[user][429]
	}
	require.Equal(t, goroutines*each, total, "every response is a 200 or a 429")
	require.Equal(t, int64(users*limit), gs.calls.Load())
	require.Equal(t, users, strings.Count(gs.log.String(), "key is over the usage limit"), "one warning per blocked user")
}

// downStore is a guard.Store that always fails.
type downStore struct{}

func (downStore) Hit(context.Context, string, guard.Policy, time.Time) (guard.Result, error) {
	return guard.Result{}, errors.New("connection refused")
}

func TestMiddlewareStoreError(t *testing.T) {
	for _, failOpen := range []bool{false, true} {
		t.Run(fmt.Sprint("fail open ", failOpen), func(t *testing.T) {
			var logBuf bytes.Buffer
			gs := newGuardServer(t, guard.Policy{Limit: rxthrottle.Per(1, time.Second)}, []guard.Option{guard.WithStore(downStore{})},
				httpthrottle.WithFailOpen(failOpen), httpthrottle.WithLogger(noTimeLogger(&logBuf)))
			got := gs.get(t, "", quotaFields...)
			if failOpen {
				require.Equal(t, reply{200, quota("", "", "", "", "", "text/plain; charset=utf-8"), "ok"}, got)
				require.Equal(t, int64(1), gs.calls.Load())
			} else {
				require.Equal(t, reply{503, quota("", "", "", "", "", jsonType),
					`{"message":"Service unavailable: the rate limiter cannot decide. Try again later."}` + "\n"}, got)
				require.Zero(t, gs.calls.Load())
			}
			require.Equal(t, fmt.Sprintf(
				`level=ERROR msg="httpthrottle: guard cannot decide" key=127.0.0.1 fail_open=%v error="guard: Check(\"127.0.0.1\"): connection refused"`+"\n", failOpen),
				logBuf.String())
		})
	}
}

func TestMiddlewareTooManyKeys(t *testing.T) {
	gs := newGuardServer(t, guard.Policy{Limit: rxthrottle.Per(5, time.Minute)}, []guard.Option{guard.WithMaxKeys(1)},
		httpthrottle.WithKey(httpthrottle.KeyByHeader("X-User-ID")), httpthrottle.WithLogger(slog.New(slog.DiscardHandler)))
	require.Equal(t, 200, gs.get(t, "a").status)
	require.Equal(t, 429, gs.get(t, "b").status, "a full memory store refuses a new key")
	require.Equal(t, 200, gs.get(t, "a").status)
}

func TestMiddlewareBadInput(t *testing.T) {
	g, err := guard.New(guard.Policy{Limit: rxthrottle.Per(1, time.Second)})
	require.NoError(t, err)
	tests := []struct {
		name string
		g    *guard.Guard
		opts []httpthrottle.MiddlewareOption
		want string
	}{
		{"nil guard", nil, nil, "httpthrottle: Middleware(nil): a *guard.Guard is required"},
		{"nil option", g, []httpthrottle.MiddlewareOption{nil}, "httpthrottle: Middleware: nil MiddlewareOption"},
		{"nil key function", g, []httpthrottle.MiddlewareOption{httpthrottle.WithKey(nil)},
			"httpthrottle: WithKey(nil): a key function is required"},
		{"nil logger", g, []httpthrottle.MiddlewareOption{httpthrottle.WithLogger(nil)},
			"httpthrottle: WithLogger(nil): a logger is required (use slog.New(slog.DiscardHandler) to log nothing)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mw, err := httpthrottle.Middleware(tt.g, tt.opts...)
			require.EqualError(t, err, tt.want)
			require.Nil(t, mw)
		})
	}
}

func TestMiddlewareNilNextHandler(t *testing.T) {
	g, err := guard.New(guard.Policy{Limit: rxthrottle.Per(1, time.Second)})
	require.NoError(t, err)
	var logBuf bytes.Buffer
	mw, err := httpthrottle.Middleware(g, httpthrottle.WithLogger(noTimeLogger(&logBuf)))
	require.NoError(t, err)
	rec := httptest.NewRecorder()
	mw(nil).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	require.Equal(t, 500, rec.Code)
	require.Equal(t, `{"message":"Internal server error."}`+"\n", rec.Body.String())
	require.Equal(t, `level=ERROR msg="httpthrottle: Middleware wraps a nil handler"`+"\n", logBuf.String())
}

func TestMiddlewareRefusedResponseIsComplete(t *testing.T) {
	// The refused response as a client sees it on the wire, every field.
	gs := newGuardServer(t, guard.Policy{Limit: rxthrottle.Per(1, 90*time.Second), Block: 1500 * time.Millisecond}, nil)
	require.Equal(t, 200, gs.get(t, "").status)
	resp, err := gs.srv.Client().Get(gs.srv.URL)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	resp.Header.Del("Date")
	require.Equal(t, http.Header{
		"Content-Type":           {jsonType},
		"Content-Length":         {fmt.Sprint(len(body))},
		"X-Content-Type-Options": {"nosniff"},
		"Retry-After":            {"90"}, // the block never ends before the window
		"Ratelimit-Limit":        {"1"},
		"Ratelimit-Remaining":    {"0"},
		"Ratelimit-Reset":        {"90"},
		"Ratelimit-Policy":       {"1;w=90"},
	}, resp.Header)
	require.Equal(t, `{"message":"Too many requests: retry in 90 seconds."}`+"\n", string(body))
}

type userKey struct{}

func TestMiddlewareKeyFunctionsFallBackToRemoteIP(t *testing.T) {
	tests := []struct {
		name  string
		key   httpthrottle.KeyFunc
		asAnn func(*http.Request) *http.Request
	}{
		{"header", httpthrottle.KeyByHeader("x-user-id"), func(r *http.Request) *http.Request {
			r.Header.Set("X-User-ID", "ann")
			return r
		}},
		{"context", httpthrottle.KeyByContext(userKey{}), func(r *http.Request) *http.Request {
			return r.WithContext(context.WithValue(r.Context(), userKey{}, "ann"))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := guard.New(guard.Policy{Limit: rxthrottle.Per(1, time.Hour)}, guard.WithLogger(slog.New(slog.DiscardHandler)))
			require.NoError(t, err)
			mw, err := httpthrottle.Middleware(g, httpthrottle.WithKey(tt.key))
			require.NoError(t, err)
			h := mw(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
			from := func(remote string) *http.Request {
				r := httptest.NewRequest(http.MethodGet, "/", nil)
				r.RemoteAddr = remote
				return r
			}
			steps := []struct {
				r    *http.Request
				want int
			}{
				{tt.asAnn(from("198.51.100.1:1")), 200}, // key "ann"
				{tt.asAnn(from("198.51.100.2:1")), 429}, // still "ann", from another address
				{from("198.51.100.1:2"), 200},           // no user: keyed by its address
				{from("198.51.100.1:3"), 429},           // the same address, another port
				{from("198.51.100.2:1"), 200},           // another address is another key
			}
			for i, st := range steps {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, st.r)
				assert.Equal(t, st.want, rec.Code, "step %d: status", i)
			}
		})
	}
}
