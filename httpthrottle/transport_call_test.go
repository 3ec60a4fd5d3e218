package httpthrottle_test

import (
	"context"
	"io"
	"net/http"
	"sort"
	"testing"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle/throttletest"
)

// Issue 27, item 4: ThrottleMap with an HTTP call in fn, at a server that
// drops the connection of every fourth request after counting it: net/http
// sends the request again by itself on a reused connection. Through
// ForCall each re-send takes a token of its own, so the server refuses
// nothing, never sees more than N in a window, and every arrival had a
// token of the Bucket.
func TestForCallThrottleMapDroppedConnections(t *testing.T) {
	t.Parallel()
	srv, err := throttletest.NewServer(rxthrottle.Per(wireN, wireW), throttletest.WithDropFunc(dropEvery(4, 2*wireN)))
	require.NoError(t, err)
	defer srv.Close()
	bucket, err := rxthrottle.NewBucket(rxthrottle.Per(wireN, wireW))
	require.NoError(t, err)
	netBase := &http.Transport{MaxIdleConnsPerHost: 64}
	defer netBase.CloseIdleConnections()
	fn := func(ctx context.Context, v any) (any, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/v1/items", nil)
		if err != nil {
			return nil, rxthrottle.NotSent(err)
		}
		resp, err := httpthrottle.ForCall(ctx, httpthrottle.WithBase(netBase)).Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, nil
	}
	items := make([]any, wireTotal)
	for i := range items {
		items[i] = i
	}
	out := rxthrottle.ThrottleMapWith(bucket, fn)(rxgo.Just(items...)())
	ok, failed := 0, 0
	for item := range out.Observe() {
		switch {
		case item.E != nil:
			failed++
		case item.V == http.StatusOK:
			ok++
		default:
			t.Errorf("status %v", item.V)
		}
	}
	require.Eventually(t, func() bool { return bucket.Stats().Held == 0 }, 30*time.Second, 5*time.Millisecond)
	st := srv.Stats()
	t.Logf("%d ok, %d failed; server %+v; bucket %+v", ok, failed, st, bucket.Stats())
	assert.Zero(t, st.Refused)
	assert.Positive(t, st.Dropped, "the server dropped nothing: the test proves nothing")
	assert.Equal(t, wireTotal, ok+failed)
	var arrivals []time.Duration
	log := srv.Log()
	for _, a := range log {
		arrivals = append(arrivals, a.At.Sub(log[0].At))
	}
	sort.Slice(arrivals, func(i, j int) bool { return arrivals[i] < arrivals[j] })
	requireWindow(t, arrivals, wireN, wireW)
	assert.LessOrEqual(t, uint64(len(log)), bucket.Stats().Admitted, "an arrival without a token of its own")
}

// Outside a ThrottleMap call, ForCall's client sends nothing.
func TestForCallOutsideACall(t *testing.T) {
	req, err := http.NewRequest(http.MethodGet, "http://api.test/", nil)
	require.NoError(t, err)
	_, err = httpthrottle.ForCall(context.Background()).Do(req)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "httpthrottle: ForCall: the context is not that of a ThrottleMap call")
}
