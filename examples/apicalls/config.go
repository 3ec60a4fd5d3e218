package main

import (
	"fmt"
	"net/http"
	"time"
)

// config is what the flags set. Durations are in demo time: the API's
// policy reads "30 per 1m0s, block 5m0s" as it would in production, and
// speed compresses all of them into real time (see real).
type config struct {
	rate   int           // the API's quota: rate requests per window, per client
	window time.Duration // the API's fixed window
	block  time.Duration // the cool-down of a client that goes over the quota
	count  int           // requests in the batch each client sends
	retry  time.Duration // how long the unthrottled client waits after a 429
	speed  float64       // demo time runs this many times faster than real time
	slot   time.Duration // the timeline's row height; 0 picks one

	// The concurrent run: workers goroutines send the batch at once, each
	// request delayed on its way by a random time in [0, delay] drawn
	// from seed and its path.
	workers int
	delay   time.Duration
	seed    uint64

	// live makes progress a status line rewritten in place ('\r'): for a
	// terminal. Otherwise progress is plain lines, fit for a log or a pipe.
	live bool

	// serve starts the API with handler and returns the RoundTripper and
	// base URL that reach it, and a function that stops it. nil means a
	// real HTTP server on a free port of 127.0.0.1 (example.Loopback); tests
	// serve it in memory, so that run can go inside a synctest bubble.
	serve func(handler http.Handler) (base http.RoundTripper, url string, stop func(), err error)
}

// defaultConfig is the policy of the use case that motivated rxthrottle: 30
// requests per minute, then five minutes of cool-down.
func defaultConfig() config {
	return config{
		rate:   30,
		window: time.Minute,
		block:  5 * time.Minute,
		count:  90,
		retry:  30 * time.Second,
		speed:  200,

		workers: 8,
		delay:   4 * time.Second,
		seed:    49,
	}
}

// Bounds that keep the demo a demo: a bounded number of requests, and windows
// long enough, in real time, for loopback latency not to matter.
const (
	maxCount       = 10_000
	maxRequests    = 100_000 // per client, retries included
	minRealWindow  = 5 * time.Millisecond
	minRealRetry   = time.Millisecond
	defaultMaxRows = 24 // the automatic slot keeps the timeline this short
	maxWorkers     = 1000
)

func (c config) validate() error {
	switch {
	case c.rate < 1:
		return fmt.Errorf("apicalls: -rate %d: the quota must allow at least 1 request", c.rate)
	case c.window <= 0:
		return fmt.Errorf("apicalls: -window %v: the window must be positive", c.window)
	case c.block < 0:
		return fmt.Errorf("apicalls: -block %v: the cool-down must not be negative", c.block)
	case c.count < 1 || c.count > maxCount:
		return fmt.Errorf("apicalls: -count %d: send between 1 and %d requests", c.count, maxCount)
	case c.retry <= 0:
		return fmt.Errorf("apicalls: -retry %v: the unthrottled client must wait a positive time before a retry", c.retry)
	case !(c.speed > 0) || c.speed > 1e6:
		return fmt.Errorf("apicalls: -speed %g: must be above 0 and at most 1000000", c.speed)
	case c.workers < 1 || c.workers > maxWorkers:
		return fmt.Errorf("apicalls: -workers %d: between 1 and %d", c.workers, maxWorkers)
	case c.delay < 0:
		return fmt.Errorf("apicalls: -delay %v: the network delay must not be negative", c.delay)
	case c.slot < 0:
		return fmt.Errorf("apicalls: -slot %v: must not be negative (0 picks a row height)", c.slot)
	case c.real(c.window) < minRealWindow:
		return fmt.Errorf("apicalls: -window %v at -speed %g lasts %v of real time; at least %v is needed for the network not to blur it: lower -speed",
			c.window, c.speed, c.real(c.window), minRealWindow)
	case c.real(c.retry) < minRealRetry:
		return fmt.Errorf("apicalls: -retry %v at -speed %g lasts %v of real time; at least %v is needed: raise -retry or lower -speed",
			c.retry, c.speed, c.real(c.retry), minRealRetry)
	}
	if n := c.count * c.maxAttempts(); n > maxRequests {
		return fmt.Errorf("apicalls: -count %d with -retry %v against a cool-down of %v could make %d requests (at most %d): raise -retry or lower -count",
			c.count, c.retry, max(c.block, c.window), n, maxRequests)
	}
	return nil
}

// maxAttempts bounds the attempts the unthrottled client makes for one
// request. A refused request meets a block of at most max(block, window)
// (the block never ends before the window does); retries a retry apart
// outlast it after ceil(that/retry) of them, and a key is fresh again at
// the end of its block, so one more attempt always goes through. One more
// still is slack; the bound only keeps a misbehaving server from being
// hammered forever.
func (c config) maxAttempts() int {
	blocked := max(c.block, c.window)
	return int((blocked+c.retry-1)/c.retry) + 2
}

// real converts a demo duration into real time.
func (c config) real(d time.Duration) time.Duration {
	return time.Duration(float64(d) / c.speed)
}

// demo converts a real duration into demo time.
func (c config) demo(d time.Duration) time.Duration {
	return time.Duration(float64(d) * c.speed)
}
