// Command stats shows how to watch rxthrottle in production: it runs a
// keyed limiter (rxthrottle.NewKeyed) and a guard (package guard) under a
// little load, exports their Stats to Prometheus with an rxprom.Collector
// (module github.com/rxthrottle/rxthrottle/prometheus) and a wait histogram
// fed by the OnAdmit hook, served by promhttp, and publishes their Stats and
// per-key counters from their hooks (OnWait, OnAdmit, OnLimited, OnBlocked)
// with expvar. It serves /debug/vars and /metrics on 127.0.0.1 and prints
// what they answer:
//
//	go run ./examples/stats
//	go run ./examples/stats -keep    # then: curl http://127.0.0.1:PORT/metrics
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
)

func main() {
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		os.Exit(2) // parseFlags has printed the problem
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// parseFlags reads the command line into a config; problems and -h go to
// stderr.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	cfg := defaultConfig()
	fs := flag.NewFlagSet("stats", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&cfg.rate, "rate", cfg.rate, "the keyed limiter's quota: calls per -window for each key")
	fs.DurationVar(&cfg.window, "window", cfg.window, "the keyed limiter's window")
	fs.BoolVar(&cfg.keep, "keep", false, "keep serving /debug/vars and /metrics after the report, until Ctrl-C")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: stats [flags]

Runs a keyed limiter and a guard under a little load, publishes their
statistics with expvar and as Prometheus metrics (promhttp), on a local
HTTP server (127.0.0.1, a free port), and prints what /debug/vars and
/metrics answer.

Flags:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		err := fmt.Errorf("stats: unexpected argument %q", fs.Arg(0))
		fmt.Fprintln(stderr, err)
		fs.Usage()
		return cfg, err
	}
	if err := cfg.validate(); err != nil {
		fmt.Fprintln(stderr, err)
		return cfg, err
	}
	return cfg, nil
}
