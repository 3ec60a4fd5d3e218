package redisstore

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
	"github.com/stretchr/testify/require"
)

// TestTransportSharesPushback: httpthrottle.Transport takes the Redis
// bucket unchanged, and a 429 seen by one process pauses every process that
// shares the bucket.
func TestTransportSharesPushback(t *testing.T) {
	var calls atomic.Int64
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "60")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer api.Close()

	srv := redistest.Start(t)
	limit := rxthrottle.Per(10, time.Second)
	a, err := NewBucket(srv.Client(t), "api", limit, WithTimeout(suiteTimeout)) // process A
	require.NoError(t, err)
	b, err := NewBucket(srv.Client(t), "api", limit, WithTimeout(suiteTimeout)) // process B
	require.NoError(t, err)

	// One attempt: the test is about the 429's pause, which the default
	// attempts would wait out (60 s) to send the request again.
	tr, err := httpthrottle.NewTransport(a, httpthrottle.WithMaxAttempts(1)) // holds its token in Redis until the response
	require.NoError(t, err)
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get(api.URL)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)

	ttl := pttl(t, srv, b.Keys()[2])
	require.Greater(t, ttl, 50*time.Second, "A's Retry-After paused the shared bucket")
	require.LessOrEqual(t, ttl, 62*time.Second+time.Millisecond, "the state lives until the pause (or the held token's one-minute lease) ends, plus two windows at most")
	ok, err := b.Allow(context.Background())
	require.NoError(t, err)
	require.False(t, ok, "B is held back by A's pushback")
	require.Equal(t, uint64(1), a.Stats().Admitted)
}
