package redisstore

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultTimeout bounds each call of a Bucket or a Keyed limiter to Redis
// when WithTimeout is not given.
const DefaultTimeout = 500 * time.Millisecond

// honoursDeadlines reports whether client applies a context's deadline to
// the socket: a go-redis client built with ContextTimeoutEnabled. Without
// it, go-redis ignores the deadline, and a stalled server holds a call
// for the client's ReadTimeout; the limiter then never waits for such a
// call longer than its own bound (group.go, bounded). Another
// redis.Scripter is not trusted to.
func honoursDeadlines(client redis.Scripter) bool {
	switch c := client.(type) {
	case *redis.Client:
		return c.Options().ContextTimeoutEnabled
	case *redis.ClusterClient:
		return c.Options().ContextTimeoutEnabled
	case *redis.Ring:
		return c.Options().ContextTimeoutEnabled
	}
	return false
}

// bounded runs call with a context derived from ctx and bounded by d, and
// returns its error; or, if the client does not honour the deadline and
// call has not returned by then, ctx's error once ctx ends, or an error
// wrapping context.DeadlineExceeded once d has passed (then call goes on,
// on a goroutine of its own, until the client gives up: it must not
// touch what its caller reads after an error). Every call to Redis that
// no caller's wait bounds (group.go's await bounds the admissions) runs
// in it: a lease, a report, a pause, a configuration read.
func (s *schedule) bounded(ctx context.Context, d time.Duration, call func(context.Context) error) error {
	parent := ctx
	ctx, cancel := context.WithTimeout(parent, d)
	if s.deadlines {
		defer cancel()
		return call(ctx)
	}
	done := make(chan error, 1)
	go func() {
		defer cancel()
		done <- call(ctx)
	}()
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case err := <-done:
		return err
	case <-parent.Done():
		return parent.Err()
	case <-tm.C:
		return &noAnswerError{d}
	}
}

// checkTimeout refuses a WithTimeout that the client cannot honour, for
// the GuardStore (whose calls run on the caller's goroutine): a go-redis
// client without ContextTimeoutEnabled ignores a context's deadline on
// the socket (see WithTimeout).
func checkTimeout(client redis.Scripter, d time.Duration) error {
	if d <= 0 || honoursDeadlines(client) {
		return nil
	}
	switch client.(type) {
	case *redis.Client, *redis.ClusterClient, *redis.Ring:
		return fmt.Errorf("redisstore: WithTimeout(%v) needs a client built with ContextTimeoutEnabled: true: without it go-redis ignores the deadline on the socket, and a stalled server holds each call for the client's ReadTimeout", d)
	}
	return nil
}
