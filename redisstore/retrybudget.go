package redisstore

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/rxthrottle/rxthrottle/attempt"
)

// The keys of a Bucket's retry budget, beside its schedule's.
const (
	suffixBudgetCounts = "}:budget"        // HASH: the counts and the latest instant
	suffixBudgetStarts = "}:budget:starts" // LIST: the window starts that may be the worst
)

var retryBudgetScript = luaScript("retrybudget.lua")

// RetryBudget returns the counter of spec for the adapters over b
// (httpthrottle's Transport, ThrottleMapWith, grpcthrottle's interceptor,
// each given WithRetryBudget): it counts the first attempts and retries of
// every process that shares b in Redis, on Redis's clock, over the window
// of b's first limit, so that the budget binds them all together
// (attempt.SharedBudget), in every window as attempt.Budget does. A retry Redis cannot answer about (within
// WithTimeout) is not sent; a first attempt it cannot record is not
// counted.
func (b *Bucket) RetryBudget(spec attempt.RetryBudget) attempt.Counter {
	return &redisBudget{b: b, spec: spec, keys: []string{
		keyPrefix + b.name + suffixBudgetCounts,
		keyPrefix + b.name + suffixBudgetStarts,
	}}
}

var _ attempt.SharedBudget = (*Bucket)(nil)

// redisBudget is a Bucket's retry budget in Redis.
type redisBudget struct {
	b    *Bucket
	spec attempt.RetryBudget
	keys []string
}

// First records a first attempt; now is Redis's, not the caller's.
func (r *redisBudget) First(time.Time) { _, _, _ = r.run("f") }

// Retry reports whether a retry may go now, on Redis's clock.
func (r *redisBudget) Retry(time.Time) bool {
	ok, _, err := r.run("r")
	return err == nil && ok
}

// run runs retrybudget.lua's op ("f" or "r"): whether it counted, and the
// instant it counted at, in microseconds of Redis's clock.
func (r *redisBudget) run(op string) (ok bool, at int64, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), r.b.s.timeout)
	defer cancel()
	w := r.b.Limits()[0].Window.Microseconds()
	v, err := retryBudgetScript.Run(ctx, r.b.s.client, r.keys, op, w,
		strconv.FormatFloat(r.spec.Ratio, 'g', -1, 64), r.spec.Min).Int64Slice()
	if err != nil {
		return false, 0, err
	}
	if len(v) != 2 {
		return false, 0, fmt.Errorf("redisstore: retrybudget.lua answered %v", v)
	}
	return v[0] == 1, v[1], nil
}
