package httpthrottle_test

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
)

// ExampleTransport_tenants shares one API key among the users of a
// service: each request's context names its user (rxthrottle.WithTenant),
// and a user who sends two requests after another user's four gets every
// other token instead of waiting behind them; the Bucket's cap on requests
// in flight follows their latency (rxthrottle.WithAdaptiveConcurrency).
func ExampleTransport_tenants() {
	clk := clock.NewMock()
	bucket, err := rxthrottle.NewBucket(rxthrottle.Per(1, time.Second), rxthrottle.WithClock(clk),
		rxthrottle.WithAdaptiveConcurrency(1, 16))
	if err != nil {
		panic(err)
	}
	api := http.RoundTripper(roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: r}, nil
	}))
	tr, err := httpthrottle.NewTransport(bucket, httpthrottle.WithBase(api), httpthrottle.WithClock(clk))
	if err != nil {
		panic(err)
	}
	client := &http.Client{Transport: tr}
	get := func(user string) {
		ctx := rxthrottle.WithTenant(context.Background(), user, 1)
		req, err := http.NewRequestWithContext(ctx, "GET", "https://api.example/v1/"+user, nil)
		if err != nil {
			panic(err)
		}
		resp, err := client.Do(req)
		if err != nil {
			panic(err)
		}
		resp.Body.Close()
	}
	get("carol") // takes this second's token
	answered := make(chan string)
	for i, user := range []string{"alice", "alice", "alice", "alice", "bob", "bob"} {
		go func() {
			get(user)
			answered <- user
		}()
		for bucket.Stats().Queued == i { // until it waits
			time.Sleep(time.Millisecond)
		}
	}
	for range 6 {
		clk.Add(time.Second) // one token a second
		fmt.Println(<-answered)
	}
	// Output:
	// alice
	// bob
	// alice
	// bob
	// alice
	// alice
}
