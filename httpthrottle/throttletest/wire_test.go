package throttletest_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle/throttletest"
)

func TestServerDropsAfterCounting(t *testing.T) {
	// Every request is dropped after it is counted. The first goes on a
	// fresh connection, which net/http never tries again; the second goes
	// on the connection the warm-up left idle, and net/http sends it again
	// on a new one by itself: two arrivals, one call.
	var drop atomic.Bool
	s, err := throttletest.NewServer(rxthrottle.Per(100, time.Second),
		throttletest.WithDropFunc(drop.Load))
	require.NoError(t, err)
	defer s.Close()
	resp, err := s.Client().Get(s.URL) // warm-up: a connection to reuse
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	drop.Store(true)
	_, err = s.Client().Get(s.URL)
	require.Error(t, err)
	log := s.Log()
	require.Len(t, log, 3, "the warm-up, the request and net/http's re-send")
	assert.False(t, log[0].Dropped)
	assert.True(t, log[1].Dropped && log[2].Dropped)
	assert.Equal(t, throttletest.Stats{Accepted: 3, Dropped: 2}, s.Stats())
}

func TestHandlerRoundTripDrops(t *testing.T) {
	h, err := throttletest.NewHandler(rxthrottle.Per(1, time.Second), throttletest.WithDropRate(1))
	require.NoError(t, err)
	_, err = (&http.Client{Transport: h}).Get("http://api.test/")
	require.ErrorIs(t, err, throttletest.ErrDropped)
	assert.Equal(t, throttletest.Stats{Accepted: 1, Dropped: 1}, h.Stats())
}

func TestProxyDeliversAfterTheClientGaveUp(t *testing.T) {
	const delay = 200 * time.Millisecond
	s, err := throttletest.NewServer(rxthrottle.Per(100, time.Second))
	require.NoError(t, err)
	defer s.Close()
	p, err := throttletest.NewProxy(s.URL, func() time.Duration { return delay })
	require.NoError(t, err)
	defer p.Close()
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()

	// Answered through the proxy, no sooner than its delay.
	sent := time.Now()
	resp, err := client.Get(p.URL + "/a")
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	require.Len(t, s.Log(), 1)
	assert.GreaterOrEqual(t, s.Log()[0].At.Sub(sent), delay)

	// Given up on long before the delay: it still arrives.
	ctx, cancel := context.WithTimeout(context.Background(), delay/10)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", p.URL+"/b", nil)
	require.NoError(t, err)
	_, err = client.Do(req)
	require.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
	require.Eventually(t, func() bool { return len(s.Log()) == 2 && p.Queued() == 0 }, 10*time.Second, time.Millisecond)
	assert.Equal(t, "/b", s.Log()[1].Path)
}

func TestNewProxyBadTarget(t *testing.T) {
	for _, target := range []string{"", "nohostport", "http://", "http://%zz"} {
		p, err := throttletest.NewProxy(target, nil)
		assert.Nil(t, p, target)
		assert.Error(t, err, target)
		if err != nil {
			assert.Contains(t, err.Error(), "throttletest: NewProxy(")
		}
	}
}
