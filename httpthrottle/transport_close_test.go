package httpthrottle_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
)

// TestTransportClosesEveryBodyItDoesNotSend: RoundTrip closes the
// request's body, also on error (the RoundTripper contract), on each of
// the ways a call can end without the base closing it: refused before any
// attempt, an attempt that never goes (its wait fails or ends), and a base
// that fails without closing the body it was given, while the caller
// waits or after it gave up. With a retry, the body closed is the one
// GetBody made for it.
func TestTransportClosesEveryBodyItDoesNotSend(t *testing.T) {
	down := errors.New("connection refused")
	failing := roundTripFunc(func(*http.Request) (*http.Response, error) { return nil, down })
	// late writes the request and fails 2 s later, after its caller gave
	// up at 1 s (WithAttemptTimeout).
	late := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if tr := httptrace.ContextClientTrace(r.Context()); tr != nil && tr.WroteHeaders != nil {
			tr.GotConn(httptrace.GotConnInfo{})
			tr.WroteHeaders()
		}
		time.Sleep(2 * time.Second)
		return nil, down
	})
	refuse := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		_ = r.Body.Close()
		return respond(r, http.StatusTooManyRequests, http.Header{"Retry-After": {"5"}}), nil
	})
	steps := []struct {
		name    string
		tr      func(t *testing.T, cancel func()) *httpthrottle.Transport
		timeout time.Duration // the caller's context's, 0 none
		retry   bool          // the request has a GetBody: the retry's body is checked
		answer  bool          // RoundTrip returns an answer, not an error
	}{
		{"a zero Transport", func(*testing.T, func()) *httpthrottle.Transport { return &httpthrottle.Transport{} }, 0, false, false},
		{"no key", func(t *testing.T, _ func()) *httpthrottle.Transport {
			return must(httpthrottle.NewKeyedTransport(newKeyed(t, 1, time.Second),
				func(*http.Request) (string, error) { return "", down }, httpthrottle.WithBase(failing)))
		}, 0, false, false},
		{"the limiter fails", func(*testing.T, func()) *httpthrottle.Transport {
			return must(httpthrottle.NewTransport(failingLimiter{err: down}, httpthrottle.WithBase(failing)))
		}, 0, false, false},
		{"the limiter fails, departure renewal", func(*testing.T, func()) *httpthrottle.Transport {
			return must(httpthrottle.NewTransport(failingLimiter{err: down}, httpthrottle.WithBase(failing), httpthrottle.WithDepartureRenewal()))
		}, 0, false, false},
		{"the context ends as the token comes", func(t *testing.T, cancel func()) *httpthrottle.Transport {
			return must(httpthrottle.NewTransport(&grantLimiter{Bucket: newBucket(t, 10, time.Second, nil), first: cancel}, httpthrottle.WithBase(failing)))
		}, time.Hour, false, false},
		{"the context ends as the token comes, departure renewal", func(t *testing.T, cancel func()) *httpthrottle.Transport {
			return must(httpthrottle.NewTransport(&grantLimiter{Bucket: newBucket(t, 10, time.Second, nil), first: cancel}, httpthrottle.WithBase(failing),
				httpthrottle.WithDepartureRenewal()))
		}, time.Hour, false, false},
		{"the late answer comes with the retry's token", func(t *testing.T, _ func()) *httpthrottle.Transport {
			// The attempt times out at 1 s and answers 200 at 1.2 s; the
			// retry's token comes at 1.5 s, its wait having ignored the
			// answer: the answer is the call's, the retry is not sent.
			answer := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				_ = r.Body.Close()
				time.Sleep(1200 * time.Millisecond)
				return respond(r, http.StatusOK, nil), nil
			})
			l := &grantLimiter{Bucket: newBucket(t, 10, time.Second, nil), second: 1500 * time.Millisecond}
			return must(httpthrottle.NewTransport(l, httpthrottle.WithBase(answer),
				httpthrottle.WithAttemptTimeout(time.Second), httpthrottle.WithMaxAttempts(2)))
		}, 0, true, true},
		{"the wait ends", func(t *testing.T, _ func()) *httpthrottle.Transport {
			return must(httpthrottle.NewTransport(spentBucket(t), httpthrottle.WithBase(failing)))
		}, time.Second, false, false},
		{"the wait ends, departure renewal", func(t *testing.T, _ func()) *httpthrottle.Transport {
			return must(httpthrottle.NewTransport(spentBucket(t), httpthrottle.WithBase(failing), httpthrottle.WithDepartureRenewal()))
		}, time.Second, false, false},
		{"the retry's wait ends, departure renewal", func(t *testing.T, _ func()) *httpthrottle.Transport {
			return must(httpthrottle.NewTransport(newBucket(t, 10, time.Second, nil), httpthrottle.WithBase(refuse),
				httpthrottle.WithDepartureRenewal(), httpthrottle.WithMaxAttempts(2)))
		}, time.Second, true, false},
		{"the base fails", func(t *testing.T, _ func()) *httpthrottle.Transport {
			return must(httpthrottle.NewTransport(newBucket(t, 10, time.Second, nil), httpthrottle.WithBase(failing)))
		}, 0, false, false},
		{"the base fails, a context that can end", func(t *testing.T, _ func()) *httpthrottle.Transport {
			return must(httpthrottle.NewTransport(newBucket(t, 10, time.Second, nil), httpthrottle.WithBase(failing)))
		}, time.Minute, false, false},
		{"the base fails after the caller gave up", func(t *testing.T, _ func()) *httpthrottle.Transport {
			return must(httpthrottle.NewTransport(newBucket(t, 10, time.Second, nil), httpthrottle.WithBase(late),
				httpthrottle.WithAttemptTimeout(time.Second)))
		}, 0, false, false},
		{"the base fails after the caller gave up, none kept open", func(t *testing.T, _ func()) *httpthrottle.Transport {
			return must(httpthrottle.NewTransport(newBucket(t, 10, time.Second, nil), httpthrottle.WithBase(late),
				httpthrottle.WithAttemptTimeout(time.Second), httpthrottle.WithMaxKeptOpen(0)))
		}, 0, false, false},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.Background(), context.CancelFunc(func() {})
				if s.timeout > 0 {
					ctx, cancel = context.WithTimeout(ctx, s.timeout)
					defer cancel()
				}
				tr := s.tr(t, cancel)
				body := &closeTracker{Reader: strings.NewReader("x")}
				req := mustRequest(t, ctx, "PUT", body)
				var retryBody *closeTracker
				if s.retry {
					req.GetBody = func() (io.ReadCloser, error) {
						retryBody = &closeTracker{Reader: strings.NewReader("x")}
						return retryBody, nil
					}
				}
				resp, err := tr.RoundTrip(req)
				if s.answer {
					require.NoError(t, err)
					_ = resp.Body.Close()
				} else {
					require.Error(t, err)
				}
				time.Sleep(time.Minute) // whatever an attempt left open does
				synctest.Wait()
				assert.True(t, body.closed.Load(), "the request's body is closed")
				if s.retry {
					require.NotNil(t, retryBody, "GetBody was called")
					assert.True(t, retryBody.closed.Load(), "the retry's body is closed")
				}
			})
		})
	}
}

// grantLimiter is a Bucket whose Wait and Acquire call first, if set, as
// the first token comes, and whose second Wait or Acquire sleeps second
// and then takes its token whatever its context says.
type grantLimiter struct {
	*rxthrottle.Bucket
	first  func()
	second time.Duration
	calls  int
}

func (g *grantLimiter) Wait(ctx context.Context) error {
	_, err := g.take(ctx, false)
	return err
}

func (g *grantLimiter) Acquire(ctx context.Context) (rxthrottle.Token, error) {
	return g.take(ctx, true)
}

func (g *grantLimiter) take(ctx context.Context, hold bool) (rxthrottle.Token, error) {
	g.calls++
	if g.calls == 2 && g.second > 0 {
		time.Sleep(g.second)
		ctx = context.Background()
	}
	var tok rxthrottle.Token
	var err error
	if hold {
		tok, err = g.Bucket.Acquire(ctx)
	} else {
		err = g.Bucket.Wait(ctx)
	}
	if g.calls == 1 && g.first != nil {
		g.first()
	}
	return tok, err
}

// spentBucket returns a Bucket of 1 per minute whose token is taken.
func spentBucket(t *testing.T) *rxthrottle.Bucket {
	b := newBucket(t, 1, time.Minute, nil)
	require.NoError(t, b.Wait(context.Background()))
	return b
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestTransportClosesBodyWhenBasePanics: a base that panics leaves the
// request's body to RoundTrip, which closes it before the panic goes on
// up, as after an error, whether the caller's context can end or not.
func TestTransportClosesBodyWhenBasePanics(t *testing.T) {
	for _, timeout := range []time.Duration{0, time.Minute} {
		t.Run(fmt.Sprintf("timeout %v", timeout), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := roundTripFunc(func(*http.Request) (*http.Response, error) { panic("base") })
				tr := must(httpthrottle.NewTransport(newBucket(t, 10, time.Second, nil), httpthrottle.WithBase(base)))
				ctx := context.Background()
				if timeout > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, timeout)
					defer cancel()
				}
				body := &closeTracker{Reader: strings.NewReader("x")}
				req := mustRequest(t, ctx, "POST", body)
				assert.PanicsWithValue(t, "base", func() { _, _ = tr.RoundTrip(req) })
				assert.True(t, body.closed.Load(), "the request's body is closed")
			})
		})
	}
}
