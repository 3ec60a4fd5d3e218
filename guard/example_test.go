package guard_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/guard"
)

// exampleLogger writes the guard's log to stdout without the handler's own
// real-time timestamp, so that the examples' output is deterministic.
func exampleLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey && len(groups) == 0 {
				return slog.Attr{}
			}
			return a
		},
	}))
}

// The seed use case: 30 requests per minute, then a 5-minute cool-down. A
// virtual clock makes the example deterministic; a server leaves WithClock
// out.
func Example() {
	mock := clock.NewMock()
	mock.Set(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	g, err := guard.New(
		guard.Policy{Limit: rxthrottle.Per(30, time.Minute), Block: 5 * time.Minute},
		guard.WithClock(mock),
		guard.WithLogger(exampleLogger()),
	)
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	for i := 1; i <= 31; i++ {
		d, err := g.Check(ctx, "alice")
		switch {
		case errors.Is(err, guard.ErrLimited):
			fmt.Printf("request %d refused: %v\n", i, err)
		case err != nil:
			panic(err)
		case i%10 == 0:
			fmt.Printf("request %d allowed, %d left\n", i, d.Remaining)
		}
		mock.Add(time.Second)
	}

	mock.Add(4*time.Minute + 58*time.Second)
	_, err = g.Check(ctx, "alice")
	fmt.Println("after 4m59s:", err)
	mock.Add(time.Second)
	d, err := g.Check(ctx, "alice")
	fmt.Println("after 5m0s:", d.Allowed, d.Remaining, err)
	// Output:
	// request 10 allowed, 20 left
	// request 20 allowed, 10 left
	// request 30 allowed, 0 left
	// level=WARN msg="key is over the usage limit" key=alice count=31 limit=30 window=1m0s until=2026-03-01T12:05:30.000Z
	// request 31 refused: guard: key "alice" is over the usage limit: retry in 5m0s
	// after 4m59s: guard: key "alice" is over the usage limit: retry in 1s
	// after 5m0s: true 29 <nil>
}

// A refused request's error carries how long to wait.
func ExampleLimitedError() {
	mock := clock.NewMock()
	g, err := guard.New(guard.Policy{Limit: rxthrottle.Per(1, time.Minute), Block: 90 * time.Second},
		guard.WithClock(mock), guard.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		panic(err)
	}
	_, _ = g.Check(context.Background(), "10.0.0.7")
	mock.Add(500 * time.Millisecond)
	_, err = g.Check(context.Background(), "10.0.0.7")

	var le *guard.LimitedError
	if errors.As(err, &le) {
		fmt.Println("key:", le.Key)
		fmt.Println("retry after:", le.RetryAfter)
		fmt.Println(err)
	}
	// Output:
	// key: 10.0.0.7
	// retry after: 1m30s
	// guard: key "10.0.0.7" is over the usage limit: retry in 1m30s
}

// Hooks feed metrics or alerts; Stats gives the counters at any time.
func ExampleOnBlocked() {
	mock := clock.NewMock()
	g, err := guard.New(guard.Policy{Limit: rxthrottle.Per(2, time.Minute), Block: 10 * time.Minute},
		guard.WithClock(mock),
		guard.WithLogger(slog.New(slog.DiscardHandler)),
		guard.OnBlocked(func(key string, until time.Time) {
			fmt.Printf("alert: %s blocked for %v\n", key, until.Sub(mock.Now()))
		}),
		guard.OnLimited(func(key string, d guard.Decision) {
			fmt.Printf("refused %s, retry in %v\n", key, d.RetryAfter)
		}),
	)
	if err != nil {
		panic(err)
	}
	for range 4 {
		_, _ = g.Check(context.Background(), "bob")
	}
	fmt.Printf("%+v\n", g.Stats())
	// Output:
	// alert: bob blocked for 10m0s
	// refused bob, retry in 10m0s
	// refused bob, retry in 10m0s
	// {Checks:4 Allowed:2 Refused:2 Errors:0 Blocks:1 Full:0 KeysLive:1 KeysBlocked:1}
}

// A MemoryStore bounded to a number of live keys refuses new keys with
// rxthrottle.ErrTooManyKeys rather than forget a blocked one.
func ExampleWithMaxKeys() {
	g, err := guard.New(guard.Policy{Limit: rxthrottle.Per(5, time.Minute)}, guard.WithMaxKeys(2))
	if err != nil {
		panic(err)
	}
	for _, key := range []string{"a", "b", "c"} {
		_, err := g.Check(context.Background(), key)
		// A new key the store has no room for is refused, uncounted.
		fmt.Println(key, errors.Is(err, guard.ErrLimited), errors.Is(err, rxthrottle.ErrTooManyKeys))
	}
	// Output:
	// a false false
	// b false false
	// c true true
}
