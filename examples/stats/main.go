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
	"io"

	"github.com/rxthrottle/rxthrottle/examples/internal/example"
)

func main() { example.Main(parseFlags, run) }

// usage is what -h prints before the flags.
const usage = `Usage: stats [flags]

Runs a keyed limiter and a guard under a little load, publishes their
statistics with expvar and as Prometheus metrics (promhttp), on a local
HTTP server (127.0.0.1, a free port), and prints what /debug/vars and
/metrics answer.

Flags:
`

// parseFlags reads the command line into a config; problems and -h go to
// stderr.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	cfg := defaultConfig()
	fs := example.NewFlagSet("stats", stderr, usage)
	fs.IntVar(&cfg.rate, "rate", cfg.rate, "the keyed limiter's quota: calls per -window for each key")
	fs.DurationVar(&cfg.window, "window", cfg.window, "the keyed limiter's window")
	fs.BoolVar(&cfg.keep, "keep", false, "keep serving /debug/vars and /metrics after the report, until Ctrl-C")
	return cfg, example.Parse(fs, args, func() error { return cfg.validate() })
}
