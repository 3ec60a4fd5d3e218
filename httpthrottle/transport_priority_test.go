package httpthrottle_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
)

// A request's context carries its priority (rxthrottle.WithPriority) to
// the Transport's limiter: an urgent request sent after a background one
// that waits goes first.
func TestTransportRequestPriority(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var order []string
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			order = append(order, r.URL.Path)
			mu.Unlock()
			return respond(r, http.StatusOK, nil), nil
		})
		b := newBucket(t, 1, time.Second, nil)
		tr, err := httpthrottle.NewTransport(b, httpthrottle.WithBase(base))
		require.NoError(t, err)
		send := func(ctx context.Context, path string) {
			req := mustRequest(t, ctx, "GET", nil)
			req.URL.Path = path
			if resp, err := tr.RoundTrip(req); err == nil {
				resp.Body.Close()
			}
		}
		send(context.Background(), "/first") // takes this second's token
		var wg sync.WaitGroup
		wg.Go(func() { send(context.Background(), "/background") })
		synctest.Wait() // it waits for the next token
		wg.Go(func() { send(rxthrottle.WithPriority(context.Background(), 1), "/urgent") })
		wg.Wait()
		require.Equal(t, []string{"/first", "/urgent", "/background"}, order)
	})
}
