package httpthrottle_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle/httpthrottle"
)

// Issue 10, item 11: errors keep secrets out, and the request body is
// always closed. (A retry that cannot be sent spends no token:
// TestTransportRetryGetBodyFailureSpendsNoTokenEitherWay.)

// secretURL has a password and a secret in its query and fragment.
const secretURL = "http://ada:hunter2@api.test/jobs?token=SECRET&page=2#SECRET"

func TestTransportErrorsLeaveOutTheQuery(t *testing.T) {
	const want = "http://ada:xxxxx@api.test/jobs"
	noUser := errors.New("no user")
	ok := roundTripFunc(func(r *http.Request) (*http.Response, error) { return respond(r, http.StatusOK, nil), nil })
	steps := []struct {
		name string
		tr   func() (*httpthrottle.Transport, error)
		req  func(*http.Request)
		msg  string
	}{
		{"key function fails", func() (*httpthrottle.Transport, error) {
			return httpthrottle.NewKeyedTransport(newKeyed(t, 1, time.Second),
				func(*http.Request) (string, error) { return "", noUser }, httpthrottle.WithBase(ok))
		}, nil, "httpthrottle: no key for GET " + want + ": no user"},
		{"limiter fails", func() (*httpthrottle.Transport, error) {
			return httpthrottle.NewTransport(failingLimiter{err: noUser}, httpthrottle.WithBase(ok))
		}, nil, "httpthrottle: waiting for a token for GET " + want + ": no user"},
		{"KeyByHost without a host", func() (*httpthrottle.Transport, error) {
			return httpthrottle.NewKeyedTransport(newKeyed(t, 1, time.Second), httpthrottle.KeyByHost, httpthrottle.WithBase(ok))
		}, func(r *http.Request) { r.URL.Host, r.Host = "", "" },
			`httpthrottle: no key for GET http://ada:xxxxx@/jobs: KeyByHost: request GET "http://ada:xxxxx@/jobs" has no host`},
		{"GetBody fails", func() (*httpthrottle.Transport, error) {
			return httpthrottle.NewTransport(newBucket(t, 10, time.Second, nil),
				httpthrottle.WithBase(&flakyBase{refusals: 1}), httpthrottle.WithMaxAttempts(2))
		}, func(r *http.Request) {
			r.Body = io.NopCloser(strings.NewReader("x"))
			r.GetBody = func() (io.ReadCloser, error) { return nil, noUser }
		}, "httpthrottle: replaying the body of GET " + want + " for a retry: no user"},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			tr, err := s.tr()
			require.NoError(t, err)
			req, err := http.NewRequest("GET", secretURL, nil)
			require.NoError(t, err)
			if s.req != nil {
				s.req(req)
			}
			before := req.URL.String()
			_, err = tr.RoundTrip(req)
			require.Error(t, err)
			assert.NotContains(t, err.Error(), "SECRET")
			assert.NotContains(t, err.Error(), "hunter2")
			assert.EqualError(t, err, s.msg)
			assert.Equal(t, before, req.URL.String(), "the request is not modified")
		})
	}
}

func TestTransportClosesBodyWhenBaseFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		down := errors.New("connection refused")
		var calls int
		var retryBody *closeTracker
		// A base that breaks the RoundTripper contract: it neither reads
		// nor closes the body. The first call answers 429, the retry fails.
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			calls++
			if calls == 1 {
				return respond(r, http.StatusTooManyRequests, nil), nil
			}
			return nil, down
		})
		tr, err := httpthrottle.NewTransport(newBucket(t, 10, time.Second, nil),
			httpthrottle.WithBase(base), httpthrottle.WithMaxAttempts(2))
		require.NoError(t, err)

		// One attempt: the caller's body.
		body := &closeTracker{Reader: strings.NewReader("x")}
		req := mustRequest(t, context.Background(), "POST", body)
		calls = 1
		_, err = tr.RoundTrip(req)
		require.ErrorIs(t, err, down)
		assert.True(t, body.closed.Load(), "the request body is closed")

		// A retry: the body GetBody made for it.
		calls = 0
		req = mustRequest(t, context.Background(), "POST", &closeTracker{Reader: strings.NewReader("x")})
		req.GetBody = func() (io.ReadCloser, error) {
			retryBody = &closeTracker{Reader: strings.NewReader("x")}
			return retryBody, nil
		}
		_, err = tr.RoundTrip(req)
		require.ErrorIs(t, err, down)
		require.NotNil(t, retryBody)
		assert.True(t, retryBody.closed.Load(), "the retry's body is closed")
	})
}

func TestKeyByHostLeavesOutTheQuery(t *testing.T) {
	u, err := url.Parse("/jobs?token=SECRET")
	require.NoError(t, err)
	_, err = httpthrottle.KeyByHost(&http.Request{Method: "GET", URL: u})
	assert.EqualError(t, err, `httpthrottle: KeyByHost: request GET "/jobs" has no host`)
}
