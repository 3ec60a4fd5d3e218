package rxthrottle_test

import (
	"context"
	"fmt"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/reactivex/rxgo/v2"

	"github.com/rxthrottle/rxthrottle"
)

// The examples on the real clock print in which window each item went,
// counted in whole windows since the start: a token is never early, so the
// count is exact unless the machine stalls for a whole window.

func ExampleThrottle() {
	const window = 100 * time.Millisecond
	start := time.Now()
	src := rxgo.Just("a", "b", "c", "d", "e", "f", "g")()
	out := rxthrottle.Throttle(rxthrottle.Per(3, window))(src)
	// Item i goes in window i/3 at the earliest, never before (on a busy
	// machine it may go later: the real clock's waits run late, never early).
	i := 0
	for item := range out.Observe() {
		fmt.Printf("%v: not before window %d: %v\n", item.V, i/3, time.Since(start) >= time.Duration(i/3)*window)
		i++
	}
	// Output:
	// a: not before window 0: true
	// b: not before window 0: true
	// c: not before window 0: true
	// d: not before window 1: true
	// e: not before window 1: true
	// f: not before window 1: true
	// g: not before window 2: true
}

func ExampleThrottleWith() {
	const window = 100 * time.Millisecond
	// Two pipelines share one quota of 2 items per window.
	quota, err := rxthrottle.NewBucket(rxthrottle.Per(2, window))
	if err != nil {
		panic(err)
	}
	// The i-th item of the two goes in window i/2 at the earliest, never
	// before (later on a busy machine: the real clock's waits run late).
	start := time.Now()
	i := 0
	show := func(v any) {
		fmt.Printf("%v: not before window %d: %v\n", v, i/2, time.Since(start) >= time.Duration(i/2)*window)
		i++
	}
	first := rxthrottle.ThrottleWith(quota)(rxgo.Just("a1", "a2")()).Observe()
	for item := range first {
		show(item.V)
	}
	second := rxthrottle.ThrottleWith(quota)(rxgo.Just("b1", "b2", "b3")()).Observe()
	for item := range second {
		show(item.V)
	}
	// Output:
	// a1: not before window 0: true
	// a2: not before window 0: true
	// b1: not before window 1: true
	// b2: not before window 1: true
	// b3: not before window 2: true
}

func ExampleBucket_Wait() {
	const window = 100 * time.Millisecond
	b, err := rxthrottle.NewBucket(rxthrottle.Per(2, window))
	if err != nil {
		panic(err)
	}
	// Call i goes in window i/2 at the earliest, never before (later on a
	// busy machine: the real clock's waits run late).
	start := time.Now()
	for i := range 5 {
		if err := b.Wait(context.Background()); err != nil {
			panic(err)
		}
		fmt.Printf("call %d not before window %d: %v\n", i, i/2, time.Since(start) >= time.Duration(i/2)*window)
	}
	// Output:
	// call 0 not before window 0: true
	// call 1 not before window 0: true
	// call 2 not before window 1: true
	// call 3 not before window 1: true
	// call 4 not before window 2: true
}

// ExampleNewBucket runs on a mock clock, so the schedule is exact: two limits
// at once, 2 per second and 3 per 10 seconds.
func ExampleNewBucket() {
	mock := clock.NewMock()
	start := mock.Now()
	b, err := rxthrottle.NewBucket(rxthrottle.Per(2, time.Second),
		rxthrottle.WithLimit(rxthrottle.Per(3, 10*time.Second)),
		rxthrottle.WithClock(mock))
	if err != nil {
		panic(err)
	}
	for i := range 5 {
		r := b.Reserve() // queue without blocking; Time says when it goes
		fmt.Printf("call %d goes at %v\n", i, r.Time().Sub(start))
	}
	// Output:
	// call 0 goes at 0s
	// call 1 goes at 0s
	// call 2 goes at 1s
	// call 3 goes at 10s
	// call 4 goes at 10s
}

func ExampleNewBucket_invalid() {
	_, err := rxthrottle.NewBucket(rxthrottle.Per(0, time.Second))
	fmt.Println(err)
	// Output:
	// rxthrottle: limit 0 per 1s: N must be at least 1: invalid limit
}

func ExampleBucket_Pause() {
	mock := clock.NewMock()
	start := mock.Now()
	b, err := rxthrottle.NewBucket(rxthrottle.Per(10, time.Second), rxthrottle.WithClock(mock))
	if err != nil {
		panic(err)
	}
	// The server answered 429 with Retry-After: 30.
	b.Pause(start.Add(30 * time.Second))
	ok, err := b.Allow(context.Background())
	fmt.Println("allowed now:", ok, err)
	fmt.Println("next call goes after", b.Reserve().Delay())
	// Output:
	// allowed now: false <nil>
	// next call goes after 30s
}

// ExampleNewKeyed gives each user a quota of their own: alice going over
// hers does not slow bob down.
func ExampleNewKeyed() {
	mock := clock.NewMock()
	users, err := rxthrottle.NewKeyed(rxthrottle.Per(2, time.Minute), rxthrottle.WithClock(mock))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	for _, user := range []string{"alice", "alice", "alice", "bob"} {
		ok, _ := users.Allow(ctx, user)
		fmt.Println(user, ok)
	}
	mock.Add(time.Minute)
	ok, _ := users.Allow(ctx, "alice")
	fmt.Println("a minute later: alice", ok)
	// Output:
	// alice true
	// alice true
	// alice false
	// bob true
	// a minute later: alice true
}

func ExampleThrottleBy() {
	const window = 100 * time.Millisecond
	type job struct{ user, name string }
	start := time.Now()
	src := rxgo.Just(job{"alice", "a1"}, job{"alice", "a2"}, job{"alice", "a3"}, job{"bob", "b1"})()
	perUser := rxthrottle.ThrottleBy(rxthrottle.Per(1, window), func(v any) string { return v.(job).user })
	// Each user's i-th job goes in window i at the earliest, never before
	// (later on a busy machine: the real clock's waits run late); bob's
	// first job does not wait behind alice's.
	earliest := map[string]time.Duration{"a1": 0, "a2": window, "a3": 2 * window, "b1": 0}
	for item := range perUser(src).Observe() {
		name := item.V.(job).name
		fmt.Printf("%s: not before window %d: %v\n", name, earliest[name]/window, time.Since(start) >= earliest[name])
	}
	// Output:
	// a1: not before window 0: true
	// b1: not before window 0: true
	// a2: not before window 1: true
	// a3: not before window 2: true
}
