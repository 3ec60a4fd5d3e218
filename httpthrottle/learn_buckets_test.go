package httpthrottle

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle/throttletest"
)

// TestLearnDiscordBuckets: one host, two routes answered from two Discord
// buckets of different quotas; a keyed learning Transport (keyed by path)
// learns each bucket's schedule and neither bucket refuses anything.
func TestLearnDiscordBuckets(t *testing.T) {
	quotas := map[string]int{"/a": 10, "/b": 4}
	mux := http.NewServeMux()
	handlers := map[string]*throttletest.Handler{}
	for path, n := range quotas {
		h, err := throttletest.NewHandler(rxthrottle.Per(n, time.Second), throttletest.WithDialect(throttletest.DialectDiscord),
			throttletest.WithAlgorithm(throttletest.FixedWindow), throttletest.WithBucketName("bucket"+path[1:]))
		require.NoError(t, err)
		mux.Handle(path, h)
		handlers[path] = h
	}
	srv := httptest.NewServer(mux)
	defer srv.Close()
	kl, err := rxthrottle.NewKeyed(rxthrottle.Per(1000, time.Second))
	require.NoError(t, err)
	tr, err := NewKeyedTransport(kl, KeyByPathPrefix(1), WithLearnLimits(LearnCeiling(rxthrottle.Per(50, time.Second))), OnHeaderError(nil))
	require.NoError(t, err)
	client := &http.Client{Transport: tr}
	defer client.CloseIdleConnections()
	var wg sync.WaitGroup
	for path := range quotas {
		var next atomic.Int64
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for next.Add(1) <= 20 {
					req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, srv.URL+path, nil)
					resp, err := client.Do(req)
					if err != nil {
						t.Error(err)
						return
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					_ = resp.Body.Close()
				}
			}()
		}
	}
	wg.Wait()
	for path, h := range handlers {
		st := h.Stats()
		t.Logf("%s: %+v", path, st)
		require.Zero(t, st.Refused, "bucket of %s refused", path)
		require.Equal(t, 20, st.Accepted, path)
	}
	require.Equal(t, 2, tr.LearnStats().Buckets)
	require.Equal(t, []rxthrottle.Limit{rxthrottle.Per(1000, time.Second), rxthrottle.Per(50, time.Second)}, kl.Limits(), "the ceiling on the keyed limiter, per key")
}
