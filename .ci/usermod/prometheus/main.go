// A user's program of rxprom: a limiter's Stats and waits, gathered as a
// Prometheus registry serves them.
package main

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rxthrottle/rxthrottle"
	rxprom "github.com/rxthrottle/rxthrottle/prometheus"
)

func main() {
	c, err := rxprom.NewCollector()
	if err != nil {
		log.Fatal(err)
	}
	hook, err := c.ObserveWait("api")
	if err != nil {
		log.Fatal(err)
	}
	bucket, err := rxthrottle.NewBucket(rxthrottle.Per(5, time.Second), rxthrottle.OnAdmit(hook))
	if err != nil {
		log.Fatal(err)
	}
	if err := c.AddLimiter("api", bucket); err != nil {
		log.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	if err := bucket.Wait(context.Background()); err != nil {
		log.Fatal(err)
	}
	families, err := reg.Gather()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("prometheus: metric families", len(families))
}
