package rxthrottle_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/rxthrottle/rxthrottle"
)

func ExampleThrottleSeq() {
	const window = 100 * time.Millisecond
	b, err := rxthrottle.NewBucket(rxthrottle.Per(2, window))
	if err != nil {
		panic(err)
	}
	start := time.Now()
	paths, errf := rxthrottle.ThrottleSeq(context.Background(), b, slices.Values([]string{"/a", "/b", "/c"}))
	for p := range paths {
		// The loop body is the call: it holds its token while it runs,
		// and the token renews a window after the body ends.
		fmt.Println("GET", p)
	}
	if err := errf(); err != nil {
		fmt.Println("stopped:", err)
	}
	// Two tokens per window: /c waited for the first one to renew.
	fmt.Println("took at least a window:", time.Since(start) >= window)
	// Output:
	// GET /a
	// GET /b
	// GET /c
	// took at least a window: true
}

func ExampleThrottleSeq2() {
	b, err := rxthrottle.NewBucket(rxthrottle.Per(10, time.Second))
	if err != nil {
		panic(err)
	}
	users := map[string]int{"ann": 1, "bob": 2}
	pairs, errf := rxthrottle.ThrottleSeq2(context.Background(), b, maps.All(users))
	n := 0
	for name, id := range pairs {
		_, _ = name, id // one API call per user, within 10 per second
		n++
	}
	fmt.Println(n, "calls; error:", errf())
	// Output: 2 calls; error: <nil>
}

func ExampleThrottleChan() {
	const window = 100 * time.Millisecond
	b, err := rxthrottle.NewBucket(rxthrottle.Per(1, window))
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	jobs := make(chan int)
	go func() {
		defer close(jobs)
		for i := 1; i <= 3; i++ {
			select {
			case jobs <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	start := time.Now()
	throttled, errf := rxthrottle.ThrottleChan(ctx, b, jobs)
	for j := range throttled { // one job per window, received in order
		fmt.Println("job", j)
	}
	fmt.Println("error:", errf())
	fmt.Println("took at least two windows:", time.Since(start) >= 2*window)
	// Output:
	// job 1
	// job 2
	// job 3
	// error: <nil>
	// took at least two windows: true
}
