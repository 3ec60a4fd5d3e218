package interop

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/ulule/limiter/v3"
	"github.com/ulule/limiter/v3/drivers/middleware/stdlib"
	"github.com/ulule/limiter/v3/drivers/store/memory"
)

// TestLearnAtUluleVirtual: ulule/limiter (its stdlib middleware, 10 per
// 1 s, memory store without its cleaner goroutine) on the bubble's clock,
// its key first hit at several phases of a second: a fixed window from
// the first request after the last one ended, whose X-RateLimit-Reset is
// that window's end truncated to a whole Unix second, read 68-223 ms
// ahead at phases like .777 and .851. From both starts, c8 and c32, 200
// requests each answered after 2 ms: nothing refused, and the window
// learned is the server's second (it was 10 per 2 s at those two phases,
// 1.9-2.0x the ideal: every gap of a second between resets was taken for
// idle time, then a truncation's gap of two was kept; BenchmarkLearnReal's
// 2.001x once). Not fixed, and not asserted here: where the boundary
// check's lone request starts ulule's window just across a whole second
// (phase .925 of the 27 a scan tried, 37 ms apart), the first gap between
// resets is two seconds and every later one too (the client's own window
// keeps it so), and the held-back check (track_early.go) is not made, as
// ulule's first answer was read 75 ms before its truncated reset, as late
// in a window as only a fixed window's is.
func TestLearnAtUluleVirtual(t *testing.T) {
	for _, start := range []string{"Per(1000,1s)", "NewLearningTransport"} {
		for _, workers := range []int{8, 32} {
			for _, phase := range []time.Duration{0, 300 * time.Millisecond, 777 * time.Millisecond, 851 * time.Millisecond} {
				t.Run(fmt.Sprintf("%s/c%d/%v", start, workers, phase), func(t *testing.T) {
					synctest.Test(t, func(t *testing.T) { ululeVirtual(t, start, workers, phase) })
				})
			}
		}
	}
}

func ululeVirtual(t *testing.T, start string, workers int, phase time.Duration) {
	time.Sleep(time.Until(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) + phase)
	store := memory.NewStoreWithOptions(limiter.StoreOptions{Prefix: "interop", CleanUpInterval: 0})
	limited := stdlib.NewMiddleware(limiter.New(store, limiter.Rate{Period: time.Second, Limit: n})).Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok\n")
	}))
	var refused atomic.Int64
	base := rtFunc(func(req *http.Request) (*http.Response, error) {
		time.Sleep(time.Millisecond)
		rec := httptest.NewRecorder()
		limited.ServeHTTP(rec, req)
		time.Sleep(time.Millisecond)
		resp := rec.Result()
		resp.Request = req
		if resp.StatusCode == http.StatusTooManyRequests {
			refused.Add(1)
		}
		return resp, nil
	})
	tr := newTransport(t, base, start)
	const total = 200
	begin := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for next.Add(1) <= total {
				for {
					req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://api.example/", nil)
					resp, err := tr.RoundTrip(req)
					if err != nil {
						t.Error(err)
						return
					}
					_ = resp.Body.Close()
					if resp.StatusCode < 300 {
						break
					}
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(begin)
	last := tr.LearnStats().Last
	t.Logf("%d refused, %v (%.3fx the ideal 19s); last %v", refused.Load(), elapsed, float64(elapsed)/float64(19*time.Second), last)
	require.Zero(t, refused.Load(), "refused at ulule")
	require.NotEmpty(t, last.Limits)
	require.LessOrEqual(t, last.Limits[0].Window, 1100*time.Millisecond, "the window learned of ulule's 1 s")
}
