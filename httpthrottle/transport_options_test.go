package httpthrottle_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
)

func TestTransportConstructorErrors(t *testing.T) {
	b := newBucket(t, 1, time.Second, nil)
	kl := newKeyed(t, 1, time.Second)
	var nilBucket *rxthrottle.Bucket
	steps := []struct {
		name string
		new  func() (*httpthrottle.Transport, error)
		want string
	}{
		{"nil limiter", func() (*httpthrottle.Transport, error) { return httpthrottle.NewTransport(nil) },
			"httpthrottle: NewTransport: the Limiter is nil"},
		{"nil *Bucket", func() (*httpthrottle.Transport, error) { return httpthrottle.NewTransport(nilBucket) },
			"httpthrottle: NewTransport: the Limiter is nil"},
		{"nil keyed limiter", func() (*httpthrottle.Transport, error) {
			return httpthrottle.NewKeyedTransport(nil, httpthrottle.KeyByHost)
		}, "httpthrottle: NewKeyedTransport: the KeyedLimiter is nil"},
		{"nil key function", func() (*httpthrottle.Transport, error) { return httpthrottle.NewKeyedTransport(kl, nil) },
			"httpthrottle: NewKeyedTransport: the key function is nil"},
		{"nil option", func() (*httpthrottle.Transport, error) { return httpthrottle.NewTransport(b, nil) },
			"httpthrottle: nil TransportOption"},
		{"nil base", func() (*httpthrottle.Transport, error) {
			return httpthrottle.NewTransport(b, httpthrottle.WithBase(nil))
		},
			"httpthrottle: WithBase(nil): a base RoundTripper is required"},
		{"nil clock", func() (*httpthrottle.Transport, error) {
			return httpthrottle.NewTransport(b, httpthrottle.WithClock(nil))
		}, "httpthrottle: WithClock(nil): a clock is required"},
		{"zero max pause", func() (*httpthrottle.Transport, error) {
			return httpthrottle.NewTransport(b, httpthrottle.WithMaxPause(0))
		}, "httpthrottle: WithMaxPause(0s): the maximum pause must be positive"},
		{"negative max pause", func() (*httpthrottle.Transport, error) {
			return httpthrottle.NewTransport(b, httpthrottle.WithMaxPause(-time.Second))
		}, "httpthrottle: WithMaxPause(-1s): the maximum pause must be positive"},
		{"zero attempts", func() (*httpthrottle.Transport, error) {
			return httpthrottle.NewKeyedTransport(kl, httpthrottle.KeyByHost, httpthrottle.WithMaxAttempts(0))
		}, "httpthrottle: WithMaxAttempts(0): at least 1 attempt is required"},
		{"negative in-flight bound", func() (*httpthrottle.Transport, error) {
			return httpthrottle.NewTransport(b, httpthrottle.WithInFlightBound(-time.Nanosecond))
		}, "httpthrottle: WithInFlightBound(-1ns): the bound must not be negative"},
		{"negative attempt timeout", func() (*httpthrottle.Transport, error) {
			return httpthrottle.NewTransport(b, httpthrottle.WithAttemptTimeout(-time.Second))
		}, "httpthrottle: WithAttemptTimeout(-1s): the timeout must not be negative"},
		{"negative kept open", func() (*httpthrottle.Transport, error) {
			return httpthrottle.NewTransport(b, httpthrottle.WithMaxKeptOpen(-1))
		}, "httpthrottle: WithMaxKeptOpen(-1): the cap must not be negative"},
		{"negative retry budget", func() (*httpthrottle.Transport, error) {
			return httpthrottle.NewTransport(b, httpthrottle.WithRetryBudget(0.1, -1))
		}, "httpthrottle: WithRetryBudget(0.1, -1): the ratio must be finite and neither may be negative"},
	}
	for i, s := range steps {
		tr, err := s.new()
		assert.Nil(t, tr, "step %d (%s)", i, s.name)
		assert.EqualError(t, err, s.want, "step %d (%s)", i, s.name)
	}
}

func TestTransportZeroValueFails(t *testing.T) {
	var tr httpthrottle.Transport
	body := &closeTracker{Reader: strings.NewReader("x")}
	_, err := tr.RoundTrip(mustRequest(t, t.Context(), "POST", body))
	assert.EqualError(t, err, "httpthrottle: Transport used without NewTransport or NewKeyedTransport")
	assert.True(t, body.closed.Load())
	tr.CloseIdleConnections()
	assert.Zero(t, tr.Stats())
}

func TestTransportDefaultLogsHeaderErrors(t *testing.T) {
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	defer slog.SetDefault(old)

	synctest.Test(t, func(t *testing.T) {
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return respond(r, http.StatusTooManyRequests, http.Header{"Retry-After": {"eventually"}}), nil
		})
		tr, err := httpthrottle.NewTransport(newBucket(t, 1, time.Second, nil), httpthrottle.WithBase(base))
		require.NoError(t, err)
		resp, err := tr.RoundTrip(mustRequest(t, t.Context(), "GET", nil))
		require.NoError(t, err)
		resp.Body.Close()
	})
	assert.Contains(t, buf.String(), `level=WARN msg="httpthrottle: header Retry-After \"eventually\": neither delay-seconds nor an HTTP-date" header=Retry-After value=eventually`)
}

func TestTransportNilHeaderErrorHookDiscards(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return respond(r, http.StatusTooManyRequests, http.Header{"Retry-After": {"eventually"}}), nil
		})
		tr, err := httpthrottle.NewTransport(newBucket(t, 1, time.Second, nil),
			httpthrottle.WithBase(base), httpthrottle.OnHeaderError(nil))
		require.NoError(t, err)
		resp, err := tr.RoundTrip(mustRequest(t, t.Context(), "GET", nil))
		require.NoError(t, err)
		resp.Body.Close()
		// Each of the DefaultMaxAttempts 429s (a GET is retried) is counted.
		assert.Equal(t, uint64(httpthrottle.DefaultMaxAttempts), tr.Stats().HeaderErrors, "still counted")
	})
}

func TestTransportCloseIdleConnections(t *testing.T) {
	var closed bool
	base := &idleCloser{closed: &closed}
	tr, err := httpthrottle.NewTransport(newBucket(t, 1, time.Second, nil), httpthrottle.WithBase(base))
	require.NoError(t, err)
	(&http.Client{Transport: tr}).CloseIdleConnections()
	assert.True(t, closed)
}

type idleCloser struct{ closed *bool }

func (c *idleCloser) RoundTrip(*http.Request) (*http.Response, error) { return nil, nil }
func (c *idleCloser) CloseIdleConnections()                           { *c.closed = true }

func TestTransportKeyFunctions(t *testing.T) {
	steps := []struct {
		url   string
		n     int
		key   string
		error string
	}{
		{"https://API.Example.com/v1/users/42", 0, "api.example.com", ""},
		{"https://api.example.com/v1/users/42", 1, "api.example.com/v1", ""},
		{"https://api.example.com/v1/users/42", 2, "api.example.com/v1/users", ""},
		{"https://api.example.com/v1/users?page=2", 2, "api.example.com/v1/users", ""},
		{"https://api.example.com/v1/users/", 2, "api.example.com/v1/users", ""},
		{"https://api.example.com//v1///users/42", 2, "api.example.com/v1/users", ""},
		{"https://api.example.com/v1", 3, "api.example.com/v1", ""},
		{"https://api.example.com", 2, "api.example.com", ""},
		{"http://127.0.0.1:8080/a%2Fb/c", 1, "127.0.0.1:8080/a%2Fb", ""},
		{"https://api.example.com/v1", -1, "", "httpthrottle: KeyByPathPrefix(-1): the number of segments must not be negative"},
		{"/relative/only", 1, "", `httpthrottle: KeyByHost: request GET "/relative/only" has no host`},
	}
	for i, s := range steps {
		u, err := url.Parse(s.url)
		require.NoError(t, err)
		req := &http.Request{Method: "GET", URL: u}
		key, err := httpthrottle.KeyByPathPrefix(s.n)(req)
		if s.error != "" {
			assert.EqualError(t, err, s.error, "step %d (%s)", i, s.url)
			continue
		}
		require.NoError(t, err, "step %d (%s)", i, s.url)
		assert.Equal(t, s.key, key, "step %d (%s, n=%d)", i, s.url, s.n)
		if s.n == 0 {
			host, err := httpthrottle.KeyByHost(req)
			require.NoError(t, err)
			assert.Equal(t, s.key, host)
		}
	}
	// A server-side style request names its host in Host, not in the URL.
	req := &http.Request{Method: "GET", URL: &url.URL{Path: "/x"}, Host: "Backend:9000"}
	key, err := httpthrottle.KeyByHost(req)
	require.NoError(t, err)
	assert.Equal(t, "backend:9000", key)
	_, err = httpthrottle.KeyByHost(&http.Request{Method: "GET"})
	assert.True(t, strings.HasPrefix(err.Error(), "httpthrottle: KeyByHost"))
}
