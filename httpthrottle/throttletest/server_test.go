package throttletest_test

import (
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle/throttletest"
)

func TestServerOverLoopback(t *testing.T) {
	s, err := throttletest.NewServer(rxthrottle.Per(2, time.Minute))
	require.NoError(t, err)
	defer s.Close()
	var statuses []int
	var resp *http.Response
	for range 3 {
		resp, err = s.Client().Get(s.URL + "/items")
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		statuses = append(statuses, resp.StatusCode)
	}
	assert.Equal(t, []int{200, 200, 429}, statuses)
	assert.Equal(t, "60", resp.Header.Get("Retry-After"))
	exact, err := time.ParseDuration(resp.Header.Get(throttletest.ExactRetryAfterHeader) + "s")
	require.NoError(t, err)
	log := s.Log()
	require.Len(t, log, 3)
	assert.Equal(t, log[2].RetryAfter, exact)
	assert.Equal(t, log[0].At.Add(time.Minute).Sub(log[2].At), exact, "until the oldest arrival leaves the window")
	assert.Equal(t, throttletest.Stats{Accepted: 2, Refused: 1}, s.Stats())
}

// remotes records the client address of every request the server accepts.
type remotes struct {
	mu    sync.Mutex
	addrs map[string]int
}

func (r *remotes) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.addrs == nil {
		r.addrs = map[string]int{}
	}
	r.addrs[req.RemoteAddr]++
}

func TestServerConnections(t *testing.T) {
	for _, fresh := range []bool{false, true} {
		var seen remotes
		opts := []throttletest.Option{throttletest.WithHandler(&seen)}
		if fresh {
			opts = append(opts, throttletest.WithFreshConnections())
		}
		s, err := throttletest.NewServer(rxthrottle.Per(100, time.Second), opts...)
		require.NoError(t, err)
		for range 5 {
			resp, err := s.Client().Get(s.URL)
			require.NoError(t, err)
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		s.Close()
		if fresh {
			assert.Len(t, seen.addrs, 5, "a new connection for every request")
		} else {
			assert.Len(t, seen.addrs, 1, "one connection, reused")
		}
	}
}

func TestServerLatencyOnTheWayIn(t *testing.T) {
	const delay = 30 * time.Millisecond
	s, err := throttletest.NewServer(rxthrottle.Per(100, time.Second),
		throttletest.WithLatencyFunc(func() time.Duration { return delay }))
	require.NoError(t, err)
	defer s.Close()
	var sent []time.Time
	for range 3 {
		sent = append(sent, time.Now())
		resp, err := s.Client().Get(s.URL)
		require.NoError(t, err)
		resp.Body.Close()
	}
	// A lower bound is all the real clock can promise: the request cannot
	// arrive before its delay has passed.
	for i, a := range s.Log() {
		assert.GreaterOrEqual(t, a.At.Sub(sent[i]), delay, "request %d", i)
	}
}
