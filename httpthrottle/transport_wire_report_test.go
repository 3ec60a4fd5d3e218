package httpthrottle_test

import (
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle/throttletest"
)

// wireReportEnv turns on TestTransportTimeoutCostReport, which takes a few
// minutes of real time:
//
//	RXTHROTTLE_WIRE_REPORT=3 go test -run TestTransportTimeoutCostReport -v ./httpthrottle/
//
// (the value is the number of interleaved rounds).
const wireReportEnv = "RXTHROTTLE_WIRE_REPORT"

// TestTransportTimeoutCostReport measures what a timed-out request costs
// the quota: the network (a delaying proxy, 0-100 ms on the way
// in, delivering after the client gave up) and quota (10 per second), 40
// requests from 8 workers, through the same client without a timeout and
// with attempt timeouts and in-flight bounds. It reports, per client, the
// time to send the 40, the requests answered, the server's refusals and
// the token-time the timeouts held past their errors. It asserts nothing
// about time: it is a report (see BENCHMARKS.md).
func TestTransportTimeoutCostReport(t *testing.T) {
	rounds, _ := strconv.Atoi(os.Getenv(wireReportEnv))
	if rounds < 1 {
		t.Skipf("set %s=<rounds> to run this report", wireReportEnv)
	}
	const n, w, total, workers = 10, time.Second, 40, 8
	type client struct {
		name    string
		timeout time.Duration // 0: none
		bound   time.Duration
	}
	clients := []client{
		{"no timeout", 0, httpthrottle.DefaultInFlightBound},
		{"timeout 90ms, bound 10s (default)", 90 * time.Millisecond, httpthrottle.DefaultInFlightBound},
		{"timeout 50ms, bound 0 (released at the error)", 50 * time.Millisecond, 0},
		{"timeout 50ms, bound 250ms", 50 * time.Millisecond, 250 * time.Millisecond},
		{"timeout 50ms, bound 1s", 50 * time.Millisecond, time.Second},
		{"timeout 50ms, bound 10s (default)", 50 * time.Millisecond, httpthrottle.DefaultInFlightBound},
	}
	type figures struct {
		took                []time.Duration
		ok, failed, refused int
		arrivals, heldPast  int
	}
	results := make([]figures, len(clients))
	for round := range rounds {
		for i, c := range clients {
			srv, err := throttletest.NewServer(rxthrottle.Per(n, w))
			require.NoError(t, err)
			proxy, err := throttletest.NewProxy(srv.URL, uniformDelay(100*time.Millisecond))
			require.NoError(t, err)
			netBase := &http.Transport{MaxIdleConnsPerHost: 64}
			b, err := rxthrottle.NewBucket(rxthrottle.Per(n, w))
			require.NoError(t, err)
			opts := []httpthrottle.TransportOption{httpthrottle.WithBase(netBase), httpthrottle.OnHeaderError(nil),
				httpthrottle.WithInFlightBound(c.bound)}
			if c.timeout > 0 {
				opts = append(opts, httpthrottle.WithAttemptTimeout(c.timeout))
			}
			tr, err := httpthrottle.NewTransport(b, opts...)
			require.NoError(t, err)
			start := time.Now()
			ok, _, failed := sendWireJobs(t, &http.Client{Transport: tr}, workers, total, proxy.URL)
			took := time.Since(start)
			require.Eventually(t, func() bool { return proxy.Queued() == 0 && tr.Stats().HoldingPastError == 0 }, time.Minute, 5*time.Millisecond)
			f := &results[i]
			f.took = append(f.took, took)
			f.ok += ok
			f.failed += failed
			f.refused += srv.Stats().Refused
			f.arrivals += len(srv.Log())
			f.heldPast += int(tr.Stats().HeldPastError)
			t.Logf("round %d, %s: %v, %d ok, %d failed, %d refused by the server", round+1, c.name, took.Round(time.Millisecond), ok, failed, srv.Stats().Refused)
			netBase.CloseIdleConnections()
			proxy.Close()
			srv.Close()
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "\n%d rounds of %d requests, Per(%d, %v), proxy delay 0-100ms\n", rounds, total, n, w)
	fmt.Fprintf(&sb, "%-48s %10s %8s %8s %8s %10s\n", "client", "median", "ok", "failed", "refused", "held past")
	for i, c := range clients {
		f := results[i]
		fmt.Fprintf(&sb, "%-48s %10v %8d %8d %8d %10d\n", c.name, median(f.took).Round(10*time.Millisecond), f.ok, f.failed, f.refused, f.heldPast)
	}
	t.Log(sb.String())
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
