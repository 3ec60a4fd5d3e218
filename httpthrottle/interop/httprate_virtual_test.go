package interop

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-chi/httprate"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle/httpthrottle"
)

// TestLearnAtHttprateVirtual: go-chi/httprate (LimitBy(10, 1s), the real
// library, on the bubble's clock) whose limiter starts at each phase of
// a second: its windows start there (v0.15 on), and the reset it sends is
// their end truncated to a whole second, up to a second early. From
// NewLearningTransport, 8 goroutines send 60 requests, each answered
// after 1 ms. The learner's boundary check sends its lone request a
// request's share after its own tokens came back (where httprate's
// window began, not at the truncated reset), reads that the server
// carries the last window over, and spreads the rest: nothing is
// refused. (Before, the lone request went at the start of httprate's
// window and was refused, with a Retry-After of the whole window: one
// refusal at every phase here, and 1.18x the ideal in BenchmarkLearnReal.)
// At phases 944-992 ms the first answer comes less than the check's lead
// before the truncated reset, so the check begins at once and the rest
// of the quota goes one at a time inside it; the lone request is held
// past the client's own renewal once that quota is spent
// (holdLoneLocked): before, it went as the first token came back and was
// refused at 950, 970 and 990 ms (BenchmarkLearnReal's 1 refusal and
// 1.19x in 2 of 16 cells).
func TestLearnAtHttprateVirtual(t *testing.T) {
	for _, phase := range []time.Duration{0, 100 * time.Millisecond, 500 * time.Millisecond, 900 * time.Millisecond, 950 * time.Millisecond, 970 * time.Millisecond, 990 * time.Millisecond, 999 * time.Millisecond} {
		t.Run(phase.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				time.Sleep(time.Until(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) + phase)
				limited := httprate.LimitBy(n, time.Second, httprate.Key("*"))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					_, _ = io.WriteString(w, "ok\n")
				}))
				var refused atomic.Int64
				base := rtFunc(func(req *http.Request) (*http.Response, error) {
					time.Sleep(time.Millisecond)
					rec := httptest.NewRecorder()
					limited.ServeHTTP(rec, req)
					resp := rec.Result()
					resp.Request = req
					if resp.StatusCode == http.StatusTooManyRequests {
						refused.Add(1)
					}
					return resp, nil
				})
				tr, err := httpthrottle.NewLearningTransport(httpthrottle.WithBase(base), httpthrottle.OnHeaderError(nil))
				require.NoError(t, err)
				const total, workers = 60, 8
				start := time.Now()
				var next atomic.Int64
				var wg sync.WaitGroup
				for range workers {
					wg.Go(func() {
						for next.Add(1) <= total {
							req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://api.example/", nil)
							resp, err := tr.RoundTrip(req)
							if err != nil {
								t.Error(err)
								return
							}
							_ = resp.Body.Close()
						}
					})
				}
				wg.Wait()
				t.Logf("phase %v: %d refused, %v for %d (ideal %v); last %v", phase, refused.Load(), time.Since(start), total, time.Duration(total/n-1)*time.Second, tr.LearnStats().Last)
				require.Zero(t, refused.Load(), "refused at httprate")
			})
		})
	}
}

type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
