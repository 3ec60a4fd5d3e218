package bench_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/ratelimit"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle/throttletest"
)

// The load of BenchmarkLearn: learnTotal requests from learnWorkers
// goroutines to a server that allows learnN per second, through a client
// that starts from a wrong limit of 1000 per second.
const (
	learnN       = 10
	learnTotal   = 200
	learnWorkers = 32
)

// BenchmarkLearn runs the load once per iteration against a loopback
// throttletest server of each dialect and algorithm, through a Transport
// with WithLearnLimits (impl=learn) and, at the sliding-window counter,
// through go.uber.org/ratelimit (impl=uber) in the same run
// (bare-429-fixed: a fixed window that refuses with a bare 429, not even
// Retry-After). It reports the refusals, the time over the ideal (the
// last of learnTotal requests sent as early as the quota allows:
// (ceil(total/N)-1) windows), and the throughput as a share of the quota. Run it with -benchtime 1x: one
// iteration takes about twenty seconds.
func BenchmarkLearn(b *testing.B) {
	cases := []struct {
		name    string
		dialect throttletest.Dialect
		alg     throttletest.Algorithm
		w       time.Duration // the server's window; 0 for a second
	}{
		{"ietf", throttletest.DialectIETF, throttletest.FixedWindow, 0},
		{"ietf-draft", throttletest.DialectIETFDraft, throttletest.FixedWindow, 0},
		{"github", throttletest.DialectGitHub, throttletest.FixedWindow, 0},
		{"discord", throttletest.DialectDiscord, throttletest.FixedWindow, 0},
		{"openai", throttletest.DialectOpenAI, throttletest.FixedWindow, 0},
		{"429-only", throttletest.DialectNone, throttletest.SlidingLog, 0},
		{"429-only-fixed", throttletest.DialectNone, throttletest.FixedWindow, 0},
		{"bare-429-fixed", dialectBare, throttletest.FixedWindow, 0},
		{"swc-ietf", throttletest.DialectIETF, throttletest.SlidingWindowCounter, 0},
		{"swc-ietf-draft", throttletest.DialectIETFDraft, throttletest.SlidingWindowCounter, 0},
		{"swc-github", throttletest.DialectGitHub, throttletest.SlidingWindowCounter, 0},
		{"swc-discord", throttletest.DialectDiscord, throttletest.SlidingWindowCounter, 0},
		{"swc-openai", throttletest.DialectOpenAI, throttletest.SlidingWindowCounter, 0},
		{"swc-429-only", throttletest.DialectNone, throttletest.SlidingWindowCounter, 0},
		// A sliding log whose X-RateLimit-Reset (its oldest arrival's
		// leaving) is whole Unix seconds rounded up (issue 26), of 10
		// per 1 s and per 1.5 s, which no whole number of seconds fits.
		{"log-rounded-up", throttletest.DialectGitHub, throttletest.SlidingLog, 0},
		{"log-rounded-up-1.5s", throttletest.DialectGitHub, throttletest.SlidingLog, 1500 * time.Millisecond},
	}
	for _, c := range cases {
		impls := []string{"learn"}
		if c.alg == throttletest.SlidingWindowCounter {
			impls = append(impls, "uber")
		}
		for _, impl := range impls {
			b.Run("server="+c.name+"/impl="+impl, func(b *testing.B) {
				var refused, ratio, share float64
				for range b.N {
					w := c.w
					if w == 0 {
						w = time.Second
					}
					r := learnRun(b, c.dialect, c.alg, impl, w)
					refused += float64(r.refused)
					ideal := time.Duration((learnTotal+learnN-1)/learnN-1) * w
					ratio += float64(r.elapsed) / float64(ideal)
					share += float64(learnTotal) / r.elapsed.Seconds() / (learnN / w.Seconds())
				}
				n := float64(b.N)
				b.ReportMetric(refused/n, "refusals/run")
				b.ReportMetric(ratio/n, "x-ideal")
				b.ReportMetric(100*share/n, "%-quota")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}

type learnResult struct {
	refused int
	elapsed time.Duration
}

// dialectBare is BenchmarkLearn's server that refuses with a bare 429:
// throttletest's DialectNone without its Retry-After, no header at all.
const dialectBare throttletest.Dialect = -1

// learnServer starts BenchmarkLearn's loopback server of dialect d and
// algorithm alg keeping learnN per w, and returns its URL, its client and
// its log.
func learnServer(b *testing.B, d throttletest.Dialect, alg throttletest.Algorithm, w time.Duration) (string, *http.Client, func() []throttletest.Arrival) {
	if d != dialectBare {
		srv, err := throttletest.NewServer(rxthrottle.Per(learnN, w), throttletest.WithDialect(d), throttletest.WithAlgorithm(alg))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(srv.Close)
		return srv.URL, srv.Client(), srv.Log
	}
	h, err := throttletest.NewHandler(rxthrottle.Per(learnN, w), throttletest.WithAlgorithm(alg))
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	}))
	b.Cleanup(srv.Close)
	return srv.URL, srv.Client(), h.Log
}

// learnRun sends the load once and returns what it saw.
func learnRun(b *testing.B, d throttletest.Dialect, alg throttletest.Algorithm, impl string, w time.Duration) learnResult {
	url, client, serverLog := learnServer(b, d, alg, w)
	trace := os.Getenv("RXTHROTTLE_LEARN_TRACE") != ""
	start := time.Now()
	var take func()
	switch impl {
	case "learn":
		bucket, err := rxthrottle.NewBucket(rxthrottle.Per(1000, time.Second))
		if err != nil {
			b.Fatal(err)
		}
		// One attempt a request: the loop below retries, and counts,
		// each refusal itself, as it does for uber.
		learnOpts := []httpthrottle.LearnOption{httpthrottle.LearnMaxAttempts(1)}
		if trace {
			learnOpts = append(learnOpts, httpthrottle.OnLearn(func(ev httpthrottle.LearnEvent) {
				fmt.Fprintf(os.Stderr, "%8.3fs %v\n", time.Since(start).Seconds(), ev)
			}))
		}
		tr, err := httpthrottle.NewTransport(bucket, httpthrottle.WithBase(client.Transport),
			httpthrottle.WithLearnLimits(learnOpts...), httpthrottle.OnHeaderError(nil))
		if err != nil {
			b.Fatal(err)
		}
		client = &http.Client{Transport: tr}
		take = func() {}
	case "uber":
		rl := ratelimit.New(learnN, ratelimit.Per(time.Second))
		take = func() { rl.Take() }
	}
	var next, refused atomic.Int64
	var wg sync.WaitGroup
	start = time.Now()
	for range learnWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= learnTotal {
				for {
					take()
					req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, url+"/", nil)
					resp, err := client.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					_ = resp.Body.Close()
					if resp.StatusCode != http.StatusTooManyRequests {
						break
					}
					refused.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if trace {
		traceArrivals(serverLog(), start, alg)
	}
	return learnResult{refused: int(refused.Load()), elapsed: time.Since(start)}
}

// traceArrivals writes to stderr every refusal of a run (RXTHROTTLE_LEARN_TRACE set),
// with the sliding-window counter's estimate at its arrival (as
// throttletest computes it: prev*(W-d)/W + curr, refused when it rounds to
// N or more), and the accepted arrivals per window.
func traceArrivals(log []throttletest.Arrival, start time.Time, alg throttletest.Algorithm) {
	const w = time.Second
	var winStart time.Time
	var prev, curr int
	perWindow := map[int64]int{}
	for _, a := range log {
		ws := a.At.Truncate(w)
		if !ws.Equal(winStart) {
			if ws.Equal(winStart.Add(w)) {
				prev = curr
			} else {
				prev = 0
			}
			curr, winStart = 0, ws
		}
		d := a.At.Sub(winStart)
		est := float64(prev)*float64(w-d)/float64(w) + float64(curr)
		if a.Accepted {
			curr++
			perWindow[ws.Unix()]++
			continue
		}
		if alg == throttletest.SlidingWindowCounter {
			fmt.Fprintf(os.Stderr, "%8.3fs refused: %.3fs into the window, prev=%d curr=%d estimate=%.2f\n", a.At.Sub(start).Seconds(), d.Seconds(), prev, curr, est)
		} else {
			fmt.Fprintf(os.Stderr, "%8.3fs refused\n", a.At.Sub(start).Seconds())
		}
	}
	var line []byte
	for s := start.Truncate(w).Unix(); s <= winStart.Unix(); s++ {
		line = fmt.Appendf(line, " %d", perWindow[s])
	}
	fmt.Fprintf(os.Stderr, "accepted per window:%s\n", line)
}
