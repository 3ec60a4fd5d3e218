// Command learnlimits calls two local APIs with no limit configured: one
// that announces its quota the way GitHub does (X-RateLimit-Limit,
// -Remaining, -Reset in Unix seconds, fixed windows) and one that speaks
// OpenAI's x-ratelimit-*-requests headers. Each is called through
// httpthrottle.NewLearningTransport from many goroutines at once; the
// Transport sends one request, reads the quota from its answer, and keeps
// it from then on, so neither server refuses anything. It prints what was
// learned and what each server saw:
//
//	go run ./examples/learnlimits
//	go run ./examples/learnlimits -rate 5 -count 40 -workers 16
package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/examples/internal/example"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle/throttletest"
)

func main() { example.Main(parseFlags, run) }

// config is the command line.
type config struct {
	rate, count, workers int
}

func (c config) validate() error {
	if c.rate < 1 || c.count < 1 || c.workers < 1 {
		return fmt.Errorf("learnlimits: -rate, -count and -workers must be at least 1 (got %d, %d, %d)", c.rate, c.count, c.workers)
	}
	return nil
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	cfg := config{rate: 10, count: 30, workers: 32}
	fs := example.NewFlagSet("learnlimits", stderr, "usage: learnlimits [flags]\n\nCalls a GitHub-like and an OpenAI-like local API with no limit configured.\n\n")
	fs.IntVar(&cfg.rate, "rate", cfg.rate, "the quota both servers enforce and announce, per second")
	fs.IntVar(&cfg.count, "count", cfg.count, "requests sent to each server")
	fs.IntVar(&cfg.workers, "workers", cfg.workers, "goroutines sending at once")
	return cfg, example.Parse(fs, args, func() error { return cfg.validate() })
}

func run(ctx context.Context, cfg config, stdout io.Writer) error {
	for _, api := range []struct {
		name    string
		dialect throttletest.Dialect
	}{
		{"GitHub-like API", throttletest.DialectGitHub},
		{"OpenAI-like API", throttletest.DialectOpenAI},
	} {
		srv, err := throttletest.NewServer(rxthrottle.Per(cfg.rate, time.Second),
			throttletest.WithDialect(api.dialect), throttletest.WithAlgorithm(throttletest.FixedWindow))
		if err != nil {
			return err
		}
		err = call(ctx, cfg, srv, api.name, stdout)
		srv.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// call sends cfg.count requests to srv from cfg.workers goroutines through
// a learning Transport, and reports.
func call(ctx context.Context, cfg config, srv *throttletest.Server, name string, stdout io.Writer) error {
	var mu sync.Mutex
	var learned []string
	tr, err := httpthrottle.NewLearningTransport(httpthrottle.WithBase(srv.Client().Transport),
		httpthrottle.WithLearnLimits(httpthrottle.OnLearn(func(ev httpthrottle.LearnEvent) {
			mu.Lock()
			defer mu.Unlock()
			if ev.Limits != nil {
				learned = append(learned, fmt.Sprintf("%v (%s)", ev.Limits, ev.Source))
			}
		})))
	if err != nil {
		return err
	}
	client := &http.Client{Transport: tr}
	defer client.CloseIdleConnections()
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, cfg.workers)
	for range cfg.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(cfg.count) {
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/", nil)
				if err == nil {
					var resp *http.Response
					if resp, err = client.Do(req); err == nil {
						_, _ = io.Copy(io.Discard, resp.Body)
						err = resp.Body.Close()
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	st := srv.Stats()
	fmt.Fprintf(stdout, "%s (%d per second, announced): %d requests from %d goroutines in %.1fs, %d refused\n",
		name, cfg.rate, st.Accepted+st.Refused, cfg.workers, time.Since(start).Seconds(), st.Refused)
	mu.Lock()
	defer mu.Unlock()
	if len(learned) == 0 {
		fmt.Fprintln(stdout, "  learned: nothing")
		return nil
	}
	fmt.Fprintf(stdout, "  learned: %v\n", learned[len(learned)-1])
	return nil
}
