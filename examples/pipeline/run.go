package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"time"

	"github.com/reactivex/rxgo/v2"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
)

// config is what the flags set.
type config struct {
	items    int           // work items per pipeline
	rate     int           // the API's quota: rate requests per window
	window   time.Duration // the API's window
	headroom time.Duration // added to the client's window, for network jitter
	workers  int           // concurrent API calls in each Map

	// serve starts an API for handler and returns the RoundTripper and base
	// URL to reach it, and a function that stops it. nil means a real
	// server on loopback (httptest.NewServer); tests put the API in memory.
	serve func(handler http.Handler) (base http.RoundTripper, url string, stop func())
}

func (c config) validate() error {
	switch {
	case c.items < 1:
		return fmt.Errorf("pipeline: -items %d: at least 1 item is needed", c.items)
	case c.rate < 1:
		return fmt.Errorf("pipeline: -rate %d: the quota must allow at least 1 request", c.rate)
	case c.window <= 0:
		return fmt.Errorf("pipeline: -window %v: the window must be positive", c.window)
	case c.headroom < 0:
		return fmt.Errorf("pipeline: -headroom %v: must not be negative", c.headroom)
	case c.workers < 1:
		return fmt.Errorf("pipeline: -workers %d: at least 1 worker is needed", c.workers)
	}
	return nil
}

// loopback serves handler on a real HTTP server on 127.0.0.1.
func loopback(handler http.Handler) (http.RoundTripper, string, func()) {
	srv := httptest.NewServer(handler)
	return srv.Client().Transport, srv.URL, srv.Close
}

// run calls the local API from rxgo pipelines in three ways and writes what
// happened to w:
//
//  1. Throttle inside a pipeline: Range -> Map -> Throttle -> Map(call the
//     API, several workers) -> Reduce;
//  2. two pipelines sharing one quota through ThrottleWith, then Merge;
//  3. no operator at all: the Map workers call the API through an
//     http.Client whose httpthrottle.Transport paces them and honours the
//     API's pushback;
//  4. ThrottleMap: each call holds its token until the API has answered,
//     and the token renews a window after that, so the quota can be the
//     API's own, with no headroom: a request that left late or travelled
//     slowly cannot bunch up with the next window's at the API.
//
// Each part gets a fresh API, whose quota is rate per window; the client
// side of parts 1 to 3 uses rate per (window + headroom), part 4 the quota
// itself.
func run(ctx context.Context, w io.Writer, cfg config) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	if cfg.serve == nil {
		cfg.serve = loopback
	}
	quota := rxthrottle.Per(cfg.rate, cfg.window)
	limit := rxthrottle.Per(cfg.rate, cfg.window+cfg.headroom)
	fmt.Fprintf(w, "API quota: %v; client limit: %v; %d items per pipeline, %d workers\n", quota, limit, cfg.items, cfg.workers)
	parts := []struct {
		title string
		run   func(ctx context.Context, cfg config, limit rxthrottle.Limit, base http.RoundTripper, url string) (string, error)
		exact bool // uses the quota itself as the client limit
	}{
		{"1. Range -> Map -> Throttle -> Map(call API) -> Reduce", throttled, false},
		{"2. two pipelines -> ThrottleWith(one shared bucket) -> Map(call API) -> Merge -> Reduce", shared, false},
		{"3. Range -> Map -> Map(call API through httpthrottle.Transport) -> Reduce", throughTransport, false},
		{"4. Range -> Map -> ThrottleMap(call API, each token held until its answer) -> Reduce", heldTokens, true},
	}
	for _, p := range parts {
		a := newAPI(quota)
		base, url, stop := cfg.serve(a)
		start := time.Now()
		client := limit
		if p.exact {
			client = quota
		}
		summary, err := p.run(ctx, cfg, client, base, url)
		elapsed := time.Since(start)
		stop()
		if err != nil {
			return fmt.Errorf("pipeline: %s: %w", p.title, err)
		}
		served, refused, most := a.report()
		fmt.Fprintf(w, "\n%s\n   %s\n   API: %d served, %d refused, at most %d in any %v; done in window %d\n",
			p.title, summary, served, refused, most, cfg.window, elapsed/client.Window)
	}
	return nil
}

// throttled is part 1: the pipeline itself keeps to the quota.
func throttled(ctx context.Context, cfg config, limit rxthrottle.Limit, base http.RoundTripper, url string) (string, error) {
	client := &http.Client{Transport: base}
	jobs := names(ctx, "job", cfg.items)
	calls := rxthrottle.Throttle(limit)(jobs).
		Map(call(client, url), rxgo.WithPool(cfg.workers), rxgo.WithContext(ctx))
	t, err := collect(ctx, calls)
	return t.String(), err
}

// shared is part 2: two pipelines draw on one bucket, so together they keep
// to the quota that each alone would use up.
func shared(ctx context.Context, cfg config, limit rxthrottle.Limit, base http.RoundTripper, url string) (string, error) {
	bucket, err := rxthrottle.NewBucket(limit)
	if err != nil {
		return "", err
	}
	client := &http.Client{Transport: base}
	reports := rxthrottle.ThrottleWith(bucket)(names(ctx, "report", cfg.items)).
		Map(call(client, url), rxgo.WithPool(cfg.workers), rxgo.WithContext(ctx))
	invoices := rxthrottle.ThrottleWith(bucket)(names(ctx, "invoice", cfg.items)).
		Map(call(client, url), rxgo.WithPool(cfg.workers), rxgo.WithContext(ctx))
	t, err := collect(ctx, rxgo.Merge([]rxgo.Observable{reports, invoices}, rxgo.WithContext(ctx)))
	return t.String(), err
}

// throughTransport is part 3: the HTTP client keeps to the quota, whatever
// calls it; a 429 pauses the bucket and is retried.
func throughTransport(ctx context.Context, cfg config, limit rxthrottle.Limit, base http.RoundTripper, url string) (string, error) {
	bucket, err := rxthrottle.NewBucket(limit)
	if err != nil {
		return "", err
	}
	tr, err := httpthrottle.NewTransport(bucket, httpthrottle.WithBase(base), httpthrottle.WithMaxAttempts(3))
	if err != nil {
		return "", err
	}
	client := &http.Client{Transport: tr}
	calls := names(ctx, "task", cfg.items).
		Map(call(client, url), rxgo.WithPool(cfg.workers), rxgo.WithContext(ctx))
	t, err := collect(ctx, calls)
	st := tr.Stats()
	return fmt.Sprintf("%v; transport: %d sent, %d retried, %d pushbacks", t, st.Sent, st.Retries, st.Pushbacks), err
}

// heldTokens is part 4: ThrottleMap calls the API within the quota itself.
// As many calls run at once as there are tokens, each token is released when
// its call has returned, and the results come in the order of the items.
func heldTokens(ctx context.Context, cfg config, quota rxthrottle.Limit, base http.RoundTripper, url string) (string, error) {
	client := &http.Client{Transport: base}
	calls := rxthrottle.ThrottleMap(quota, call(client, url))(names(ctx, "call", cfg.items))
	t, err := collect(ctx, calls)
	return t.String(), err
}

// names emits "prefix-01", "prefix-02", ...: any rxgo source would do.
func names(ctx context.Context, prefix string, n int) rxgo.Observable {
	return rxgo.Range(1, n, rxgo.WithContext(ctx)).
		Map(func(_ context.Context, i interface{}) (interface{}, error) {
			return fmt.Sprintf("%s-%02d", prefix, i), nil
		}, rxgo.WithContext(ctx))
}

// result is what a call of the API gives one item.
type result struct {
	id     string
	status int
}

// call returns the Map function that asks the API for one item.
func call(client *http.Client, url string) rxgo.Func {
	return func(ctx context.Context, v interface{}) (interface{}, error) {
		id := v.(string)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/work/"+id, nil)
		if err != nil {
			return nil, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return result{id: id, status: resp.StatusCode}, nil
	}
}

// tally counts results per kind of item ("job", "report"...): done and
// refused.
type tally map[string]*[2]int

func (t tally) String() string {
	kinds := make([]string, 0, len(t))
	for k := range t {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var b strings.Builder
	for i, k := range kinds {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%ss: %d done, %d refused", k, t[k][0], t[k][1])
	}
	return b.String()
}

// collect reduces the results of a pipeline to a tally. The first error
// (a failed call, or ctx ending) stops it.
func collect(ctx context.Context, results rxgo.Observable) (tally, error) {
	item, err := results.Reduce(func(_ context.Context, acc, v interface{}) (interface{}, error) {
		t, _ := acc.(tally)
		if t == nil {
			t = tally{}
		}
		r := v.(result)
		kind, _, _ := strings.Cut(r.id, "-")
		if t[kind] == nil {
			t[kind] = new([2]int)
		}
		if r.status == http.StatusOK {
			t[kind][0]++
		} else {
			t[kind][1]++
		}
		return t, nil
	}, rxgo.WithContext(ctx)).Get()
	if err != nil {
		return nil, err
	}
	if item.E != nil {
		return nil, item.E
	}
	t, ok := item.V.(tally)
	if !ok {
		return nil, errors.New("no results")
	}
	return t, nil
}
