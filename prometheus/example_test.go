package rxprom_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"

	"github.com/rxthrottle/rxthrottle"
	rxprom "github.com/rxthrottle/rxthrottle/prometheus"
)

// A bucket watched by Prometheus: its Stats at each scrape, and its
// callers' waits in a histogram fed by its OnAdmit hook. A program serves
// the registry with promhttp.HandlerFor(reg, promhttp.HandlerOpts{}) on
// /metrics (or registers c with prometheus.MustRegister and serves
// promhttp.Handler()); here it prints two of the series.
func Example() {
	c, err := rxprom.NewCollector()
	if err != nil {
		panic(err)
	}
	observe, err := c.ObserveWait("github")
	if err != nil {
		panic(err)
	}
	bucket, err := rxthrottle.NewBucket(rxthrottle.Per(5000, time.Hour), rxthrottle.OnAdmit(observe))
	if err != nil {
		panic(err)
	}
	if err := c.AddLimiter("github", bucket); err != nil {
		panic(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)

	for range 3 {
		if err := bucket.Wait(context.Background()); err != nil {
			panic(err)
		}
	}
	text, err := testutil.GatherAndFormat(reg, expfmt.TypeTextPlain,
		"rxthrottle_admitted_total", "rxthrottle_free_tokens")
	if err != nil {
		panic(err)
	}
	os.Stdout.Write(text)
	fmt.Println("...")
	// Output:
	// # HELP rxthrottle_admitted_total Callers or items the limiter let through.
	// # TYPE rxthrottle_admitted_total counter
	// rxthrottle_admitted_total{limiter="github"} 3
	// # HELP rxthrottle_free_tokens Tokens free now (for several limits, the smallest count).
	// # TYPE rxthrottle_free_tokens gauge
	// rxthrottle_free_tokens{limiter="github"} 4997
	// ...
}
