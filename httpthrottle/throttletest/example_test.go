package throttletest_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle/throttletest"
)

func ExampleNewServer() {
	// A strict API: 2 requests per minute, counted when they arrive.
	s, err := throttletest.NewServer(rxthrottle.Per(2, time.Minute))
	if err != nil {
		panic(err)
	}
	defer s.Close()

	for range 3 {
		resp, err := s.Client().Get(s.URL + "/v1/items")
		if err != nil {
			panic(err)
		}
		resp.Body.Close()
		fmt.Println(strings.TrimSpace(resp.Status + " " + resp.Header.Get("Retry-After")))
	}
	fmt.Printf("%+v\n", s.Stats())
	// Output:
	// 200 OK
	// 200 OK
	// 429 Too Many Requests 60
	// {Accepted:2 Refused:1 Dropped:0}
}

func ExampleHandler_RoundTrip() {
	// No network: the Handler serves the client in-process, on a mock
	// clock here (or on the virtual clock of a testing/synctest bubble).
	clk := clock.NewMock()
	h, err := throttletest.NewHandler(rxthrottle.Per(1, time.Second), throttletest.WithClock(clk))
	if err != nil {
		panic(err)
	}
	client := &http.Client{Transport: h}
	get := func() {
		resp, err := client.Get("http://api.test/v1/items")
		if err != nil {
			panic(err)
		}
		resp.Body.Close()
		fmt.Println(strings.TrimSpace(resp.Status + " " + resp.Header.Get(throttletest.ExactRetryAfterHeader)))
	}
	get()
	clk.Add(250 * time.Millisecond)
	get()
	clk.Add(750 * time.Millisecond)
	get()
	for _, a := range h.Log() {
		fmt.Println(a.At.Sub(time.Unix(0, 0)), a.Accepted, a.RetryAfter)
	}
	// Output:
	// 200 OK
	// 429 Too Many Requests 0.750000000
	// 200 OK
	// 0s true 0s
	// 250ms false 750ms
	// 1s true 0s
}

// Testing an API client: a Transport over a bucket at the server's quota,
// six requests from three goroutines, a network that delays each one by up
// to 20 ms on its way in. The server counts arrivals and refuses none.
func Example_client() {
	quota := rxthrottle.Per(2, 100*time.Millisecond)
	s, err := throttletest.NewServer(quota, throttletest.WithLatency(20*time.Millisecond))
	if err != nil {
		panic(err)
	}
	defer s.Close()

	bucket, err := rxthrottle.NewBucket(quota)
	if err != nil {
		panic(err)
	}
	tr, err := httpthrottle.NewTransport(bucket, httpthrottle.WithBase(s.Client().Transport))
	if err != nil {
		panic(err)
	}
	client := &http.Client{Transport: tr}
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			for range 2 {
				resp, err := client.Get(s.URL + "/v1/items")
				if err != nil {
					panic(err)
				}
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	fmt.Printf("%+v\n", s.Stats())
	// Output:
	// {Accepted:6 Refused:0 Dropped:0}
}

func ExampleNewProxy() {
	// A strict API behind a network that takes 100 ms on the way in and
	// delivers what was sent even when the client has given up.
	s, err := throttletest.NewServer(rxthrottle.Per(10, time.Minute))
	if err != nil {
		panic(err)
	}
	defer s.Close()
	p, err := throttletest.NewProxy(s.URL, func() time.Duration { return 100 * time.Millisecond })
	if err != nil {
		panic(err)
	}
	defer p.Close()

	client := &http.Client{Timeout: 20 * time.Millisecond, Transport: &http.Transport{}}
	_, err = client.Get(p.URL + "/v1/items")
	fmt.Println("client timed out:", err != nil)
	for p.Queued() > 0 || len(s.Log()) == 0 {
		time.Sleep(time.Millisecond)
	}
	fmt.Printf("server: %+v\n", s.Stats())
	// Output:
	// client timed out: true
	// server: {Accepted:1 Refused:0 Dropped:0}
}
