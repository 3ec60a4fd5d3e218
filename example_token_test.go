package rxthrottle_test

import (
	"context"
	"fmt"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/rxthrottle/rxthrottle"
)

// ExampleBucket_Acquire holds each token for the request it pays for: the
// token renews one window after the response, not after the request left,
// so a server that counts arrivals never sees more than the quota. The
// mock clock makes the schedule exact.
func ExampleBucket_Acquire() {
	mock := clock.NewMock()
	start := mock.Now()
	b, err := rxthrottle.NewBucket(rxthrottle.Per(1, time.Second), rxthrottle.WithClock(mock))
	if err != nil {
		panic(err)
	}
	tok, err := b.Acquire(context.Background())
	if err != nil {
		panic(err)
	}
	mock.Add(300 * time.Millisecond) // the request is in flight
	tok.Release()                    // the response has arrived
	fmt.Println("next call goes at", b.Reserve().Time().Sub(start))
	// Output:
	// next call goes at 1.3s
}

// ExampleToken_Cancel gives back the token of a request that was never
// sent: it costs nothing.
func ExampleToken_Cancel() {
	b, err := rxthrottle.NewBucket(rxthrottle.Per(1, time.Hour))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	tok, err := b.Acquire(ctx)
	if err != nil {
		panic(err)
	}
	tok.Cancel() // say, the request body could not be built
	ok, err := b.Allow(ctx)
	fmt.Println("the token is free again:", ok, err)
	// Output:
	// the token is free again: true <nil>
}

// ExampleBucket_AllowN charges points per call, as some APIs do: 10
// points per second, a search costs 4 and a lookup 1. WaitN and AcquireN
// wait for the points instead.
func ExampleBucket_AllowN() {
	mock := clock.NewMock()
	b, err := rxthrottle.NewBucket(rxthrottle.Per(10, time.Second), rxthrottle.WithClock(mock))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	for _, cost := range []int{4, 4, 1, 4} {
		ok, _ := b.AllowN(ctx, cost)
		fmt.Printf("cost %d now: %v\n", cost, ok)
	}
	mock.Add(time.Second)
	ok, _ := b.AllowN(ctx, 4)
	fmt.Println("cost 4 a second later:", ok)
	fmt.Println(b.WaitN(ctx, 11))
	// Output:
	// cost 4 now: true
	// cost 4 now: true
	// cost 1 now: true
	// cost 4 now: false
	// cost 4 a second later: true
	// rxthrottle: WaitN(n=11): n must be from 1 to the smallest N of the limits, 10: invalid cost
}

// ExampleWithSpacing spreads a burst for a server that estimates its
// window with a sliding-window counter: 5 per second, at least 200 ms
// apart.
func ExampleWithSpacing() {
	mock := clock.NewMock()
	start := mock.Now()
	b, err := rxthrottle.NewBucket(rxthrottle.Per(5, time.Second),
		rxthrottle.WithSpacing(200*time.Millisecond), rxthrottle.WithClock(mock))
	if err != nil {
		panic(err)
	}
	for i := range 4 {
		fmt.Printf("call %d goes at %v\n", i, b.Reserve().Time().Sub(start))
	}
	// Output:
	// call 0 goes at 0s
	// call 1 goes at 200ms
	// call 2 goes at 400ms
	// call 3 goes at 600ms
}

// ExampleKeyed_Acquire holds a per-user token for the request it pays for.
func ExampleKeyed_Acquire() {
	mock := clock.NewMock()
	start := mock.Now()
	users, err := rxthrottle.NewKeyed(rxthrottle.Per(1, time.Second), rxthrottle.WithClock(mock))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	tok, err := users.Acquire(ctx, "alice")
	if err != nil {
		panic(err)
	}
	mock.Add(500 * time.Millisecond)
	tok.Release()
	ok, _ := users.Allow(ctx, "bob")
	fmt.Println("bob is not held up:", ok)
	mock.Add(999 * time.Millisecond)
	ok, _ = users.Allow(ctx, "alice")
	fmt.Println("alice at", mock.Now().Sub(start), ok)
	mock.Add(time.Millisecond)
	ok, _ = users.Allow(ctx, "alice")
	fmt.Println("alice at", mock.Now().Sub(start), ok)
	// Output:
	// bob is not held up: true
	// alice at 1.499s false
	// alice at 1.5s true
}
