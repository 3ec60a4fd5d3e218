package httpthrottle_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
)

func ExampleTransport() {
	// A local API that turns the first request away: come back in 30 s.
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "30")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		fmt.Fprint(w, "hello")
	}))
	defer srv.Close()

	// The bucket and the Transport read the same clock; a mock one here, so
	// that the example needs no real waiting.
	clk := clock.NewMock()
	bucket, err := rxthrottle.NewBucket(rxthrottle.Per(5, time.Second), rxthrottle.WithClock(clk))
	if err != nil {
		panic(err)
	}
	tr, err := httpthrottle.NewTransport(bucket,
		httpthrottle.WithBase(srv.Client().Transport), // default: http.DefaultTransport
		httpthrottle.WithClock(clk),
		httpthrottle.WithMaxAttempts(1), // the 429 to the caller: by default a GET is sent again after the pause
		httpthrottle.OnPushback(func(status int, until time.Time) {
			fmt.Printf("server answered %d: every request waits %v\n", status, until.Sub(clk.Now()))
		}))
	if err != nil {
		panic(err)
	}
	client := &http.Client{Transport: tr}

	resp, err := client.Get(srv.URL)
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	fmt.Println(resp.Status)

	// The whole bucket is paused, not just this caller: whoever asks next
	// is told to wait the 30 s out.
	next := bucket.Reserve()
	fmt.Println("next request may go in", next.Delay())
	next.Cancel()
	// Output:
	// server answered 429: every request waits 30s
	// 429 Too Many Requests
	// next request may go in 30s
}

func ExampleWithMaxAttempts() {
	// An API that refuses every other request.
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if calls.Add(1)%2 == 1 {
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		fmt.Fprintf(w, "stored %s", body)
	}))
	defer srv.Close()

	bucket, err := rxthrottle.NewBucket(rxthrottle.Per(10, time.Second))
	if err != nil {
		panic(err)
	}
	tr, err := httpthrottle.NewTransport(bucket,
		httpthrottle.WithBase(srv.Client().Transport),
		httpthrottle.WithMaxAttempts(3)) // retry a 429 up to twice
	if err != nil {
		panic(err)
	}
	client := &http.Client{Transport: tr}

	// strings.Reader bodies can be sent again (http.NewRequest sets
	// GetBody), so the refused request is retried.
	resp, err := client.Post(srv.URL, "text/plain", strings.NewReader("order 66"))
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.Status, string(body))
	fmt.Println("retries:", tr.Stats().Retries)
	// Output:
	// 200 OK stored order 66
	// retries: 1
}

func ExampleNewKeyedTransport() {
	// An API whose /users endpoints are overloaded; /orders is fine.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/users/") {
			w.Header().Set("Retry-After", "30")
			w.WriteHeader(http.StatusTooManyRequests)
		}
	}))
	defer srv.Close()

	// One quota per endpoint: the key is host + first path segment.
	clk := clock.NewMock()
	keyed, err := rxthrottle.NewKeyed(rxthrottle.Per(10, time.Second), rxthrottle.WithClock(clk))
	if err != nil {
		panic(err)
	}
	keyOf := httpthrottle.KeyByPathPrefix(1)
	tr, err := httpthrottle.NewKeyedTransport(keyed, keyOf,
		httpthrottle.WithBase(srv.Client().Transport),
		httpthrottle.WithClock(clk),
		httpthrottle.WithMaxAttempts(1)) // the 429 to the caller, not sent again after the pause
	if err != nil {
		panic(err)
	}
	client := &http.Client{Transport: tr}

	for _, path := range []string{"/users/1", "/orders/1"} {
		resp, err := client.Get(srv.URL + path)
		if err != nil {
			panic(err)
		}
		resp.Body.Close()
		fmt.Println("GET", path, resp.Status)
	}
	// The 429 paused the /users key only.
	users, _ := http.NewRequest("GET", srv.URL+"/users/2", nil)
	orders, _ := http.NewRequest("GET", srv.URL+"/orders/2", nil)
	usersKey, _ := keyOf(users)
	ordersKey, _ := keyOf(orders)
	usersOK, _ := keyed.Allow(context.Background(), usersKey)
	ordersOK, _ := keyed.Allow(context.Background(), ordersKey)
	fmt.Println("users may go now:", usersOK)
	fmt.Println("orders may go now:", ordersOK)
	// Output:
	// GET /users/1 429 Too Many Requests
	// GET /orders/1 200 OK
	// users may go now: false
	// orders may go now: true
}

func ExampleKeyByPathPrefix() {
	key := httpthrottle.KeyByPathPrefix(2)
	for _, u := range []string{
		"https://api.example.com/v1/users/42",
		"https://api.example.com/v1/users?page=2",
		"https://api.example.com/v1/orders/7",
		"https://uploads.example.com/v1/files",
	} {
		req, _ := http.NewRequest("GET", u, nil)
		k, _ := key(req)
		fmt.Println(k)
	}
	// Output:
	// api.example.com/v1/users
	// api.example.com/v1/users
	// api.example.com/v1/orders
	// uploads.example.com/v1/files
}

func ExampleOnHeaderError() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "1743440400") // 484,289 hours
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()

	clk := clock.NewMock()
	bucket, err := rxthrottle.NewBucket(rxthrottle.Per(1, time.Second), rxthrottle.WithClock(clk))
	if err != nil {
		panic(err)
	}
	tr, err := httpthrottle.NewTransport(bucket,
		httpthrottle.WithBase(srv.Client().Transport),
		httpthrottle.WithClock(clk),
		httpthrottle.WithMaxPause(5*time.Minute),
		httpthrottle.OnHeaderError(func(err *httpthrottle.HeaderError) { fmt.Println(err) }))
	if err != nil {
		panic(err)
	}
	req, _ := http.NewRequest("GET", srv.URL, nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	// Output:
	// httpthrottle: header Retry-After "1743440400": asks for a pause of 484289h0m0s, more than the maximum 5m0s; pausing 5m0s
}
