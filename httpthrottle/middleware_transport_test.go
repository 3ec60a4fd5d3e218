package httpthrottle_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/guard"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
)

// mwServe is a RoundTripper that serves each request with h in memory, as a
// server at remote would: both sides of the wire in one synctest bubble,
// where a socket would keep time from moving.
type mwServe struct {
	h      http.Handler
	remote string
}

func (s mwServe) RoundTrip(r *http.Request) (*http.Response, error) {
	in := r.Clone(r.Context())
	in.RemoteAddr = s.remote
	in.RequestURI = r.URL.RequestURI()
	if r.Body != nil {
		defer r.Body.Close()
	}
	rec := httptest.NewRecorder()
	s.h.ServeHTTP(rec, in)
	return rec.Result(), nil
}

// sendAll sends n GET requests from workers goroutines through rt and
// returns the statuses and the instants (offsets from start) of the 200s.
func sendAll(t *testing.T, rt http.RoundTripper, n, workers int, start time.Time) (map[int]int, []time.Duration) {
	t.Helper()
	client := &http.Client{Transport: rt}
	var (
		mu     sync.Mutex
		status = map[int]int{}
		oks    []time.Duration
		wg     sync.WaitGroup
		jobs   = make(chan struct{}, n)
	)
	for range n {
		jobs <- struct{}{}
	}
	close(jobs)
	for range workers {
		wg.Go(func() {
			for range jobs {
				resp, err := client.Get("http://api.test/v1/items")
				if !assert.NoError(t, err) {
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				mu.Lock()
				status[resp.StatusCode]++
				if resp.StatusCode == http.StatusOK {
					oks = append(oks, time.Since(start))
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return status, oks
}

// The seed use case end to end: a server allows 30 requests per 60 s and
// blocks for 300 s; a client sending 100 requests straight is blocked, the
// same client through a Transport over a bucket of the same quota is never
// refused and takes exactly as long as the quota demands.
func TestGuardAndTransportAgree(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := guard.Policy{Limit: rxthrottle.Per(30, time.Minute), Block: 5 * time.Minute}
		const n, workers = 100, 10
		var logBuf bytes.Buffer
		g, err := guard.New(p, guard.WithLogger(noTimeLogger(&logBuf)))
		require.NoError(t, err)
		mw, err := httpthrottle.Middleware(g)
		require.NoError(t, err)
		api := mw(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			_, _ = io.WriteString(w, "ok")
		}))

		// Unthrottled, from one address: 30 go through, the rest are
		// refused and the address is blocked once.
		start := time.Now()
		status, _ := sendAll(t, mwServe{api, "192.0.2.1:4000"}, n, workers, start)
		assert.Equal(t, map[int]int{200: 30, 429: 70}, status)
		assert.Equal(t, 1, strings.Count(logBuf.String(), "key=192.0.2.1 count=31"), "log: %s", logBuf.String())

		// Throttled, from another address: every request succeeds.
		b, err := rxthrottle.NewBucket(p.Limit) // the server's own quota
		require.NoError(t, err)
		tr, err := httpthrottle.NewTransport(b, httpthrottle.WithBase(mwServe{api, "192.0.2.2:4000"}))
		require.NoError(t, err)
		start = time.Now()
		status, oks := sendAll(t, tr, n, workers, start)
		assert.Equal(t, map[int]int{200: n}, status)
		// 100 requests at 30 per minute: bursts at 0, 60, 120 and 180 s.
		require.Len(t, oks, n)
		for i, at := range oks {
			want := time.Duration(i/p.Limit.N) * p.Limit.Window
			if !assert.Equal(t, want, at, "request %d", i) {
				break
			}
		}
		st := g.Stats()
		assert.Equal(t, uint64(30+n), st.Allowed)
		assert.Equal(t, uint64(70), st.Refused)
		assert.Equal(t, uint64(1), st.Blocks)
	})
}
