package httpthrottle_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
)

// Issue 9, item 2: the Transport holds each token from the moment its
// request goes to the base until the answer (headers or error) is back, and
// the token renews one window after that; WithDepartureRenewal renews it
// one window after the request left. On virtual time, to the nanosecond.

// slowBase answers after rtt with what answer returns for the i-th call
// (from 0), and records each call's departure.
type slowBase struct {
	rtt    time.Duration
	answer func(i int, r *http.Request) (*http.Response, error)
	calls  atomic.Int32
	rec    recorder
}

func (b *slowBase) RoundTrip(r *http.Request) (*http.Response, error) {
	i := int(b.calls.Add(1)) - 1
	b.rec.add(r.URL.Host, time.Now())
	readBody(r)
	time.Sleep(b.rtt)
	if b.answer != nil {
		return b.answer(i, r)
	}
	return respond(r, http.StatusOK, nil), nil
}

// modes are the two renewals, with the second departure each gives when a
// token of Per(1, 1s) is used by a request answered after 300 ms.
var modes = []struct {
	name   string
	opts   []httpthrottle.TransportOption
	second time.Duration
}{
	{"held (default)", nil, 1300 * time.Millisecond},
	{"departure renewal", []httpthrottle.TransportOption{httpthrottle.WithDepartureRenewal()}, time.Second},
}

// getAll sends GET url from one goroutine per url at once and waits.
func getAll(t *testing.T, client *http.Client, urls ...string) {
	t.Helper()
	var wg sync.WaitGroup
	for _, u := range urls {
		wg.Go(func() {
			resp, err := client.Get(u)
			if err == nil {
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
}

func TestTransportHoldsTokenUntilAnswer(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := &slowBase{rtt: 300 * time.Millisecond}
				tr, err := httpthrottle.NewTransport(newBucket(t, 1, time.Second, nil),
					append([]httpthrottle.TransportOption{httpthrottle.WithBase(base)}, m.opts...)...)
				require.NoError(t, err)
				start := time.Now()
				getAll(t, &http.Client{Transport: tr}, "http://api.test/1", "http://api.test/2", "http://api.test/3")
				assert.Equal(t, []time.Duration{0, m.second, 2 * m.second}, base.rec.offsets("api.test", start))
			})
		})
	}
}

func TestTransportKeyedHoldsPerKey(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := &slowBase{rtt: 300 * time.Millisecond}
				tr, err := httpthrottle.NewKeyedTransport(newKeyed(t, 1, time.Second), httpthrottle.KeyByHost,
					append([]httpthrottle.TransportOption{httpthrottle.WithBase(base)}, m.opts...)...)
				require.NoError(t, err)
				start := time.Now()
				getAll(t, &http.Client{Transport: tr}, "http://a.test/1", "http://a.test/2", "http://b.test/1")
				assert.Equal(t, []time.Duration{0, m.second}, base.rec.offsets("a.test", start))
				assert.Equal(t, []time.Duration{0}, base.rec.offsets("b.test", start))
			})
		})
	}
}

func TestTransportHoldsPastBaseError(t *testing.T) {
	for _, bound := range []time.Duration{httpthrottle.DefaultInFlightBound, 2 * time.Second, 0} {
		t.Run(bound.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				down := errors.New("connection reset")
				base := &slowBase{rtt: 200 * time.Millisecond, answer: func(i int, r *http.Request) (*http.Response, error) {
					if i == 0 {
						return nil, down
					}
					return respond(r, http.StatusOK, nil), nil
				}}
				opts := []httpthrottle.TransportOption{httpthrottle.WithBase(base)}
				if bound != httpthrottle.DefaultInFlightBound {
					opts = append(opts, httpthrottle.WithInFlightBound(bound))
				}
				tr, err := httpthrottle.NewTransport(newBucket(t, 1, time.Second, nil), opts...)
				require.NoError(t, err)
				start := time.Now()
				_, err = tr.RoundTrip(mustRequest(t, context.Background(), "GET", nil))
				require.ErrorIs(t, err, down)
				st := tr.Stats()
				assert.Equal(t, uint64(1), st.ErrorsAfterWrite)
				if bound > 0 {
					assert.Equal(t, int64(1), st.HoldingPastError)
				}
				resp, err := tr.RoundTrip(mustRequest(t, context.Background(), "GET", nil))
				require.NoError(t, err)
				resp.Body.Close()
				// A base that reports nothing of the wire may have written
				// the request: it can still arrive until the bound after
				// the error, and the token renews 1 s after that.
				assert.Equal(t, []time.Duration{0, 200*time.Millisecond + bound + time.Second}, base.rec.offsets("api.test", start))
				assert.Zero(t, tr.Stats().HoldingPastError)
			})
		})
	}
}

func TestTransportHoldsWhenBasePanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := &slowBase{rtt: 200 * time.Millisecond, answer: func(i int, r *http.Request) (*http.Response, error) {
			if i == 0 {
				panic("base bug")
			}
			return respond(r, http.StatusOK, nil), nil
		}}
		tr, err := httpthrottle.NewTransport(newBucket(t, 1, time.Second, nil), httpthrottle.WithBase(base),
			httpthrottle.WithInFlightBound(2*time.Second))
		require.NoError(t, err)
		start := time.Now()
		assert.PanicsWithValue(t, "base bug", func() { _, _ = tr.RoundTrip(mustRequest(t, context.Background(), "GET", nil)) })
		resp, err := tr.RoundTrip(mustRequest(t, context.Background(), "GET", nil))
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, []time.Duration{0, 3200 * time.Millisecond}, base.rec.offsets("api.test", start),
			"the token is held for the bound after the panic, then renews 1 s later")
	})
}

func TestTransportRetryHoldsEachAttempt(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				// A 429 with no Retry-After pauses nothing: the retry waits
				// for its own token only.
				base := &slowBase{rtt: 300 * time.Millisecond, answer: func(i int, r *http.Request) (*http.Response, error) {
					if i == 0 {
						return respond(r, http.StatusTooManyRequests, nil), nil
					}
					return respond(r, http.StatusOK, nil), nil
				}}
				tr, err := httpthrottle.NewTransport(newBucket(t, 1, time.Second, nil),
					append([]httpthrottle.TransportOption{httpthrottle.WithBase(base), httpthrottle.WithMaxAttempts(2)}, m.opts...)...)
				require.NoError(t, err)
				start := time.Now()
				resp, err := tr.RoundTrip(mustRequest(t, context.Background(), "POST", strings.NewReader("x")))
				require.NoError(t, err)
				resp.Body.Close()
				assert.Equal(t, http.StatusOK, resp.StatusCode)
				assert.Equal(t, []time.Duration{0, m.second}, base.rec.offsets("api.test", start))
			})
		})
	}
}

// cancellingLimiter ends the caller's context right as its token comes.
type cancellingLimiter struct {
	rxthrottle.Limiter
	cancel context.CancelFunc
}

func (c cancellingLimiter) Acquire(ctx context.Context) (rxthrottle.Token, error) {
	tok, err := c.Limiter.Acquire(ctx)
	c.cancel()
	return tok, err
}

func TestTransportContextEndsAsTokenComes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := &slowBase{}
		b := newBucket(t, 1, time.Hour, nil)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		tr, err := httpthrottle.NewTransport(cancellingLimiter{b, cancel}, httpthrottle.WithBase(base))
		require.NoError(t, err)
		body := &closeTracker{Reader: strings.NewReader("x")}
		_, err = tr.RoundTrip(mustRequest(t, ctx, "POST", body))
		require.ErrorIs(t, err, context.Canceled)
		assert.Zero(t, base.calls.Load(), "never sent")
		assert.True(t, body.closed.Load())
		assert.Equal(t, 1, b.Stats().Free, "the token went back unused")
		assert.Equal(t, uint64(1), tr.Stats().Cancelled)
		assert.Zero(t, tr.Stats().Sent)
	})
}

func TestTransportRetryGetBodyFailureSpendsNoTokenEitherWay(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := &flakyBase{refusals: 1}
				b := newBucket(t, 10, time.Second, nil)
				tr, err := httpthrottle.NewTransport(b,
					append([]httpthrottle.TransportOption{httpthrottle.WithBase(base), httpthrottle.WithMaxAttempts(2)}, m.opts...)...)
				require.NoError(t, err)
				req := mustRequest(t, context.Background(), "PUT", strings.NewReader("data"))
				boom := errors.New("boom")
				req.GetBody = func() (io.ReadCloser, error) { return nil, boom }
				_, err = tr.RoundTrip(req)
				require.ErrorIs(t, err, boom)
				assert.Equal(t, uint64(1), tr.Stats().Sent)
				assert.Equal(t, uint64(1), tr.Stats().Cancelled)
				assert.Equal(t, 9, b.Stats().Free, "only the attempt that was sent used a token")
			})
		})
	}
}
