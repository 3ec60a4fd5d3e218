package rxthrottle_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/reactivex/rxgo/v2"

	"github.com/rxthrottle/rxthrottle"
)

func ExampleThrottleMap() {
	const window = 100 * time.Millisecond
	// A call of the API takes half a window. With 2 calls per window, a
	// and b start at once and end at 50ms; their tokens renew a window
	// after the calls ended, at 150ms, when c and d start; e starts at
	// 300ms. The results come in the order of the items.
	call := func(ctx context.Context, v any) (any, error) {
		select {
		case <-time.After(window / 2):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return strings.ToUpper(v.(string)), nil
	}
	start := time.Now()
	src := rxgo.Just("a", "b", "c", "d", "e")()
	out := rxthrottle.ThrottleMap(rxthrottle.Per(2, window), call)(src)
	for item := range out.Observe() {
		fmt.Printf("window %d: %v\n", time.Since(start)/window, item.V)
	}
	// Output:
	// window 0: A
	// window 0: B
	// window 2: C
	// window 2: D
	// window 3: E
}
