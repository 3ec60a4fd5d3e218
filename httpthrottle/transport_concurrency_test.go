package httpthrottle_test

import (
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
)

// From the server's side: a Transport over a Bucket with
// WithConcurrency(k) never has more than k requests in a loopback server's
// handler at once, and the window still holds at the server. The handler
// counts the requests inside it and logs each arrival on the real clock;
// it leaves the handler before its answer is written, so a request in the
// handler always holds its token.

// concurrencyServer counts the requests in its handler.
type concurrencyServer struct {
	inside, most atomic.Int32
	mu           sync.Mutex
	arrivals     []time.Time
	hold         func() // how long a request stays inside
}

func (s *concurrencyServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	in := s.inside.Add(1)
	for m := s.most.Load(); in > m && !s.most.CompareAndSwap(m, in); m = s.most.Load() {
	}
	s.mu.Lock()
	s.arrivals = append(s.arrivals, now)
	s.mu.Unlock()
	s.hold()
	s.inside.Add(-1)
	w.WriteHeader(http.StatusOK)
}

// mostInWindow returns the largest number of arrivals in one half-open
// window of length w.
func (s *concurrencyServer) mostInWindow(w time.Duration) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	ts := append([]time.Time(nil), s.arrivals...)
	sort.Slice(ts, func(i, j int) bool { return ts[i].Before(ts[j]) })
	best, lo := 0, 0
	for hi := range ts {
		for ts[hi].Sub(ts[lo]) >= w {
			lo++
		}
		best = max(best, hi-lo+1)
	}
	return best
}

func TestTransportConcurrencyAtTheServer(t *testing.T) {
	const k, n, w, workers, each = 3, 8, 400 * time.Millisecond, 12, 4
	var seed atomic.Uint64
	srv := &concurrencyServer{hold: func() {
		r := rand.New(rand.NewPCG(seed.Add(1), 9))
		time.Sleep(time.Duration(r.IntN(30)) * time.Millisecond)
	}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	b, err := rxthrottle.NewBucket(rxthrottle.Per(n, w), rxthrottle.WithConcurrency(k))
	require.NoError(t, err)
	tr, err := httpthrottle.NewTransport(b, httpthrottle.WithBase(ts.Client().Transport))
	require.NoError(t, err)
	client := &http.Client{Transport: tr}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range each {
				resp, err := client.Get(ts.URL)
				if assert.NoError(t, err) {
					assert.Equal(t, http.StatusOK, resp.StatusCode)
					resp.Body.Close()
				}
			}
		})
	}
	wg.Wait()
	require.Len(t, srv.arrivals, workers*each)
	require.LessOrEqual(t, srv.most.Load(), int32(k), "requests in the handler at once")
	require.LessOrEqual(t, srv.mostInWindow(w), n, "arrivals in one window")
	t.Logf("at most %d of k=%d in the handler at once; at most %d of N=%d arrivals in a window", srv.most.Load(), k, srv.mostInWindow(w), n)
}

// The control: the same server without the cap gets the window's N
// requests in its handler at once (they wait there until let go), so the
// check above is one the server can fail.
func TestTransportConcurrencyControl(t *testing.T) {
	const n, w = 5, time.Hour
	gate := make(chan struct{})
	srv := &concurrencyServer{hold: func() { <-gate }}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	for _, capped := range []bool{false, true} {
		srv.most.Store(0)
		opts := []rxthrottle.Option{}
		if capped {
			opts = append(opts, rxthrottle.WithConcurrency(2))
		}
		b, err := rxthrottle.NewBucket(rxthrottle.Per(n, w), opts...)
		require.NoError(t, err)
		tr, err := httpthrottle.NewTransport(b, httpthrottle.WithBase(ts.Client().Transport))
		require.NoError(t, err)
		client := &http.Client{Transport: tr}
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				if resp, err := client.Get(ts.URL); assert.NoError(t, err) {
					resp.Body.Close()
				}
			})
		}
		want := int32(n)
		if capped {
			want = 2
		}
		require.Eventually(t, func() bool { return srv.inside.Load() == want }, 10*time.Second, time.Millisecond)
		time.Sleep(50 * time.Millisecond) // a capped request that got through would show
		require.Equal(t, want, srv.most.Load(), "capped %v", capped)
		for range n {
			gate <- struct{}{}
		}
		wg.Wait()
	}
}
