package httpthrottle_test

import (
	"fmt"
	"net/http"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
)

// ExampleWithTenantFunc shares one API key among the customers a service
// calls it for, named by a header the service sets on each request: a
// customer of weight 2 gets two tokens for each of the other's while both
// wait, instead of waiting behind the other's backlog.
func ExampleWithTenantFunc() {
	clk := clock.NewMock()
	bucket, err := rxthrottle.NewBucket(rxthrottle.Per(1, time.Second), rxthrottle.WithClock(clk))
	if err != nil {
		panic(err)
	}
	api := http.RoundTripper(roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: r}, nil
	}))
	weights := map[string]float64{"gold": 2, "basic": 1}
	tr, err := httpthrottle.NewTransport(bucket, httpthrottle.WithBase(api), httpthrottle.WithClock(clk),
		httpthrottle.WithTenantFunc(func(r *http.Request) (string, float64) {
			customer := r.Header.Get("X-Customer")
			return customer, weights[customer]
		}))
	if err != nil {
		panic(err)
	}
	client := &http.Client{Transport: tr}
	get := func(customer string) {
		req, err := http.NewRequest("GET", "https://api.example/v1/report", nil)
		if err != nil {
			panic(err)
		}
		req.Header.Set("X-Customer", customer)
		resp, err := client.Do(req)
		if err != nil {
			panic(err)
		}
		resp.Body.Close()
	}
	get("basic") // takes this second's token
	answered := make(chan string)
	for i, customer := range []string{"basic", "basic", "basic", "gold", "gold", "gold", "gold"} {
		go func() {
			get(customer)
			answered <- customer
		}()
		for bucket.Stats().Queued == i { // until it waits
			time.Sleep(time.Millisecond)
		}
	}
	for range 7 {
		clk.Add(time.Second) // one token a second
		fmt.Println(<-answered)
	}
	// Output:
	// gold
	// basic
	// gold
	// gold
	// basic
	// gold
	// basic
}
