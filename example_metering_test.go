package rxthrottle_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/rxthrottle/rxthrottle"
)

// ExampleToken_ReleaseN meters an API that charges what a call used, like
// an LLM's tokens per minute: acquire the estimate, then release what the
// response reports. Unused tokens come back at once; a call that used more
// leaves a debt that the next callers wait out.
func ExampleToken_ReleaseN() {
	mock := clock.NewMock()
	start := mock.Now()
	tpm, err := rxthrottle.NewBucket(rxthrottle.Per(10_000, time.Minute), rxthrottle.WithClock(mock))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	tok, err := tpm.AcquireN(ctx, 4_000) // the prompt plus the longest answer allowed
	if err != nil {
		panic(err)
	}
	mock.Add(2 * time.Second)                   // the model answers
	if err := tok.ReleaseN(1_500); err != nil { // its usage field says 1,500
		panic(err)
	}
	fmt.Println("free after a short answer:", tpm.Stats().Free)

	tok, err = tpm.AcquireN(ctx, 1_000)
	if err != nil {
		panic(err)
	}
	if err := tok.ReleaseN(9_000); err != nil { // a far longer answer than estimated
		panic(err)
	}
	fmt.Println("free after a debt:", tpm.Stats().Free)
	fmt.Println("the next call of 1,000 goes at", tpm.Reserve().Time().Sub(start))
	// Output:
	// free after a short answer: 8500
	// free after a debt: 0
	// the next call of 1,000 goes at 1m2s
}

// ExampleWithConcurrency caps the calls in flight beside the rate, as
// GitHub (100 concurrent requests) and Stripe do: a third call waits for
// one of the first two to finish, and goes the moment it does.
func ExampleWithConcurrency() {
	mock := clock.NewMock()
	start := mock.Now()
	b, err := rxthrottle.NewBucket(rxthrottle.Per(100, time.Second), rxthrottle.WithClock(mock), rxthrottle.WithConcurrency(2))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	first, _ := b.Acquire(ctx)
	second, _ := b.Acquire(ctx)
	third := make(chan time.Duration)
	go func() {
		tok, err := b.Acquire(ctx)
		if err != nil {
			panic(err)
		}
		third <- mock.Now().Sub(start)
		tok.Release()
	}()
	for b.Stats().Queued == 0 { // until the third call waits
		time.Sleep(time.Millisecond)
	}
	mock.Add(300 * time.Millisecond)
	second.Release()
	fmt.Println("the third call went at", <-third)
	first.Release()
	// Output:
	// the third call went at 300ms
}

// ExampleWithPriority lets a user's call go before background work that
// queued earlier under the same quota.
func ExampleWithPriority() {
	mock := clock.NewMock()
	b, err := rxthrottle.NewBucket(rxthrottle.Per(1, time.Second), rxthrottle.WithClock(mock))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	_ = b.Wait(ctx) // the token of this second is taken
	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	call := func(ctx context.Context, name string) {
		queued := b.Stats().Queued
		wg.Go(func() {
			if err := b.Wait(ctx); err == nil {
				mu.Lock()
				order = append(order, name)
				mu.Unlock()
				mock.Add(time.Second) // the next token
			}
		})
		for b.Stats().Queued == queued { // until it waits
			time.Sleep(time.Millisecond)
		}
	}
	call(ctx, "background report")
	call(rxthrottle.WithPriority(ctx, 1), "user request")
	mock.Add(time.Second)
	wg.Wait()
	fmt.Println(order)
	// Output:
	// [user request background report]
}

// ExampleWithMaxQueue refuses callers early under a flood instead of
// queueing them without bound.
func ExampleWithMaxQueue() {
	b, err := rxthrottle.NewBucket(rxthrottle.Per(1, time.Hour), rxthrottle.WithMaxQueue(0))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	fmt.Println(b.Wait(ctx))
	err = b.Wait(ctx)
	fmt.Println(errors.Is(err, rxthrottle.ErrQueueFull), b.Stats().Refused)
	// Output:
	// <nil>
	// true 1
}

// ExampleErrDeadline: a call whose deadline comes before the next token
// fails at once instead of sleeping until the deadline, and the error is
// also context.DeadlineExceeded.
func ExampleErrDeadline() {
	b, err := rxthrottle.NewBucket(rxthrottle.Per(1, time.Minute))
	if err != nil {
		panic(err)
	}
	_ = b.Wait(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err = b.Wait(ctx) // the next token is a minute away: refused now
	fmt.Println(errors.Is(err, rxthrottle.ErrDeadline), errors.Is(err, context.DeadlineExceeded))
	// Output:
	// true true
}

// ExampleWithKeyLimits gives paid users a larger quota than free ones.
func ExampleWithKeyLimits() {
	tiers := func(user string) []rxthrottle.Limit {
		if user == "acme" { // a paid account
			return []rxthrottle.Limit{rxthrottle.Per(3, time.Hour)}
		}
		return nil // the limiter's own: 1 per hour
	}
	k, err := rxthrottle.NewKeyed(rxthrottle.Per(1, time.Hour), rxthrottle.WithKeyLimits(tiers))
	if err != nil {
		panic(err)
	}
	for _, user := range []string{"acme", "bob"} {
		n := 0
		for {
			ok, _ := k.Allow(context.Background(), user)
			if !ok {
				break
			}
			n++
		}
		fmt.Println(user, n)
	}
	// Output:
	// acme 3
	// bob 1
}

// ExampleUnlimited switches throttling off by configuration, keeping the
// code that takes a Limiter.
func ExampleUnlimited() {
	throttle := false // from the configuration
	var l rxthrottle.Limiter = rxthrottle.Unlimited()
	if throttle {
		l, _ = rxthrottle.NewBucket(rxthrottle.Per(10, time.Second))
	}
	for range 1000 {
		_ = l.Wait(context.Background()) // never waits
	}
	fmt.Println(l.Stats().Admitted)
	// Output:
	// 1000
}

// ExamplePriorityFrom reads a caller's priority, as a Limiter outside this
// package does to order its own callers.
func ExamplePriorityFrom() {
	ctx := rxthrottle.WithPriority(context.Background(), 2)
	fmt.Println(rxthrottle.PriorityFrom(ctx), rxthrottle.PriorityFrom(context.Background()))
	// Output:
	// 2 0
}
