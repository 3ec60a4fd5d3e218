// Command apicalls is rxthrottle's main demo: why a client should throttle
// itself instead of letting the server do it.
//
// It starts a local API on 127.0.0.1 that allows each client 30 requests per
// minute and shuts a client that goes over out for five minutes
// (httpthrottle.Middleware over a guard.Guard), then sends it the same 90
// requests twice: from a plain http.Client, which is refused and shut out, and from the same
// client with an httpthrottle.Transport over an rxthrottle.Bucket, which is
// never refused and finishes five times sooner. Then 8 workers send the
// batch at once through a network that delays each request on its way in:
// the default Transport, which holds each token until the answer is back,
// is never refused; a Bucket whose Wait comes before each request, renewing
// tokens at departure, is refused and shut out. Demo time runs 200 times
// faster than real time, so it all takes a few seconds:
//
//	go run ./examples/apicalls
//	go run ./examples/apicalls -rate 10 -count 45 -block 2m
//	go run ./examples/apicalls -h
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/rxthrottle/rxthrottle/examples/internal/example"
)

func main() {
	example.Main(func(args []string, stderr io.Writer) (config, error) {
		cfg, err := parseFlags(args, stderr)
		cfg.live = isTerminal(os.Stdout)
		return cfg, err
	}, run)
}

// isTerminal reports whether f is a terminal (a character device), where a
// status line rewritten with '\r' makes sense.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// parseFlags reads the command line into a config; problems and -h go to
// stderr.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	cfg := defaultConfig()
	fs := flag.NewFlagSet("apicalls", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&cfg.rate, "rate", cfg.rate, "the API's quota: requests each client may make per -window;\nthe throttled client's bucket uses the same quota")
	fs.DurationVar(&cfg.window, "window", cfg.window, "the quota's window, in demo time")
	fs.DurationVar(&cfg.block, "block", cfg.block, "the cool-down, in demo time: how long the API refuses every\nrequest of a client that went over the quota")
	fs.IntVar(&cfg.count, "count", cfg.count, "requests in the batch each client sends")
	fs.DurationVar(&cfg.retry, "retry", cfg.retry, "how long, in demo time, the unthrottled client waits before\nretrying a refused request")
	fs.Float64Var(&cfg.speed, "speed", cfg.speed, "how many times faster than real time demo time runs\n(1 runs the policy in real time: minutes)")
	fs.DurationVar(&cfg.slot, "slot", cfg.slot, "the timeline's row height in demo time (0 picks one that keeps\nthe timeline short)")
	fs.IntVar(&cfg.workers, "workers", cfg.workers, "goroutines sending the batch at once in the concurrent run")
	fs.DurationVar(&cfg.delay, "delay", cfg.delay, "the concurrent run's network delay, in demo time: each request\nreaches the API a random time in [0, delay] after it left")
	fs.Uint64Var(&cfg.seed, "seed", cfg.seed, "the seed of the concurrent run's random delays")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: apicalls [flags]

Starts a local API on 127.0.0.1 that allows each client -rate requests per
-window and blocks a client that goes over for -block, then sends it the
same batch of -count requests from two clients, one after the other:

  unthrottled  a plain http.Client that retries a refused request after -retry
  throttled    the same client over httpthrottle.Transport and
               rxthrottle.NewBucket(rxthrottle.Per(rate, window))

and shows, side by side, when the requests reached the API and which were
refused, with the statistics of the bucket and of the API's guard.

Then -workers goroutines send the batch at once, each request delayed on
its way by a random time up to -delay, from two more clients:

  held         httpthrottle.Transport: each token held until the answer
  departure    rxthrottle.Bucket.Wait before each request: a token renews
               a window after its request left

Durations are in demo time, which runs -speed times faster than real time,
so that a policy in minutes plays out in seconds. Only loopback is used.

Flags:
`)
		fs.PrintDefaults()
	}
	err := example.Parse(fs, args, func() error { return cfg.validate() })
	return cfg, err
}
