// Command pipeline shows rxthrottle in rxgo pipelines that call an HTTP API
// with a quota: an item source, the Throttle operator, a Map that calls the
// API, and the results; two pipelines sharing one quota with ThrottleWith;
// the same pipeline throttled by httpthrottle.Transport in the HTTP client
// instead; and ThrottleMap, which holds each call's token until the API has
// answered, so that the client can use the API's quota as it is. It starts
// its own API on loopback and needs no setup:
//
//	go run ./examples/pipeline
//	go run ./examples/pipeline -items 20 -rate 3 -window 250ms
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/rxthrottle/rxthrottle/examples/internal/example"
)

func main() {
	example.Main(parseFlags, func(ctx context.Context, cfg config, stdout io.Writer) error {
		return run(ctx, stdout, cfg)
	})
}

// parseFlags reads the command line into a config; problems and -h go to
// stderr.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("pipeline", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&cfg.items, "items", 12, "work items per pipeline")
	fs.IntVar(&cfg.rate, "rate", 5, "the API's quota: requests allowed per `window`")
	fs.DurationVar(&cfg.window, "window", 100*time.Millisecond, "the API's quota window")
	fs.DurationVar(&cfg.headroom, "headroom", 20*time.Millisecond,
		"added to the client's window, so that network jitter cannot make\nrequests sent a window apart arrive closer together")
	fs.IntVar(&cfg.workers, "workers", 4, "concurrent API calls in each Map")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: pipeline [flags]

Starts a local API that allows -rate requests per -window, then calls it from
rxgo pipelines kept within that quota by rxthrottle, and prints for each how
many calls were done and refused.

`)
		fs.PrintDefaults()
	}
	err := example.Parse(fs, args, func() error { return cfg.validate() })
	return cfg, err
}
