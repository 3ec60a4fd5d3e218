package httpthrottle

import (
	"context"
	"net/http"
	"time"

	"github.com/rxthrottle/rxthrottle"
)

// gate is the Transport's view of its limiter: one schedule, or one per key.
type gate interface {
	key(req *http.Request) (string, error)
	wait(ctx context.Context, key string) error
	acquire(ctx context.Context, key string) (rxthrottle.Token, error)
	pause(key string, until time.Time)
}

type singleGate struct{ l rxthrottle.Limiter }

func (g singleGate) key(*http.Request) (string, error)        { return "", nil }
func (g singleGate) wait(ctx context.Context, _ string) error { return g.l.Wait(ctx) }
func (g singleGate) acquire(ctx context.Context, _ string) (rxthrottle.Token, error) {
	return g.l.Acquire(ctx)
}
func (g singleGate) pause(_ string, until time.Time) { g.l.Pause(until) }

type keyedGate struct {
	kl    rxthrottle.KeyedLimiter
	keyOf KeyFunc
}

func (g keyedGate) key(req *http.Request) (string, error)      { return g.keyOf(req) }
func (g keyedGate) wait(ctx context.Context, key string) error { return g.kl.Wait(ctx, key) }
func (g keyedGate) acquire(ctx context.Context, key string) (rxthrottle.Token, error) {
	return g.kl.Acquire(ctx, key)
}
func (g keyedGate) pause(key string, until time.Time) { g.kl.Pause(key, until) }
