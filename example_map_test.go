package rxthrottle_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/reactivex/rxgo/v2"

	"github.com/rxthrottle/rxthrottle"
)

func ExampleThrottleMap() {
	const window = 200 * time.Millisecond
	// A call of the API takes half a window. With 2 calls per window, a
	// and b start at once and end at 0.5 windows; their tokens renew a
	// window after the calls ended, at 1.5 windows, when c and d start; e
	// starts at 3 windows, when c's token renews. Each result says whether
	// its call started no earlier than that (on a busy machine it may start
	// later: the real clock's waits run late, never early); the results
	// come in the order of the items.
	earliest := map[string]time.Duration{"a": 0, "b": 0, "c": 3 * window / 2, "d": 3 * window / 2, "e": 3 * window}
	start := time.Now()
	call := func(ctx context.Context, v any) (any, error) {
		started := time.Since(start)
		select {
		case <-time.After(window / 2):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		name := v.(string)
		return fmt.Sprintf("%s started no earlier than %.1f windows: %v", strings.ToUpper(name),
			float64(earliest[name])/float64(window), started >= earliest[name]), nil
	}
	src := rxgo.Just("a", "b", "c", "d", "e")()
	out := rxthrottle.ThrottleMap(rxthrottle.Per(2, window), call)(src)
	for item := range out.Observe() {
		fmt.Println(item.V)
	}
	// Output:
	// A started no earlier than 0.0 windows: true
	// B started no earlier than 0.0 windows: true
	// C started no earlier than 1.5 windows: true
	// D started no earlier than 1.5 windows: true
	// E started no earlier than 3.0 windows: true
}

func ExampleRetryAfter() {
	// The API refuses the first call for "b" with a 429 and Retry-After:
	// the function says so with RetryAfter, ThrottleMap pauses its limiter
	// for that long and calls it again for "b", in its place.
	refused := false
	call := func(ctx context.Context, v any) (any, error) {
		if v == "b" && !refused {
			refused = true
			return nil, rxthrottle.RetryAfter(50*time.Millisecond, errors.New("429 Too Many Requests"))
		}
		return v, nil
	}
	out := rxthrottle.ThrottleMap(rxthrottle.Per(5, time.Second), call, rxthrottle.WithMaxAttempts(2))(rxgo.Just("a", "b", "c")())
	for item := range out.Observe() {
		fmt.Println(item.V, item.E)
	}
	// Output:
	// a <nil>
	// b <nil>
	// c <nil>
}

func ExampleNotSent() {
	// A call that fails before its request is written (here: a bad URL)
	// says so with NotSent, and its token is given back at once: the next
	// item does not wait a window for it. Any other error may have been
	// sent, and holds its token for the in-flight bound.
	call := func(ctx context.Context, v any) (any, error) {
		if v == "bad" {
			return nil, rxthrottle.NotSent(errors.New("parse \"::\": missing protocol scheme"))
		}
		return v, nil
	}
	start := time.Now()
	out := rxthrottle.ThrottleMap(rxthrottle.Per(1, time.Minute), call)(rxgo.Just("bad", "good")())
	for item := range out.Observe() {
		fmt.Println(item.V, item.E)
	}
	fmt.Println("good waited a minute:", time.Since(start) >= time.Minute)
	// Output:
	// <nil> parse "::": missing protocol scheme
	// good <nil>
	// good waited a minute: false
}

func ExampleWithInFlightBound() {
	// A call that fails without saying why (a timeout, a reset) may have
	// sent its request, which can still reach the server: ThrottleMap
	// holds its token for the in-flight bound after the error. One the
	// server answered (Answered) releases its token at once.
	b, err := rxthrottle.NewBucket(rxthrottle.Per(2, time.Hour))
	if err != nil {
		panic(err)
	}
	call := func(ctx context.Context, v any) (any, error) {
		if v == "timed out" {
			return nil, context.DeadlineExceeded
		}
		return nil, rxthrottle.Answered(errors.New("500 Internal Server Error"))
	}
	out := rxthrottle.ThrottleMapWith(b, call, rxthrottle.WithInFlightBound(time.Minute))(rxgo.Just("timed out", "answered")())
	for item := range out.Observe() {
		fmt.Println(item.E)
	}
	fmt.Println("tokens still held:", b.Stats().Held)
	// Output:
	// context deadline exceeded
	// 500 Internal Server Error
	// tokens still held: 1
}

// ExampleThrottleMap_adaptive lets ThrottleMap's calls in flight follow
// the API's latency (WithAdaptiveConcurrency) rather than run as many at
// once as there are tokens: an API that slows down past 4 calls at once
// gets about 4.
func ExampleThrottleMap_adaptive() {
	var mu sync.Mutex
	inFlight, most := 0, 0
	call := func(_ context.Context, v any) (any, error) {
		mu.Lock()
		inFlight++
		n := inFlight
		most = max(most, n)
		mu.Unlock()
		latency := time.Millisecond
		if n > 4 {
			latency *= time.Duration(n * n) // it slows down past 4
		}
		time.Sleep(latency)
		mu.Lock()
		inFlight--
		mu.Unlock()
		return v, nil
	}
	items := make([]any, 300)
	for i := range items {
		items[i] = i
	}
	out := rxthrottle.ThrottleMap(rxthrottle.Per(10000, time.Second), call,
		rxthrottle.WithAdaptiveConcurrency(1, 64))(rxgo.Just(items...)()).Observe()
	inOrder, n := true, 0
	for item := range out {
		inOrder = inOrder && item.V == n
		n++
	}
	fmt.Println("results:", n, "in order:", inOrder)
	fmt.Println("at most 16 calls at once:", most <= 16)
	// Output:
	// results: 300 in order: true
	// at most 16 calls at once: true
}
