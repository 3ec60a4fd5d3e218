package bench_test

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle/throttletest"
)

// The load of BenchmarkInflight (issue 27's table): inflightTotal requests
// from inflightWorkers goroutines to a server that allows inflightN per
// second, through a Transport over a Bucket of exactly that quota; each
// worker sends its request again until it is answered 200. The ideal is
// (ceil(total/N)-1) windows: 19 s.
const (
	inflightN       = 10
	inflightTotal   = 200
	inflightWorkers = 8
	inflightCap     = 150 * time.Second // a run stops there, done or not
)

// inflightMode is one network of the table.
type inflightMode struct {
	name    string
	proxy   time.Duration // a delaying proxy, 0 to this on the way in (0: none)
	handler time.Duration // a handler taking 0 to this (0: at once)
	timeout time.Duration // WithAttemptTimeout (0: none)
	drop    float64       // the share of accepted requests whose connection the server drops
	retries bool          // WithMaxAttempts(inflightAttempts): the Transport retries a timeout
	// throttleMap sends the load through ThrottleMap (c8: WithConcurrency)
	// with httpthrottle.ForCall as fn's client, instead of a Transport.
	throttleMap bool
}

// inflightAttempts is the WithMaxAttempts of the modes that let the
// Transport retry a timed-out attempt itself (and answer with its late
// answer while the retry waits); the worker still sends again after the
// last.
const inflightAttempts = 10

var inflightModes = []inflightMode{
	{name: "proxy0-200ms-timeout100ms", proxy: 200 * time.Millisecond, timeout: 100 * time.Millisecond},
	{name: "proxy0-100ms-timeout50ms", proxy: 100 * time.Millisecond, timeout: 50 * time.Millisecond},
	{name: "proxy0-300ms-timeout100ms", proxy: 300 * time.Millisecond, timeout: 100 * time.Millisecond},
	{name: "handler0-200ms-timeout100ms", handler: 200 * time.Millisecond, timeout: 100 * time.Millisecond},
	{name: "proxy0-200ms-timeout100ms-retries", proxy: 200 * time.Millisecond, timeout: 100 * time.Millisecond, retries: true},
	{name: "proxy0-100ms-timeout50ms-retries", proxy: 100 * time.Millisecond, timeout: 50 * time.Millisecond, retries: true},
	{name: "proxy0-300ms-timeout100ms-retries", proxy: 300 * time.Millisecond, timeout: 100 * time.Millisecond, retries: true},
	{name: "handler0-200ms-timeout100ms-retries", handler: 200 * time.Millisecond, timeout: 100 * time.Millisecond, retries: true},
	{name: "drop10%", drop: 0.10},
	{name: "drop2%", drop: 0.02},
	{name: "throttlemap-drop10%", drop: 0.10, throttleMap: true},
	{name: "throttlemap-proxy0-200ms-timeout100ms-retries", proxy: 200 * time.Millisecond, timeout: 100 * time.Millisecond,
		retries: true, throttleMap: true},
}

// BenchmarkInflight runs each mode once per iteration at an exact sliding
// log and at a fixed window, with the Transport's default options (plus
// the mode's attempt timeout, and in the -retries modes WithMaxAttempts).
// It reports the server's refusals, the most arrivals it saw in any window
// of W, the time over the ideal, the requests done, the Transport's
// releases at late answers and at peers' closes, the calls a late answer
// answered while their retry waited, and the server's arrivals. Run it with -benchtime 1x: an iteration takes 20 s or
// more.
func BenchmarkInflight(b *testing.B) {
	for _, alg := range []throttletest.Algorithm{throttletest.SlidingLog, throttletest.FixedWindow} {
		for _, m := range inflightModes {
			b.Run("server="+alg.String()+"/mode="+m.name, func(b *testing.B) {
				var sum inflightResult
				for range b.N {
					r := inflightRun(b, alg, m)
					sum.refused += r.refused
					sum.maxWindow = max(sum.maxWindow, r.maxWindow)
					sum.elapsed += r.elapsed
					sum.done += r.done
					sum.late += r.late
					sum.peer += r.peer
					sum.lateUsed += r.lateUsed
					sum.arrivals += r.arrivals
				}
				n := float64(b.N)
				ideal := time.Duration((inflightTotal+inflightN-1)/inflightN-1) * time.Second
				b.ReportMetric(float64(sum.refused)/n, "refusals/run")
				b.ReportMetric(float64(sum.maxWindow), "max-in-W")
				b.ReportMetric(float64(sum.elapsed)/n/float64(ideal), "x-ideal")
				b.ReportMetric(float64(sum.done)/n, "done/run")
				b.ReportMetric(float64(sum.late)/n, "late-answers/run")
				b.ReportMetric(float64(sum.peer)/n, "peer-closes/run")
				b.ReportMetric(float64(sum.lateUsed)/n, "answered-late/run")
				b.ReportMetric(float64(sum.arrivals)/n, "arrivals/run")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}

type inflightResult struct {
	refused, maxWindow, done int
	late, peer, lateUsed     uint64
	arrivals                 int
	elapsed                  time.Duration
}

// inflightRun sends the load once and returns what the server and the
// Transport saw.
func inflightRun(b *testing.B, alg throttletest.Algorithm, m inflightMode) inflightResult {
	srv, url, stop := inflightServer(b, alg, m)
	defer stop()
	netBase := &http.Transport{MaxIdleConnsPerHost: 64}
	defer netBase.CloseIdleConnections()
	opts := []httpthrottle.TransportOption{httpthrottle.WithBase(netBase), httpthrottle.OnHeaderError(nil)}
	if m.timeout > 0 {
		opts = append(opts, httpthrottle.WithAttemptTimeout(m.timeout))
	}
	if m.retries {
		opts = append(opts, httpthrottle.WithMaxAttempts(inflightAttempts))
	}
	ctx, cancel := context.WithTimeout(context.Background(), inflightCap)
	defer cancel()
	start := time.Now()
	var r inflightResult
	if m.throttleMap {
		r.done = inflightMap(ctx, url, opts)
	} else {
		r = inflightTransport(b, ctx, url, opts)
	}
	r.elapsed = time.Since(start)
	r.refused = srv.Stats().Refused
	log := srv.Log()
	r.maxWindow, r.arrivals = maxInWindow(log, time.Second), len(log)
	return r
}

// inflightServer starts the mode's server (and its proxy) at alg and
// returns it, the URL to send to, and what stops them.
func inflightServer(b *testing.B, alg throttletest.Algorithm, m inflightMode) (*throttletest.Server, string, func()) {
	sopts := []throttletest.Option{throttletest.WithAlgorithm(alg)}
	if m.handler > 0 {
		sopts = append(sopts, throttletest.WithHandler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			time.Sleep(rand.N(m.handler + 1))
			w.WriteHeader(http.StatusOK)
		})))
	}
	if m.drop > 0 {
		sopts = append(sopts, throttletest.WithDropRate(m.drop))
	}
	srv, err := throttletest.NewServer(rxthrottle.Per(inflightN, time.Second), sopts...)
	if err != nil {
		b.Fatal(err)
	}
	if m.proxy == 0 {
		return srv, srv.URL, srv.Close
	}
	proxy, err := throttletest.NewProxy(srv.URL, func() time.Duration { return rand.N(m.proxy + 1) })
	if err != nil {
		srv.Close()
		b.Fatal(err)
	}
	return srv, proxy.URL, func() { proxy.Close(); srv.Close() }
}

// inflightTransport sends the load through one Transport over a Bucket,
// from inflightWorkers goroutines, each sending its request again until
// it is answered 200.
func inflightTransport(b *testing.B, ctx context.Context, url string, opts []httpthrottle.TransportOption) inflightResult {
	bucket, err := rxthrottle.NewBucket(rxthrottle.Per(inflightN, time.Second))
	if err != nil {
		b.Fatal(err)
	}
	tr, err := httpthrottle.NewTransport(bucket, opts...)
	if err != nil {
		b.Fatal(err)
	}
	client := &http.Client{Transport: tr}
	var next, done atomic.Int64
	var wg sync.WaitGroup
	for range inflightWorkers {
		wg.Go(func() {
			for next.Add(1) <= inflightTotal {
				if inflightGet(ctx, client, url) {
					done.Add(1)
				}
			}
		})
	}
	wg.Wait()
	st := tr.Stats()
	return inflightResult{done: int(done.Load()), late: st.LateAnswers, peer: st.PeerCloses, lateUsed: st.RetriesAnsweredLate}
}

// inflightGet sends GET url through client until it is answered 200, and
// reports whether it was before ctx ended.
func inflightGet(ctx context.Context, client *http.Client, url string) bool {
	for ctx.Err() == nil {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/", nil)
		resp, err := client.Do(req)
		if err != nil {
			continue // a timeout or a drop: send it again
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return true
		}
	}
	return false
}

// maxInWindow returns the most arrivals of log in any half-open window
// of length w.
func maxInWindow(log []throttletest.Arrival, w time.Duration) int {
	at := make([]time.Time, len(log))
	for i, a := range log {
		at[i] = a.At
	}
	slices.SortFunc(at, func(x, y time.Time) int { return x.Compare(y) })
	most := 0
	for i, j := 0, 0; i < len(at); i++ {
		for j < len(at) && at[j].Before(at[i].Add(w)) {
			j++
		}
		most = max(most, j-i)
	}
	return most
}
