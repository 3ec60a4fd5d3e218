package httpthrottle_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle/httpthrottle"
)

// WithAttemptTimeout on virtual time: the clock starts at the token's
// grant; the caller's context still bounds the whole call; the body is
// not timed.

func TestTransportAttemptTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Per(1, 1s) and two requests at once, each answered 200 ms after
		// it is written: the second waits 1.2 s for its token, which an
		// attempt timeout of 300 ms does not count.
		base := &wireBase{script: func(_ int, w *wireCalls) (*http.Response, error) {
			w.conn(&fakeConn{})
			require.NoError(t, w.write(nil))
			if err := w.wait(200 * time.Millisecond); err != nil {
				return nil, err
			}
			return w.ok()
		}}
		tr, err := httpthrottle.NewTransport(newBucket(t, 1, time.Second, nil), httpthrottle.WithBase(base),
			httpthrottle.WithAttemptTimeout(300*time.Millisecond))
		require.NoError(t, err)
		start := time.Now()
		getAll(t, &http.Client{Transport: tr}, "http://api.test/1", "http://api.test/2")
		assert.Equal(t, []time.Duration{0, 1200 * time.Millisecond}, base.rec.offsets("arrivals", start))
		assert.Equal(t, uint64(2), tr.Stats().Sent)
		assert.Zero(t, tr.Stats().AttemptTimeouts)
	})
}

func TestTransportAttemptTimeoutExpires(t *testing.T) {
	// A base that returns the context's cause (net/http's Transport does
	// on most paths) and one that returns its plain error: both report the
	// attempt timeout. One attempt (WithMaxAttempts(1)): by default the
	// timed-out GET is retried (TestTransportRetriesTimeoutByDefault).
	for _, plain := range []bool{false, true} {
		t.Run(map[bool]string{false: "cause", true: "ctx.Err"}[plain], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := &wireBase{script: func(i int, w *wireCalls) (*http.Response, error) {
					w.conn(&fakeConn{})
					require.NoError(t, w.write(nil))
					if i > 0 {
						return w.ok()
					}
					err := w.wait(time.Hour)
					if plain {
						err = w.req.Context().Err()
					}
					return nil, err
				}}
				tr, err := httpthrottle.NewTransport(newBucket(t, 1, time.Second, nil), httpthrottle.WithBase(base),
					httpthrottle.WithAttemptTimeout(300*time.Millisecond), httpthrottle.WithInFlightBound(2*time.Second),
					httpthrottle.WithMaxAttempts(1))
				require.NoError(t, err)
				start := time.Now()
				_, err = tr.RoundTrip(mustRequest(t, context.Background(), "GET", nil))
				require.ErrorIs(t, err, httpthrottle.ErrAttemptTimeout)
				require.ErrorIs(t, err, context.DeadlineExceeded)
				var timeout interface{ Timeout() bool }
				require.ErrorAs(t, err, &timeout)
				assert.True(t, timeout.Timeout())
				assert.Contains(t, err.Error(), "no response headers 300ms after its token")
				assert.Equal(t, 300*time.Millisecond, time.Since(start))
				resp, err := tr.RoundTrip(mustRequest(t, context.Background(), "GET", nil))
				require.NoError(t, err)
				resp.Body.Close()
				assert.Equal(t, []time.Duration{0, 3300 * time.Millisecond}, base.rec.offsets("arrivals", start),
					"the timed-out request may still arrive: its token is held for the bound")
				st := tr.Stats()
				assert.Equal(t, uint64(1), st.AttemptTimeouts)
				assert.Equal(t, uint64(1), st.HeldPastError)
			})
		})
	}
}

func TestTransportAttemptTimeoutLeavesTheContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The caller's deadline (100 ms) is shorter than the attempt
		// timeout: it is the caller's error, not an attempt timeout.
		base := &wireBase{script: func(_ int, w *wireCalls) (*http.Response, error) {
			w.conn(&fakeConn{})
			require.NoError(t, w.write(nil))
			return nil, w.wait(time.Hour)
		}}
		tr, err := httpthrottle.NewTransport(newBucket(t, 1, time.Second, nil), httpthrottle.WithBase(base),
			httpthrottle.WithAttemptTimeout(300*time.Millisecond))
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_, err = tr.RoundTrip(mustRequest(t, ctx, "GET", nil))
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.NotErrorIs(t, err, httpthrottle.ErrAttemptTimeout)
		assert.Zero(t, tr.Stats().AttemptTimeouts)
		assert.Equal(t, uint64(1), tr.Stats().HeldPastError)
		assert.Equal(t, int64(1), tr.Stats().KeptOpen, "the attempt stays open after its caller gave up")
		time.Sleep(httpthrottle.DefaultInFlightBound)
		synctest.Wait()
		st := tr.Stats()
		assert.Equal(t, httpthrottle.TransportStats{Sent: 1, Attempts: 1, ErrorsAfterWrite: 1, HeldPastError: 1}, st,
			"at the bound, the attempt is closed and its token released")
	})
}

func TestTransportAttemptTimeoutSparesTheBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The headers come at 100 ms; the body is read at 1 s, long after
		// the attempt timeout: it reads, under a context still alive,
		// which ends once the body is closed.
		var reqCtx context.Context
		base := &wireBase{script: func(_ int, w *wireCalls) (*http.Response, error) {
			w.conn(&fakeConn{})
			require.NoError(t, w.write(nil))
			time.Sleep(100 * time.Millisecond)
			reqCtx = w.req.Context()
			resp, _ := w.ok()
			resp.Body = io.NopCloser(&ctxReader{ctx: reqCtx, r: strings.NewReader("payload")})
			return resp, nil
		}}
		tr, err := httpthrottle.NewTransport(newBucket(t, 1, time.Second, nil), httpthrottle.WithBase(base),
			httpthrottle.WithAttemptTimeout(300*time.Millisecond))
		require.NoError(t, err)
		resp, err := tr.RoundTrip(mustRequest(t, context.Background(), "GET", nil))
		require.NoError(t, err)
		time.Sleep(time.Second)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		assert.Equal(t, "payload", string(body))
		require.NoError(t, resp.Body.Close())
		assert.Error(t, reqCtx.Err(), "the attempt's context ends with its body")
	})
}

// ctxReader fails once its context has ended, as a body read over a
// cancelled connection does.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
