package httpthrottle

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle/throttletest"
)

// tokenLoad sends total requests from workers goroutines, each using 50
// to 150 tokens and estimated at estimate, to an OpenAI-like server with a
// budget of 1000 tokens per second (and 100 requests), reporting each
// request's use; it returns the server's refusals.
func tokenLoad(t *testing.T, estimate, total, workers int) (refused int, elapsed time.Duration, tr *Transport, budget LearnEvent) {
	srv, err := throttletest.NewServer(rxthrottle.Per(100, time.Second), throttletest.WithDialect(throttletest.DialectOpenAI),
		throttletest.WithAlgorithm(throttletest.FixedWindow), throttletest.WithTokenBudget(rxthrottle.Per(1000, time.Second)))
	require.NoError(t, err)
	defer srv.Close()
	var mu sync.Mutex
	tr, err = NewLearningTransport(WithBase(srv.Client().Transport), OnHeaderError(nil),
		WithLearnLimits(OnLearn(func(ev LearnEvent) {
			if strings.HasPrefix(ev.Reason, "token budget") {
				mu.Lock()
				budget = ev
				mu.Unlock()
			}
		})))
	require.NoError(t, err)
	client := &http.Client{Transport: tr}
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(total) {
				used := 50 + rand.N(101)
				req, _ := http.NewRequestWithContext(WithTokenEstimate(context.Background(), estimate), http.MethodGet, srv.URL+"/", nil)
				req.Header.Set(throttletest.TokensHeader, strconv.Itoa(used))
				resp, err := client.Do(req)
				if !assertNoErr(t, err) {
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				if resp.StatusCode == http.StatusOK {
					assertNoErr(t, ReportTokens(resp, used))
				}
				_ = resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	return srv.Stats().Refused, time.Since(start), tr, budget
}

func assertNoErr(t *testing.T, err error) bool {
	t.Helper()
	if err != nil {
		t.Error(err)
		return false
	}
	return true
}

// TestLearnTokenBudget: with estimates no lower than the use, an
// OpenAI-like server's token budget is never exceeded: no refusal.
func TestLearnTokenBudget(t *testing.T) {
	refused, elapsed, tr, budget := tokenLoad(t, 150, 40, 16)
	t.Logf("40 requests of 50-150 tokens, estimated 150, at 1000 tokens/s: %d refused in %v; %+v", refused, elapsed, tr.LearnStats())
	require.Zero(t, refused)
	// The last change of the token budget (the request quota's trust ramp
	// reports changes of its own meanwhile).
	require.Equal(t, "token budget; window inferred from successive resets", budget.Reason)

	// Estimates below the use: each overrun is a debt the server counted
	// first, so some requests may be refused. A report, not a promise.
	refused, elapsed, _, _ = tokenLoad(t, 100, 40, 16)
	t.Logf("the same, estimated 100: %d refused in %v", refused, elapsed)
}

func TestReportTokensErrors(t *testing.T) {
	require.ErrorContains(t, ReportTokens(nil, 1), "httpthrottle: ReportTokens: a response with its request is required")
	req, _ := http.NewRequest(http.MethodGet, "http://x/", nil)
	require.ErrorContains(t, ReportTokens(&http.Response{Request: req}, 1), "no WithTokenEstimate")
	req = req.WithContext(WithTokenEstimate(context.Background(), 10))
	require.NoError(t, ReportTokens(&http.Response{Request: req}, 1), "no budget known yet: nothing to report")
}
