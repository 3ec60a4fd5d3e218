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
	const window = 200 * time.Millisecond
	// A call of the API takes half a window. With 2 calls per window, a
	// and b start at once and end at 0.5 windows; their tokens renew a
	// window after the calls ended, at 1.5 windows, when c and d start; e
	// starts at 3 windows, when c's token renews. Each result says in
	// which window its call started (every start is at least half a
	// window from a boundary that would change the count, or on one, since
	// a token is never early); the results come in the order of the items.
	start := time.Now()
	call := func(ctx context.Context, v any) (any, error) {
		started := time.Since(start) / window
		select {
		case <-time.After(window / 2):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return fmt.Sprintf("%s started in window %d", strings.ToUpper(v.(string)), started), nil
	}
	src := rxgo.Just("a", "b", "c", "d", "e")()
	out := rxthrottle.ThrottleMap(rxthrottle.Per(2, window), call)(src)
	for item := range out.Observe() {
		fmt.Println(item.V)
	}
	// Output:
	// A started in window 0
	// B started in window 0
	// C started in window 1
	// D started in window 1
	// E started in window 3
}
