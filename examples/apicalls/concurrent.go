package main

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
)

// The two clients of the concurrent run, as the API knows them.
const (
	held      = "held"
	departure = "departure"
)

// runConcurrent is the demo's second part: the same batch sent by
// cfg.workers goroutines at once, every request delayed on its way to the
// API by the network (see delayed), from two clients at the API's quota:
//
//   - held: the default httpthrottle.Transport, which holds each token
//     until the request's answer is back and renews it a window later;
//   - departure: a Bucket whose Wait comes before each request (the loop
//     of README's "In ten lines"), which renews a token a window after its
//     request left.
//
// It returns the two outcomes and the bucket statistics of both.
func runConcurrent(ctx context.Context, cfg config, base http.RoundTripper, url string, a *api, out *printer) (heldOut, depOut outcome, err error) {
	net := delayed{next: base, cfg: cfg}

	heldBucket, err := rxthrottle.NewBucket(rxthrottle.Per(cfg.rate, cfg.real(cfg.window)))
	if err != nil {
		return heldOut, depOut, err
	}
	tr, err := httpthrottle.NewTransport(heldBucket,
		httpthrottle.WithBase(net),
		// As for the throttled client: whole seconds of real time are too
		// coarse for demo time.
		httpthrottle.WithMaxPause(cfg.real(cfg.window)),
		httpthrottle.OnHeaderError(nil),
	)
	if err != nil {
		return heldOut, depOut, err
	}
	out.printf("\n%s\n", held)
	prog := newProgress(out, cfg, held)
	prog.waiting = func() bool { return heldBucket.Stats().Queued > 0 }
	heldOut, err = sendConcurrent(ctx, cfg, &http.Client{Transport: tr}, url, held, a.begin(prog))
	if err != nil {
		return heldOut, depOut, err
	}
	out.printf("  done in %s: %s\n", clock(heldOut.elapsed), summary(heldOut))

	depBucket, err := rxthrottle.NewBucket(rxthrottle.Per(cfg.rate, cfg.real(cfg.window)))
	if err != nil {
		return heldOut, depOut, err
	}
	out.printf("\n%s\n", departure)
	prog = newProgress(out, cfg, departure)
	prog.waiting = func() bool { return depBucket.Stats().Queued > 0 }
	depOut, err = sendConcurrent(ctx, cfg, &http.Client{Transport: waitFirst{depBucket, net}}, url, departure, a.begin(prog))
	if err != nil {
		return heldOut, depOut, err
	}
	out.printf("  done in %s: %s\n", clock(depOut.elapsed), summary(depOut))
	return heldOut, depOut, nil
}

// sendConcurrent sends cfg.count requests for client through hc from
// cfg.workers goroutines, each taking the next request number when it is
// free, with the retries of sendBatch.
func sendConcurrent(ctx context.Context, cfg config, hc *http.Client, url, client string, prog *progress) (outcome, error) {
	stop := make(chan struct{})
	var ticker sync.WaitGroup
	ticker.Go(func() { prog.run(stop) })
	defer func() {
		close(stop)
		ticker.Wait()
		prog.out.clearStatus()
	}()

	var (
		mu       sync.Mutex
		o        outcome
		next     = 1
		firstErr error
	)
	take := func() (int, bool) {
		mu.Lock()
		defer mu.Unlock()
		if next > cfg.count || firstErr != nil {
			return 0, false
		}
		next++
		return next - 1, true
	}
	var wg sync.WaitGroup
	for range cfg.workers {
		wg.Go(func() {
			for i, ok := take(); ok; i, ok = take() {
				r, err := sendOne(ctx, cfg, hc, url, client, i, prog)
				mu.Lock()
				o.accepted += r.accepted
				o.refused += r.refused
				o.gaveUp += r.gaveUp
				if err != nil && firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	o.elapsed = prog.now()
	return o, firstErr
}

// sendOne sends request i for client until it is accepted or has been
// refused cfg.maxAttempts times, a retry cfg.retry after each refusal.
// Unlike the one-by-one client, a departure worker can give a request up:
// the other workers' requests can use the fresh quota at the end of a block
// and bring on the next block before this one's retry gets in.
func sendOne(ctx context.Context, cfg config, hc *http.Client, url, client string, i int, prog *progress) (outcome, error) {
	var o outcome
	for attempt := 1; ; attempt++ {
		status, err := get(ctx, hc, fmt.Sprintf("%s/items/%d", url, i), client)
		if err != nil {
			return o, fmt.Errorf("apicalls: %s: request %d: %w", client, i, err)
		}
		switch status {
		case http.StatusOK:
			o.accepted++
			prog.accepted.Add(1)
			prog.show()
			return o, nil
		case http.StatusTooManyRequests:
		default:
			return o, fmt.Errorf("apicalls: %s: request %d: unexpected status %d %s", client, i, status, http.StatusText(status))
		}
		o.refused++
		prog.refused.Add(1)
		prog.show()
		if attempt >= cfg.maxAttempts() {
			o.gaveUp++
			prog.out.event(prog.now(), "request %d given up after %s", i, plural(attempt, "attempt"))
			return o, nil
		}
		if err := sleep(ctx, cfg.real(cfg.retry)); err != nil {
			return o, err
		}
	}
}

// waitFirst is the departure client's RoundTripper: it waits for a token
// of the bucket, then sends. The token renews a window after the request
// left; the API's answers are not read.
type waitFirst struct {
	bucket *rxthrottle.Bucket
	next   http.RoundTripper
}

func (w waitFirst) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := w.bucket.Wait(req.Context()); err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	return w.next.RoundTrip(req)
}

// delayed is the network of the concurrent run: each request reaches the
// API a random time after it left, uniform in [0, cfg.delay] of demo time.
// The delay is drawn from cfg.seed and the request's path, so that a
// request has the same delay in every run and in both clients.
type delayed struct {
	next http.RoundTripper
	cfg  config
}

func (d delayed) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := sleep(req.Context(), d.cfg.real(d.delayOf(req.URL.Path))); err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	return d.next.RoundTrip(req)
}

// delayOf is the network delay of the request for path, in demo time.
func (d delayed) delayOf(path string) time.Duration {
	h := fnv.New64a()
	_, _ = h.Write([]byte(path))
	r := rand.New(rand.NewPCG(d.cfg.seed, h.Sum64()))
	return time.Duration(r.Int64N(int64(d.cfg.delay) + 1))
}
