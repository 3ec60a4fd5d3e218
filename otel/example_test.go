package rxotel_test

import (
	"context"
	"fmt"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/rxthrottle/rxthrottle"
	rxotel "github.com/rxthrottle/rxthrottle/otel"
)

// A bucket watched by OpenTelemetry: its Stats at each collection, and its
// callers' waits in a histogram fed by its OnAdmit hook. A program gives
// New its MeterProvider (or sets the global one) with a real exporter;
// here a ManualReader collects, and the example prints two instruments.
func Example() {
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer provider.Shutdown(context.Background())

	m, err := rxotel.New(rxotel.WithMeterProvider(provider))
	if err != nil {
		panic(err)
	}
	observe, err := m.ObserveWait("github")
	if err != nil {
		panic(err)
	}
	bucket, err := rxthrottle.NewBucket(rxthrottle.Per(5000, time.Hour), rxthrottle.OnAdmit(observe))
	if err != nil {
		panic(err)
	}
	if err := m.AddLimiter("github", bucket); err != nil {
		panic(err)
	}
	for range 3 {
		if err := bucket.Wait(context.Background()); err != nil {
			panic(err)
		}
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		panic(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, inst := range sm.Metrics {
			switch d := inst.Data.(type) {
			case metricdata.Sum[int64]:
				if inst.Name == "rxthrottle.admitted" {
					fmt.Println(inst.Name, inst.Unit, d.DataPoints[0].Value)
				}
			case metricdata.Histogram[float64]:
				fmt.Println(inst.Name, inst.Unit, "count", d.DataPoints[0].Count)
			}
		}
	}
	// Output:
	// rxthrottle.wait.duration s count 3
	// rxthrottle.admitted {caller} 3
}
