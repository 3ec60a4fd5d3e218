package bench_test

import (
	"context"
	"net/http"
	"time"

	"github.com/reactivex/rxgo/v2"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
)

// inflightMap sends the load through ThrottleMap, inflightWorkers calls of
// fn at once, fn's client from httpthrottle.ForCall (so that net/http's
// re-sends and fn's own sends again each take a token of their own), and
// returns the requests answered 200. The late answers and peers' closes
// are each call's Transport's and are not reported.
func inflightMap(ctx context.Context, url string, opts []httpthrottle.TransportOption) int {
	fn := func(ctx context.Context, _ any) (any, error) {
		if inflightGet(ctx, httpthrottle.ForCall(ctx, opts...), url) {
			return http.StatusOK, nil
		}
		return nil, ctx.Err()
	}
	items := make([]any, inflightTotal)
	for i := range items {
		items[i] = i
	}
	op := rxthrottle.ThrottleMap(rxthrottle.Per(inflightN, time.Second), fn, rxthrottle.WithConcurrency(inflightWorkers))
	done := 0
	for item := range op(rxgo.Just(items...)(rxgo.WithContext(ctx))).Observe() {
		if item.E == nil {
			done++
		}
	}
	return done
}
