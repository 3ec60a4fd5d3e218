// A user's program of rxotel: a limiter's Stats and waits, read by an
// OpenTelemetry SDK reader.
package main

import (
	"context"
	"fmt"
	"log"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/rxthrottle/rxthrottle"
	rxotel "github.com/rxthrottle/rxthrottle/otel"
)

func main() {
	ctx := context.Background()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(ctx)
	m, err := rxotel.New(rxotel.WithMeterProvider(mp))
	if err != nil {
		log.Fatal(err)
	}
	hook, err := m.ObserveWait("api")
	if err != nil {
		log.Fatal(err)
	}
	bucket, err := rxthrottle.NewBucket(rxthrottle.Per(5, time.Second), rxthrottle.OnAdmit(hook))
	if err != nil {
		log.Fatal(err)
	}
	if err := m.AddLimiter("api", bucket); err != nil {
		log.Fatal(err)
	}
	if err := bucket.Wait(ctx); err != nil {
		log.Fatal(err)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		log.Fatal(err)
	}
	n := 0
	for _, sm := range rm.ScopeMetrics {
		n += len(sm.Metrics)
	}
	fmt.Println("otel: instruments", n)
}
