package rxthrottle_test

import (
	"context"
	"testing"
	"time"

	"github.com/reactivex/rxgo/v2"

	"github.com/rxthrottle/rxthrottle"
)

// BenchmarkThrottleMap compares ThrottleMap with a no-op function, when a
// token is always free, with rxgo's Map of the same function: the cost per
// item of taking, holding and releasing a token, handing the call to a
// worker and keeping the order. A token renews a nanosecond after its
// release, and there are more tokens than the calls ThrottleMap can have
// under way (its backlog), so none is ever waited for. Target: at most
// 1.3x Map. Run with -cpu=1,2.
func BenchmarkThrottleMap(b *testing.B) {
	identity := func(_ context.Context, v any) (any, error) { return v, nil }
	b.Run("impl=rxgo-map", func(b *testing.B) {
		benchStage(b, func(o rxgo.Observable) rxgo.Observable { return o.Map(identity) })
	})
	b.Run("impl=throttle-map", func(b *testing.B) {
		benchStage(b, rxthrottle.ThrottleMap(rxthrottle.Per(1000, time.Nanosecond), identity))
	})
}
