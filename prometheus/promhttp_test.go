package rxprom_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	rxprom "github.com/rxthrottle/rxthrottle/prometheus"
)

// TestScrapeMetrics serves a registry holding the Collector with promhttp
// on a real loopback server and scrapes /metrics as Prometheus would. It
// runs on the real clock, so the load is one whose figures cannot depend on
// timing: three free tokens of an hour's quota, then a fourth caller that
// gives up after 10ms (the next token is an hour away).
func TestScrapeMetrics(t *testing.T) {
	c, err := rxprom.NewCollector(rxprom.WithBuckets(0, 1))
	require.NoError(t, err)
	b, err := rxthrottle.NewBucket(rxthrottle.Per(3, time.Hour), rxthrottle.OnAdmit(observeWait(t, c, "github")))
	require.NoError(t, err)
	require.NoError(t, c.AddLimiter("github", b))
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)

	for range 3 {
		require.NoError(t, b.Wait(t.Context()))
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, b.Wait(ctx), context.DeadlineExceeded)

	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	defer srv.Close()
	require.NoError(t, testutil.ScrapeAndCompare(srv.URL+"/metrics", strings.NewReader(`
# HELP rxthrottle_admitted_total Callers or items the limiter let through.
# TYPE rxthrottle_admitted_total counter
rxthrottle_admitted_total{limiter="github"} 3
# HELP rxthrottle_cancelled_total Waits that ended without a token.
# TYPE rxthrottle_cancelled_total counter
rxthrottle_cancelled_total{limiter="github"} 1
# HELP rxthrottle_free_tokens Tokens free now (for several limits, the smallest count).
# TYPE rxthrottle_free_tokens gauge
rxthrottle_free_tokens{limiter="github"} 0
# HELP rxthrottle_queued Callers waiting now.
# TYPE rxthrottle_queued gauge
rxthrottle_queued{limiter="github"} 0
# HELP rxthrottle_wait_seconds How long each admitted caller waited for a token (fed by the limiter's OnAdmit hook).
# TYPE rxthrottle_wait_seconds histogram
rxthrottle_wait_seconds_bucket{limiter="github",le="0"} 3
rxthrottle_wait_seconds_bucket{limiter="github",le="1"} 3
rxthrottle_wait_seconds_bucket{limiter="github",le="+Inf"} 3
rxthrottle_wait_seconds_sum{limiter="github"} 0
rxthrottle_wait_seconds_count{limiter="github"} 3
`), "rxthrottle_admitted_total", "rxthrottle_cancelled_total", "rxthrottle_free_tokens",
		"rxthrottle_queued", "rxthrottle_wait_seconds"))
}
