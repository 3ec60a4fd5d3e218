package httpthrottle_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle/httpthrottle"
)

// Issue 27, rules 1 to 3, on virtual time: a caller gives up on an attempt
// that was written (its attempt timeout, or its context); the attempt stays
// open, and its token is released at its late answer, at the peer's close
// of the connection (not with the strict bound), or at the bound, where
// the connection is closed as a reset. Per(1, 1s) and a bound of 2 s: the
// next request arrives 1 s after the token's release.

// lingerConn is a fakeConn that records SetLinger, as a *net.TCPConn's.
type lingerConn struct {
	fakeConn
	linger atomic.Int32 // SetLinger's argument, +1 (0: never called)
}

func (c *lingerConn) SetLinger(sec int) error { c.linger.Store(int32(sec) + 1); return nil }

// countingBody is a large response body that counts the bytes read from it.
type countingBody struct {
	read   atomic.Int64
	closed atomic.Bool
}

func (b *countingBody) Read(p []byte) (int, error) { b.read.Add(int64(len(p))); return len(p), nil }
func (b *countingBody) Close() error               { b.closed.Store(true); return nil }

var errPeerReset = &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}

func TestTransportKeepsGivenUpAttemptsOpen(t *testing.T) {
	const bound = 2 * time.Second
	type ending int
	const (
		lateAnswer ending = iota // headers at 250 ms
		peerReset                // ECONNRESET at 400 ms
		never                    // nothing until the bound
	)
	steps := []struct {
		name    string
		end     ending
		opts    []httpthrottle.TransportOption
		context bool          // the caller's context ends at 100 ms, with no attempt timeout
		second  time.Duration // the next request's arrival
		stats   httpthrottle.TransportStats
		reset   bool // the connection was closed as a reset
	}{
		{"late answer", lateAnswer, nil, false, 1250 * time.Millisecond,
			httpthrottle.TransportStats{AttemptTimeouts: 1, HeldPastError: 1, LateAnswers: 1}, false},
		{"late answer, the caller's context", lateAnswer, nil, true, 1250 * time.Millisecond,
			httpthrottle.TransportStats{HeldPastError: 1, LateAnswers: 1}, false},
		{"late answer, strict bound", lateAnswer, []httpthrottle.TransportOption{httpthrottle.WithStrictInFlightBound()}, false,
			1250 * time.Millisecond, httpthrottle.TransportStats{AttemptTimeouts: 1, HeldPastError: 1, LateAnswers: 1}, false},
		{"late answer, none kept open", lateAnswer, []httpthrottle.TransportOption{httpthrottle.WithMaxKeptOpen(0)}, false,
			3100 * time.Millisecond, httpthrottle.TransportStats{AttemptTimeouts: 1, HeldPastError: 1, Resets: 1}, true},
		{"peer reset", peerReset, nil, false, 1400 * time.Millisecond,
			httpthrottle.TransportStats{AttemptTimeouts: 1, HeldPastError: 1, PeerCloses: 1}, false},
		{"peer reset, strict bound", peerReset, []httpthrottle.TransportOption{httpthrottle.WithStrictInFlightBound()}, false,
			3100 * time.Millisecond, httpthrottle.TransportStats{AttemptTimeouts: 1, HeldPastError: 1}, false},
		{"no answer: the bound", never, nil, false, 3100 * time.Millisecond,
			httpthrottle.TransportStats{AttemptTimeouts: 1, HeldPastError: 1, Resets: 1}, true},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				body := &countingBody{}
				conn := &lingerConn{}
				base := &wireBase{script: func(i int, w *wireCalls) (*http.Response, error) {
					if i > 0 {
						w.conn(&fakeConn{})
						require.NoError(t, w.write(nil))
						return w.ok()
					}
					w.conn(conn)
					require.NoError(t, w.write(nil))
					wait := map[ending]time.Duration{lateAnswer: 250 * time.Millisecond, peerReset: 400 * time.Millisecond, never: time.Hour}[s.end]
					if err := w.wait(wait); err != nil {
						return nil, err
					}
					if s.end == peerReset {
						return nil, errPeerReset
					}
					resp, _ := w.ok()
					resp.Body = body
					return resp, nil
				}}
				// One attempt: the fate of the given-up attempt alone (its
				// retry, the default, is TestTransportLateAnswerAnswersRetry's).
				opts := []httpthrottle.TransportOption{httpthrottle.WithBase(base), httpthrottle.WithInFlightBound(bound),
					httpthrottle.WithMaxAttempts(1)}
				ctx := context.Background()
				if s.context {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, 100*time.Millisecond)
					defer cancel()
				} else {
					opts = append(opts, httpthrottle.WithAttemptTimeout(100*time.Millisecond))
				}
				tr, err := httpthrottle.NewTransport(newBucket(t, 1, time.Second, nil), append(opts, s.opts...)...)
				require.NoError(t, err)
				start := time.Now()
				_, err = tr.RoundTrip(mustRequest(t, ctx, "GET", nil))
				require.ErrorIs(t, err, context.DeadlineExceeded)
				assert.Equal(t, 100*time.Millisecond, time.Since(start), "the caller has its error at once")
				resp, err := tr.RoundTrip(mustRequest(t, context.Background(), "GET", nil))
				require.NoError(t, err)
				resp.Body.Close()
				assert.Equal(t, []time.Duration{0, s.second}, base.rec.offsets("arrivals", start))
				time.Sleep(time.Minute)
				synctest.Wait()
				want := s.stats
				want.Sent, want.Attempts, want.ErrorsAfterWrite = 2, 2, 1
				assert.Equal(t, want, tr.Stats())
				assert.Equal(t, s.reset, conn.linger.Load() == 1, "closed as a reset (SO_LINGER 0)")
				if want.LateAnswers > 0 {
					assert.True(t, body.closed.Load(), "the late body is closed")
					assert.LessOrEqual(t, body.read.Load(), int64(64<<10+32<<10), "at most 64 KiB of the late body is read")
				}
			})
		})
	}
}

// Beyond WithMaxKeptOpen, a given-up attempt is closed at once, as a
// reset, and its token held for the bound.
func TestTransportMaxKeptOpen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conns := []*lingerConn{{}, {}}
		base := &wireBase{script: func(i int, w *wireCalls) (*http.Response, error) {
			w.conn(conns[i%2])
			require.NoError(t, w.write(nil))
			if err := w.wait(250 * time.Millisecond); err != nil {
				return nil, err
			}
			return w.ok()
		}}
		tr, err := httpthrottle.NewTransport(newBucket(t, 2, time.Second, nil), httpthrottle.WithBase(base),
			httpthrottle.WithAttemptTimeout(100*time.Millisecond), httpthrottle.WithInFlightBound(2*time.Second),
			httpthrottle.WithMaxKeptOpen(1), httpthrottle.WithMaxAttempts(1)) // the given-up attempts alone, no retries
		require.NoError(t, err)
		for range 2 {
			go func() { _, _ = tr.RoundTrip(mustRequest(t, context.Background(), "GET", nil)) }()
		}
		time.Sleep(150 * time.Millisecond)
		synctest.Wait()
		st := tr.Stats()
		assert.Equal(t, int64(1), st.KeptOpen)
		assert.Equal(t, uint64(1), st.Resets, "the second is closed as a reset")
		time.Sleep(time.Minute)
		synctest.Wait()
		st = tr.Stats()
		assert.Equal(t, uint64(1), st.LateAnswers)
		assert.Equal(t, uint64(2), st.HeldPastError)
		assert.Zero(t, st.KeptOpen)
		assert.Zero(t, st.HoldingPastError)
	})
}

// A caller that gives up before its attempt was written: the attempt is
// stopped and its token given back (one attempt: no retry of the timeout).
func TestTransportGivenUpBeforeWriting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := &wireBase{script: func(i int, w *wireCalls) (*http.Response, error) {
			w.conn(&fakeConn{})
			if i == 0 {
				if err := w.wait(time.Hour); err != nil {
					return nil, err
				}
			}
			require.NoError(t, w.write(nil))
			return w.ok()
		}}
		tr, err := httpthrottle.NewTransport(newBucket(t, 1, time.Second, nil), httpthrottle.WithBase(base),
			httpthrottle.WithAttemptTimeout(100*time.Millisecond), httpthrottle.WithMaxAttempts(1))
		require.NoError(t, err)
		start := time.Now()
		_, err = tr.RoundTrip(mustRequest(t, context.Background(), "GET", nil))
		require.ErrorIs(t, err, httpthrottle.ErrAttemptTimeout)
		synctest.Wait()
		resp, err := tr.RoundTrip(mustRequest(t, context.Background(), "GET", nil))
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		assert.Equal(t, []time.Duration{100 * time.Millisecond}, base.rec.offsets("arrivals", start),
			"the first was never written: its token came back at once")
		assert.Equal(t, httpthrottle.TransportStats{Sent: 2, Attempts: 2, ErrorsUnwritten: 1, AttemptTimeouts: 1}, tr.Stats())
	})
}
