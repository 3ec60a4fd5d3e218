package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/redis/go-redis/v9"
	"github.com/rxthrottle/rxthrottle"
)

// errNilContext is returned by Wait and Allow for a nil context.
var errNilContext = errors.New("redisstore: nil context")

// releaseTimeout bounds the release of a cancelled reservation when
// WithTimeout(0) leaves no timeout of our own: the caller's context is over
// by then, and a release must not hang forever.
const releaseTimeout = time.Second

// schedule is the part of a Bucket or a Keyed limiter that talks to Redis:
// the limits, the scripts' arguments, the failure policy and the local
// counters. The state of the schedule itself lives in Redis only.
type schedule struct {
	client  redis.Scripter
	clock   clock.Clock
	limits  []rxthrottle.Limit
	timeout time.Duration
	policy  FailurePolicy
	onError func(error)

	// The scripts' ARGV, built once: waitArgs reserve whatever the
	// delay, allowArgs only a slot that is free now.
	waitArgs, allowArgs []any

	stats counters

	// brk is the circuit breaker in front of Redis (WithRetryBackoff).
	brk breaker
	// evict checks the server's eviction policy once (eviction.go).
	evict evictionCheck

	// trace, if set (by tests only), sees every admission Wait gets.
	trace func(admission)
}

// newSchedule validates what NewBucket and NewKeyed share and builds the
// schedule.
func newSchedule(client redis.Scripter, limit rxthrottle.Limit, opts []Option) (*schedule, config, error) {
	if isNil(client) {
		return nil, config{}, errors.New("redisstore: nil Redis client")
	}
	cfg, err := buildConfig(opts)
	if err != nil {
		return nil, cfg, err
	}
	if err := checkTimeout(client, cfg.timeout); err != nil {
		return nil, cfg, err
	}
	limits := append([]rxthrottle.Limit{limit}, cfg.limits...)
	args := []any{"0", int64(0)}
	var maxW int64
	for i, l := range limits {
		if err := l.Validate(); err != nil {
			return nil, cfg, fmt.Errorf("redisstore: limit #%d: %w", i+1, err)
		}
		if err := checkWindow(i, l); err != nil {
			return nil, cfg, err
		}
		w := micros(l.Window)
		maxW = max(maxW, w)
		args = append(args, strconv.Itoa(-l.N), w)
	}
	args[1] = maxW
	s := &schedule{
		client:    client,
		clock:     cfg.clock,
		limits:    limits,
		timeout:   cfg.timeout,
		policy:    cfg.policy,
		onError:   cfg.onError,
		waitArgs:  args,
		allowArgs: append([]any{"1"}, args[1:]...),
		brk:       breaker{clock: cfg.clock, first: cfg.retryFirst, max: cfg.retryMax},
	}
	return s, cfg, nil
}

// isNil reports whether c is nil, or a typed nil of one of go-redis's
// clients (which would panic on first use).
func isNil(c redis.Scripter) bool {
	switch v := c.(type) {
	case nil:
		return true
	case *redis.Client:
		return v == nil
	case *redis.ClusterClient:
		return v == nil
	case *redis.Ring:
		return v == nil
	}
	return false
}

// admission is admitScript's answer, in microseconds on Redis's clock.
type admission struct {
	admitted bool  // false only for Allow, when the caller would have to wait
	e, now   int64 // the caller's emission time and Redis's now
}

// delay is how long the caller waits before it may go.
func (a admission) delay() time.Duration { return durationOf(a.e - a.now) }

// callCtx derives the context of one call to Redis from ctx and the
// timeout.
func (s *schedule) callCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.timeout > 0 {
		return context.WithTimeout(ctx, s.timeout)
	}
	return ctx, func() {}
}

// admit runs admitScript once (EVALSHA, falling back to EVAL when Redis does
// not know the script) on keys with args. It changes the schedule in Redis
// and nothing locally.
func (s *schedule) admit(ctx context.Context, keys []string, args []any) (admission, error) {
	cctx, cancel := s.callCtx(ctx)
	defer cancel()
	v, err := admitScript.Run(cctx, s.client, keys, args...).Result()
	if err != nil {
		return admission{}, err
	}
	r, ok := v.([]any)
	if !ok || len(r) != 3 {
		return admission{}, fmt.Errorf("malformed reply %v from the admission script", v)
	}
	flag, ok1 := r[0].(int64)
	e, ok2 := r[1].(int64)
	d, ok3 := r[2].(int64)
	if !ok1 || !ok2 || !ok3 || d < 0 {
		return admission{}, fmt.Errorf("malformed reply %v from the admission script", v)
	}
	return admission{admitted: flag == 1, e: e, now: e - d}, nil
}

// fallback is the in-memory limiter that FallbackLocal turns to; key is
// ignored by a single bucket.
type fallback interface {
	wait(ctx context.Context, key string) error
	allow(key string) bool
}

// bucketFallback and keyedFallback hold one pointer each, so that passing
// them as a fallback allocates nothing.
type (
	bucketFallback struct{ b *rxthrottle.Bucket }
	keyedFallback  struct{ k *rxthrottle.Keyed }
)

func (f bucketFallback) wait(ctx context.Context, _ string) error { return f.b.Wait(ctx) }
func (f bucketFallback) allow(string) bool {
	ok, _ := f.b.Allow(context.Background())
	return ok
}
func (f keyedFallback) wait(ctx context.Context, key string) error {
	return f.k.Wait(ctx, key)
}
func (f keyedFallback) allow(key string) bool {
	ok, _ := f.k.Allow(context.Background(), key)
	return ok
}

// wait is Wait on the schedule stored under keys, for key (in errors and
// the fallback); local is used by FallbackLocal only.
func (s *schedule) wait(ctx context.Context, keys []string, key string, local fallback) error {
	if ctx == nil {
		return errNilContext
	}
	if err := ctx.Err(); err != nil {
		s.stats.cancel()
		return err
	}
	arrived := s.clock.Now()
	s.stats.enter()
	defer s.stats.leave()

	t := s.brk.begin()
	if !t.call {
		return s.failWait(ctx, &StoreError{Op: "admit", Key: keys[0], Err: s.brk.openError()}, false, arrived, key, local)
	}
	a, err := s.admit(ctx, keys, s.waitArgs)
	if err != nil {
		if ctx.Err() != nil {
			// The caller gave up during the round trip. The script
			// may have run: its slot, if any, is kept (see Bucket).
			s.brk.abandoned(t)
			s.stats.cancel()
			return ctx.Err()
		}
		s.brk.failed(t, err)
		return s.failWait(ctx, &StoreError{Op: "admit", Key: keys[0], Err: err}, true, arrived, key, local)
	}
	s.succeeded(t, keys[0])
	if s.trace != nil {
		s.trace(a)
	}
	d := a.delay()
	if d > 0 {
		t := s.clock.Timer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			if t.Stop() {
				s.release(ctx, keys[0], a.e)
				s.stats.cancel()
				return ctx.Err()
			}
			// The timer fired as ctx ended: the caller's slot has
			// come, so it goes (as rxthrottle.Bucket does).
		}
	}
	s.stats.admit(s.clock.Since(arrived), d > 0)
	return nil
}

// failWait applies the failure policy to a Wait whose admission failed
// (report: the call to Redis failed, and OnError hears of it) or was not
// sent because the breaker is open.
func (s *schedule) failWait(ctx context.Context, err *StoreError, report bool, arrived time.Time, key string, local fallback) error {
	if report && s.onError != nil {
		s.onError(err)
	}
	switch s.policy {
	case FailOpen:
		s.stats.admit(s.clock.Since(arrived), false)
		return nil
	case FallbackLocal:
		if lerr := local.wait(ctx, key); lerr != nil {
			s.stats.cancel()
			return lerr
		}
		w := s.clock.Since(arrived)
		s.stats.admit(w, w > 0)
		return nil
	}
	return err
}

// allow is Allow on the schedule stored under keys, for key; local is used
// by FallbackLocal only.
func (s *schedule) allow(ctx context.Context, keys []string, key string, local fallback) (bool, error) {
	if ctx == nil {
		return false, errNilContext
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	var (
		a   admission
		err error
	)
	t := s.brk.begin()
	if t.call {
		a, err = s.admit(ctx, keys, s.allowArgs)
	}
	if !t.call || err != nil {
		var serr *StoreError
		if t.call {
			if ctx.Err() != nil {
				s.brk.abandoned(t)
				return false, ctx.Err()
			}
			s.brk.failed(t, err)
			serr = &StoreError{Op: "admit", Key: keys[0], Err: err}
			if s.onError != nil {
				s.onError(serr)
			}
		} else {
			serr = &StoreError{Op: "admit", Key: keys[0], Err: s.brk.openError()}
		}
		switch s.policy {
		case FailOpen:
			s.stats.admit(0, false)
			return true, nil
		case FallbackLocal:
			ok := local.allow(key)
			if ok {
				s.stats.admit(0, false)
			}
			return ok, nil
		}
		return false, serr
	}
	s.succeeded(t, keys[0])
	if a.admitted {
		s.stats.admit(0, false)
	}
	return a.admitted, nil
}

// release gives the reservation e back if it is still the newest on the
// emissions key (releaseScript). It runs after ctx has ended, so it uses a
// context of its own; a failure is reported to OnError and the slot is kept,
// which costs a token but never breaks the window.
func (s *schedule) release(ctx context.Context, key string, e int64) {
	d := s.timeout
	if d <= 0 {
		d = releaseTimeout
	}
	t := s.brk.begin()
	if !t.call {
		s.report(&StoreError{Op: "release", Key: key, Err: s.brk.openError()})
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d)
	defer cancel()
	err := releaseScript.Run(rctx, s.client, []string{key}, strconv.FormatInt(e, 10)).Err()
	s.ended(t, key, "release", err)
}

// ended tells the breaker how the call t on key ended, and reports a
// failure to OnError.
func (s *schedule) ended(t ticket, key, op string, err error) {
	if err == nil {
		s.succeeded(t, key)
		return
	}
	s.brk.failed(t, err)
	s.report(&StoreError{Op: op, Key: key, Err: err})
}

// succeeded closes the breaker after a call that Redis answered, and
// checks the server's eviction policy if that is not done yet.
func (s *schedule) succeeded(t ticket, key string) {
	s.brk.succeeded(t)
	if !s.evict.done.Load() {
		s.checkEviction(key)
	}
}

// report passes err to the OnError hook, if any.
func (s *schedule) report(err error) {
	if s.onError != nil {
		s.onError(err)
	}
}

// pause moves the pause-until key to until (on the local clock, sent as a
// delay so that Redis applies it on its own clock), unless a later pause is
// already set. It is best effort: Pause has no error to return, so a failure
// goes to OnError.
func (s *schedule) pause(pauseKey string, until time.Time) {
	d := until.Sub(s.clock.Now())
	if d <= 0 {
		return
	}
	t := s.brk.begin()
	if !t.call {
		s.report(&StoreError{Op: "pause", Key: pauseKey, Err: s.brk.openError()})
		return
	}
	ctx, cancel := s.callCtx(context.Background())
	defer cancel()
	err := pauseScript.Run(ctx, s.client, []string{pauseKey}, min(micros(d), maxTime)).Err()
	s.ended(t, pauseKey, "pause", err)
}
