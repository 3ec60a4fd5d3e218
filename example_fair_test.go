package rxthrottle_test

import (
	"context"
	"fmt"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/rxthrottle/rxthrottle"
)

// ExampleWithTenant shares one API key among the users of a service: a
// heavy user queues four calls, a light one two after them, and the light
// user's calls alternate with the heavy one's instead of waiting behind
// all of them.
func ExampleWithTenant() {
	mock := clock.NewMock()
	bucket, err := rxthrottle.NewBucket(rxthrottle.Per(1, time.Second), rxthrottle.WithClock(mock))
	if err != nil {
		panic(err)
	}
	if err := bucket.Wait(context.Background()); err != nil { // takes this second's token
		panic(err)
	}
	went := make(chan string)
	call := func(user string) {
		ctx := rxthrottle.WithTenant(context.Background(), user, 1) // each user's share: weight 1
		if err := bucket.Wait(ctx); err != nil {
			panic(err)
		}
		went <- user
	}
	for i, user := range []string{"heavy", "heavy", "heavy", "heavy", "light", "light"} {
		go call(user)
		for bucket.Stats().Queued == i { // until it waits
			time.Sleep(time.Millisecond)
		}
	}
	for range 6 {
		mock.Add(time.Second) // one token a second
		fmt.Println(<-went)
	}
	// Output:
	// heavy
	// light
	// heavy
	// light
	// heavy
	// heavy
}

// ExampleWithAdaptiveConcurrency lets the cap on calls in flight follow
// the server: it doubles while the calls that fill it stay fast, and is
// cut when they slow down.
func ExampleWithAdaptiveConcurrency() {
	mock := clock.NewMock()
	bucket, err := rxthrottle.NewBucket(rxthrottle.Per(1000, time.Second), rxthrottle.WithClock(mock),
		rxthrottle.WithAdaptiveConcurrency(1, 8))
	if err != nil {
		panic(err)
	}
	// round makes a round of calls, as many at once as the cap allows,
	// that each take latency, and prints the cap after it.
	round := func(latency time.Duration) {
		for calls := 0; calls < 4 || calls < bucket.Stats().ConcurrencyCap; {
			var tokens []rxthrottle.Token
			for range bucket.Stats().ConcurrencyCap {
				tok, err := bucket.Acquire(context.Background())
				if err != nil {
					panic(err)
				}
				tokens = append(tokens, tok)
			}
			mock.Add(latency) // the calls take latency
			for _, tok := range tokens {
				tok.Release()
			}
			calls += len(tokens)
		}
		fmt.Println("cap", bucket.Stats().ConcurrencyCap)
	}
	round(10 * time.Millisecond)
	round(10 * time.Millisecond)
	round(10 * time.Millisecond)
	round(40 * time.Millisecond) // the server slows down
	round(10 * time.Millisecond) // and recovers
	// Output:
	// cap 2
	// cap 4
	// cap 8
	// cap 2
	// cap 3
}

// ExampleKeyed_Wait_tenants shares each key's quota among tenants: on the
// key of one API, a tenant's two calls after another's four alternate
// with them.
func ExampleKeyed_Wait_tenants() {
	mock := clock.NewMock()
	apis, err := rxthrottle.NewKeyed(rxthrottle.Per(1, time.Second), rxthrottle.WithClock(mock))
	if err != nil {
		panic(err)
	}
	if err := apis.Wait(context.Background(), "search"); err != nil { // takes this second's token
		panic(err)
	}
	went := make(chan string)
	for i, user := range []string{"heavy", "heavy", "heavy", "heavy", "light", "light"} {
		go func() {
			if err := apis.Wait(rxthrottle.WithTenant(context.Background(), user, 1), "search"); err != nil {
				panic(err)
			}
			went <- user
		}()
		for apis.Stats().Queued == i { // until it waits
			time.Sleep(time.Millisecond)
		}
	}
	for range 6 {
		mock.Add(time.Second)
		fmt.Println(<-went)
	}
	// Output:
	// heavy
	// light
	// heavy
	// light
	// heavy
	// heavy
}
