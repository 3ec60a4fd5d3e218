package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// outcome is what one client's batch came to.
type outcome struct {
	accepted int           // requests answered 200
	refused  int           // answers 429, retries included
	gaveUp   int           // requests still refused after maxAttempts
	elapsed  time.Duration // demo time from the first request to the last answer
}

// sendBatch sends cfg.count requests for client, one after another, through
// hc: the loop every script that walks a list of items and calls an API for
// each one runs. A refused request is retried after cfg.retry, up to
// cfg.maxAttempts attempts. Both clients of the demo run this same loop;
// only hc's Transport differs.
func sendBatch(ctx context.Context, cfg config, hc *http.Client, url, client string, prog *progress) (outcome, error) {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { prog.run(stop) })
	defer func() {
		// Stop the ticker before clearing its line, or it could draw
		// the line again after the batch's last word.
		close(stop)
		wg.Wait()
		prog.out.clearStatus()
	}()

	var o outcome
	refusedInRow := 0
	for i := 1; i <= cfg.count; i++ {
		for attempt := 1; ; attempt++ {
			prog.setState("")
			status, err := get(ctx, hc, fmt.Sprintf("%s/items/%d", url, i), client)
			if err != nil {
				return o, fmt.Errorf("apicalls: %s: request %d: %w", client, i, err)
			}
			if status == http.StatusOK {
				o.accepted++
				prog.accepted.Add(1)
				if refusedInRow > 0 {
					prog.out.event(prog.now(), "accepted again, after %s in a row", plural(refusedInRow, "refusal"))
					refusedInRow = 0
				}
				break
			}
			if status != http.StatusTooManyRequests {
				return o, fmt.Errorf("apicalls: %s: request %d: unexpected status %d %s", client, i, status, http.StatusText(status))
			}
			o.refused++
			refusedInRow++
			prog.refused.Add(1)
			if attempt >= cfg.maxAttempts() {
				o.gaveUp++
				prog.out.event(prog.now(), "request %d given up after %s", i, plural(attempt, "attempt"))
				break
			}
			prog.setState(fmt.Sprintf("refused: retrying in %v", cfg.retry))
			if err := sleep(ctx, cfg.real(cfg.retry)); err != nil {
				return o, err
			}
		}
	}
	o.elapsed = prog.now()
	return o, nil
}

// get sends GET url as client and returns the status; the body is read to
// the end so the connection can be reused.
func get(ctx context.Context, hc *http.Client, url, client string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set(clientHeader, client)
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return 0, fmt.Errorf("reading the answer: %w", err)
	}
	return resp.StatusCode, nil
}

// sleep waits for d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
