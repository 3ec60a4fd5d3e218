package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"expvar"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/examples/internal/example"
	"github.com/rxthrottle/rxthrottle/guard"
)

// config is what the flags set.
type config struct {
	rate   int           // the keyed limiter's quota: rate calls per window, per key
	window time.Duration // the keyed limiter's window
	keep   bool          // keep serving after the report, until ctx ends

	// serve starts the HTTP server. nil means a real server on a free port
	// of 127.0.0.1; tests serve in memory, so that run can go inside a
	// synctest bubble.
	serve example.Serve
}

func defaultConfig() config {
	return config{rate: 5, window: 100 * time.Millisecond}
}

func (c config) validate() error {
	switch {
	case c.rate < 1 || c.rate > 1000:
		return fmt.Errorf("stats: -rate %d: must be between 1 and 1000", c.rate)
	case c.window < time.Millisecond || c.window > time.Minute:
		return fmt.Errorf("stats: -window %v: must be between 1ms and 1m0s", c.window)
	}
	return nil
}

// The guard's policy: the use case's 30 per minute, 5 minutes of cool-down,
// made smaller so that a short burst shows a block. Its checks never wait,
// so a long window costs the example no time.
var policy = guard.Policy{Limit: rxthrottle.Per(10, time.Minute), Block: 5 * time.Minute}

// The load: how many calls each user makes at once. dave will not wait more
// than half a window, so a call of his that cannot have a token by then is
// refused at once (rxthrottle.ErrDeadline), without waiting.
var (
	callers = []struct {
		key     string
		calls   int
		patient bool
	}{
		{"alice", 12, true}, {"bob", 3, true}, {"carol", 7, true}, {"dave", 6, false},
	}
	requesters = []struct {
		key      string
		requests int
	}{
		{"mallory", 15}, {"trent", 4},
	}
)

// run builds a keyed limiter and a guard with hooks feeding metrics,
// publishes their statistics through expvar and Prometheus, puts them under
// load, and prints what GET /debug/vars and GET /metrics answer.
func run(ctx context.Context, cfg config, stdout io.Writer) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	if cfg.serve == nil {
		cfg.serve = example.Loopback("stats")
	}
	m, err := newMetrics(cfg.window)
	if err != nil {
		return err
	}
	keyed, err := rxthrottle.NewKeyed(rxthrottle.Per(cfg.rate, cfg.window),
		rxthrottle.OnWait(m.onWait), rxthrottle.OnAdmit(m.onAdmit))
	if err != nil {
		return err
	}
	g, err := guard.New(policy, guard.OnLimited(m.onLimited), guard.OnBlocked(m.onBlocked),
		guard.WithLogger(slog.New(slog.DiscardHandler))) // the hooks count instead
	if err != nil {
		return err
	}
	if err := m.watch(keyed, g); err != nil {
		return err
	}
	publish(func() any { return snapshot(keyed, g, m) })

	mux := http.NewServeMux()
	// What importing expvar registers on http.DefaultServeMux; this
	// example serves a mux of its own, so it serves nothing else.
	mux.Handle("GET /debug/vars", expvar.Handler())
	mux.Handle("GET /metrics", m.handler())
	base, url, stop, err := cfg.serve(mux)
	if err != nil {
		return err
	}
	defer stop()

	fmt.Fprintf(stdout, "A keyed limiter (%v per key) and a guard (%v),\nwith hooks feeding metrics.\n", rxthrottle.Per(cfg.rate, cfg.window), policy)
	if err := load(ctx, cfg, keyed, g, stdout); err != nil {
		return err
	}

	hc := &http.Client{Transport: base}
	vars, err := fetch(ctx, hc, url+"/debug/vars")
	if err != nil {
		return err
	}
	part, err := rxthrottlePart(vars)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nGET %s/debug/vars, member %q (expvar.Func):\n%s\n", url, varName, part)
	metricsText, err := fetch(ctx, hc, url+"/metrics")
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nGET %s/metrics (promhttp, an rxprom.Collector):\n%s", url, metricsText)

	if cfg.keep {
		fmt.Fprintf(stdout, "\nServing %s/debug/vars and %s/metrics until interrupted.\n", url, url)
		<-ctx.Done()
	}
	return nil
}

// load makes every caller's calls at once, each on its own goroutine, and
// the requesters' guard checks one after another, then says what happened.
func load(ctx context.Context, cfg config, keyed *rxthrottle.Keyed, g *guard.Guard, w io.Writer) error {
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		gaveUp  = map[string]int{}
		failure error
	)
	for _, c := range callers {
		for range c.calls {
			wg.Go(func() {
				cctx, cancel := ctx, context.CancelFunc(func() {})
				if !c.patient {
					cctx, cancel = context.WithTimeout(ctx, cfg.window/2)
				}
				defer cancel()
				err := keyed.Wait(cctx, c.key)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
				case !c.patient && errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
					gaveUp[c.key]++
				case failure == nil:
					failure = fmt.Errorf("stats: %s's Wait: %w", c.key, err)
				}
			})
		}
	}
	wg.Wait()
	if failure != nil {
		return failure
	}
	var b strings.Builder
	for _, c := range callers {
		fmt.Fprintf(&b, ", %s %d", c.key, c.calls)
		if n := gaveUp[c.key]; n > 0 {
			fmt.Fprintf(&b, " (%d refused at once: no token within its %v deadline)", n, cfg.window/2)
		}
	}
	fmt.Fprintf(w, "Keyed.Wait calls, all at once: %s.\n", strings.TrimPrefix(b.String(), ", "))

	b.Reset()
	for _, r := range requesters {
		allowed := 0
		for range r.requests {
			_, err := g.Check(ctx, r.key)
			switch {
			case err == nil:
				allowed++
			case !errors.Is(err, guard.ErrLimited):
				return fmt.Errorf("stats: %s's Check: %w", r.key, err)
			}
		}
		fmt.Fprintf(&b, ", %s %d (%d allowed)", r.key, r.requests, allowed)
	}
	fmt.Fprintf(w, "Guard.Check requests: %s.\n", strings.TrimPrefix(b.String(), ", "))
	return nil
}

// fetch GETs url and returns the body.
func fetch(ctx context.Context, hc *http.Client, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("stats: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("stats: reading %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("stats: GET %s: %s", url, resp.Status)
	}
	return body, nil
}

// rxthrottlePart picks the example's member out of /debug/vars, which also
// holds the runtime's (memstats, cmdline), and indents it.
func rxthrottlePart(vars []byte) ([]byte, error) {
	var all map[string]json.RawMessage
	if err := json.Unmarshal(vars, &all); err != nil {
		return nil, fmt.Errorf("stats: /debug/vars is not a JSON object: %w", err)
	}
	part, ok := all[varName]
	if !ok {
		return nil, fmt.Errorf("stats: /debug/vars has no %q member", varName)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, part, "", "  "); err != nil {
		return nil, fmt.Errorf("stats: /debug/vars member %q: %w", varName, err)
	}
	return out.Bytes(), nil
}
