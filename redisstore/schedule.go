package redisstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/redis/go-redis/v9"
	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/limiterkit"
)

// errNilContext is returned by every call given a nil context.
var errNilContext = errors.New("redisstore: nil context")

// endTimeout bounds a release, a cancel or a withdrawal when WithTimeout(0)
// leaves no timeout of our own: they have no context of their own (or the
// caller's is over), and must not hang forever.
const endTimeout = time.Second

// schedule is the part of a Bucket or a Keyed limiter that talks to Redis:
// the limits, the scripts' arguments, the failure policy and the local
// counters. The state of the schedule itself lives in Redis only.
type schedule struct {
	client redis.Scripter
	// deadlines: the client honours a context's deadline (timeout.go).
	deadlines bool
	clock     clock.Clock
	timeout   time.Duration
	policy    FailurePolicy
	onError   func(error)
	hooks     hooks         // OnWait, OnAdmit
	poll      time.Duration // longest sleep of a caller blocked by held tokens
	// queueBound is WithMaxQueue's bound on this process's callers
	// waiting at once (-1: none); waiters counts them.
	queueBound int
	waiters    atomic.Int64
	ack        replicaAckOption // WithReplicaAck (replicas.go)

	lim atomic.Pointer[limitSet] // replaced by a configuration read or SetLimit (config.go)
	// tiers is a Keyed limiter's (tiers.go), nil for a Bucket.
	tiers *keyTiers

	// The stored configuration (config.go): its keys (the conf hash, and
	// a Bucket's state), this process's own (the constructor's, or its
	// last SetLimit's), WithStrictConfig, whether a stored one was
	// followed yet (under confMu, as own is), and what to tell when the
	// limits change (FallbackLocal's limiter).
	confKeys []string
	staleSet atomic.Pointer[limitSet] // found stale: read again (config.go)
	confMu   sync.Mutex
	own      *limitSet
	strict   bool
	joined   bool
	onLimits func([]rxthrottle.Limit) error

	stats counters
	// brk is the circuit breaker in front of Redis (WithRetryBackoff).
	brk breaker
	// evict checks the server's eviction policy once (eviction.go).
	evict evictionCheck
	// wake wakes the callers blocked by held tokens when this process
	// releases one.
	wake wakeup
	// group batches the admissions of concurrent callers (group.go).
	group group
	// lines keeps the callers blocked by held tokens in FIFO order
	// (line.go).
	lines lines

	// trace, if set (by tests only), sees every admission that lets a
	// caller of Wait or Acquire go.
	trace func(admission)
}

// newSchedule validates what NewBucket and NewKeyed (ctor) share and builds
// the schedule.
func newSchedule(ctor string, client redis.Scripter, limit rxthrottle.Limit, opts []Option) (*schedule, config, error) {
	if isNil(client) {
		return nil, config{}, errors.New("redisstore: nil Redis client")
	}
	reads := limiterReads
	switch ctor {
	case "NewBucket":
		reads = bucketReads
	case "NewKeyed":
		reads = keyedReads
	}
	cfg, err := buildConfig(ctor, reads, opts)
	if err != nil {
		return nil, cfg, err
	}
	ls, err := newLimitSet(append([]rxthrottle.Limit{limit}, cfg.limits...), micros(cfg.spacing), micros(cfg.holdTimeout), cfg.concurrency)
	if err != nil {
		return nil, cfg, err
	}
	s := &schedule{
		client:     client,
		deadlines:  honoursDeadlines(client),
		clock:      cfg.clock,
		timeout:    cfg.timeout,
		policy:     cfg.policy,
		onError:    cfg.onError,
		hooks:      hooks{onWait: cfg.onWait, onAdmit: cfg.onAdmit},
		poll:       cfg.poll,
		queueBound: cfg.queueBound,
		brk:        breaker{clock: cfg.clock, first: cfg.retryFirst, max: cfg.retryMax},
		own:        ls,
		strict:     cfg.strictConfig,
	}
	if !cfg.timeoutSet {
		s.timeout = DefaultTimeout
	}
	if err := cfg.replicaAck.check(client, s.timeout); err != nil {
		return nil, cfg, err
	}
	s.ack = cfg.replicaAck
	if s.poll == 0 {
		s.poll = defaultPoll(ls.limits)
	}
	if ctor == "NewKeyed" {
		s.tiers = &keyTiers{f: cfg.keyLimits}
	}
	ls.prebuild(s)
	s.lim.Store(ls)
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

// take is Wait (hold false) and Acquire (hold true) of n tokens on the
// schedule stored under keys, for key (in errors and the fallback); op
// names the method in errors. local is used by FallbackLocal only.
//
// A caller blocked by held tokens has no time yet: it sleeps until the
// earliest lease deadline, at most the poll interval, or until this
// process releases a token, and asks again. It holds no reservation while
// it sleeps, so giving up costs nothing.
func (s *schedule) take(ctx context.Context, keys []string, key string, n int, hold bool, op string, local fallback) (rxthrottle.Token, error) {
	if ctx == nil {
		return rxthrottle.Token{}, errNilContext
	}
	req := request{n: n, hold: hold}
	if err := s.checkCost(key, op, n, &req); err != nil {
		return rxthrottle.Token{}, err
	}
	if err := ctx.Err(); err != nil {
		s.stats.cancel()
		return rxthrottle.Token{}, err
	}
	arrived := s.clock.Now()
	s.stats.enter()
	defer s.stats.leave()

	if dl, ok := ctx.Deadline(); ok {
		req.deadline = dl
	}
	// my is the caller's place in the line of blocked callers, if any.
	who := callerOf(ctx, n)
	my := s.lines.join(keys[0], true, who)
	leave := func() {
		if my != nil {
			s.lines.leave(keys[0], my)
			my = nil
		}
	}
	defer leave()
	blocked := my != nil
	// full: Q callers of this process wait already (WithMaxQueue): the
	// caller is admitted only if it may go at once (SPEC.md, "Queue
	// bound").
	full := s.queueBound >= 0 && s.waiters.Load() >= int64(s.queueBound)
	if full && blocked {
		s.stats.refuse()
		return rxthrottle.Token{}, queueFullError(op, s.queueBound)
	}
	if full {
		req.allowOnly = true
	}
	told := false // whether OnWait has heard of the caller (it waits)
	tellWait := func() {
		if !told {
			told = true
			s.waiters.Add(1)
			s.hooks.waiting(key, arrived, n)
		}
	}
	defer func() {
		if told {
			s.waiters.Add(-1)
		}
	}()
	if blocked {
		tellWait()
	}
	for {
		if my != nil {
			select {
			case <-my.ch:
			case <-ctx.Done():
				s.stats.cancel()
				return rxthrottle.Token{}, ctx.Err()
			}
		}
		t := s.brk.begin()
		if !t.call {
			leave()
			return s.failTake(ctx, &StoreError{Op: "admit", Key: keys[0], Err: s.brk.openError()}, false, arrived, key, n, hold, local)
		}
		woken := s.wake.channel()
		a, err := s.commitConf(ctx, keys, key, op, &req)
		if err != nil {
			leave()
			if own := ownError(err); own != nil {
				s.brk.succeeded(t) // Redis answered
				s.stats.cancel()
				return rxthrottle.Token{}, own
			}
			if ctx.Err() != nil {
				// The caller gave up during the round trip: its
				// admission, if the script made one, is withdrawn when
				// the answer comes (group.go).
				s.brk.abandoned(t)
				s.stats.cancel()
				return rxthrottle.Token{}, ctx.Err()
			}
			s.brk.failed(t, err)
			return s.failTake(ctx, &StoreError{Op: "admit", Key: keys[0], Err: err}, true, arrived, key, n, hold, local)
		}
		s.succeeded(t, keys[0])
		switch {
		case req.allowOnly && !a.admitted && !a.withdrawn:
			leave()
			s.stats.refuse()
			return rxthrottle.Token{}, queueFullError(op, s.queueBound)
		case a.withdrawn:
			// Its context ended as the answer came: the admission is
			// withdrawn (group.go).
			s.stats.cancel()
			return rxthrottle.Token{}, ctx.Err()
		case a.refused:
			// Its deadline comes before it could possibly go (SPEC.md,
			// "Deadlines"): refused at once, nothing reserved.
			leave()
			s.stats.cancel()
			return rxthrottle.Token{}, &deadlineError{op: op, earliest: a.delay()}
		case a.late:
			// It cannot go by its deadline, so it holds no reservation
			// (nobody waits behind it): it waits until its context
			// ends, or until this process frees a token, and asks again.
			tellWait()
			leave()
			select {
			case <-woken:
				continue
			case <-ctx.Done():
				s.stats.cancel()
				return rxthrottle.Token{}, ctx.Err()
			}
		}
		if a.blocked {
			tellWait()
			blocked = true
			if my == nil {
				if my = s.lines.join(keys[0], false, who); !isClosed(my.ch) {
					continue // behind other blocked callers: wait for the turn
				}
			}
			if err := s.sleep(ctx, min(a.delay(), s.poll), woken); err != nil {
				s.stats.cancel()
				return rxthrottle.Token{}, err
			}
			continue
		}
		leave()
		if s.trace != nil {
			s.trace(a)
		}
		d := a.delay()
		if d > 0 {
			tellWait()
			tm := s.clock.Timer(d)
			select {
			case <-tm.C:
			case <-ctx.Done():
				if dl, ok := ctx.Deadline(); ok && !a.at.IsZero() && !a.at.After(dl) && ctx.Err() == context.DeadlineExceeded {
					// Its departure, as the answer gave it, was by its
					// deadline: only the timers' order on a busy
					// machine says otherwise. It goes at its departure
					// (as in SPEC.md's schedule), not before.
					<-tm.C
					break
				}
				if tm.Stop() {
					s.end(keys, a.tier, a.id, n, a.e, "withdraw")
					s.stats.cancel()
					return rxthrottle.Token{}, ctx.Err()
				}
				// The timer fired as ctx ended: the caller's slot has
				// come, so it goes (as rxthrottle.Bucket does).
			}
		}
		s.admitted(key, arrived, n, s.clock.Since(arrived), d > 0 || blocked)
		if !hold {
			return rxthrottle.Token{}, nil
		}
		return limiterkit.NewToken(&heldToken{s: s, keys: keys, tier: a.tier, id: a.id, n: n, d: a.e}, uint64(a.id)), nil
	}
}

// queueFullError is the error of a caller refused by the queue bound.
func queueFullError(op string, bound int) error {
	return fmt.Errorf("redisstore: %s: %d callers of this process wait already, the bound of WithMaxQueue: %w", op, bound, rxthrottle.ErrQueueFull)
}

// isClosed reports whether ch is closed.
func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// sleep waits d on the limiter's clock, or until woken is closed (a local
// release), or until ctx ends (its error).
func (s *schedule) sleep(ctx context.Context, d time.Duration, woken <-chan struct{}) error {
	tm := s.clock.Timer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
	case <-woken:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// failTake applies the failure policy to a Wait or Acquire whose admission
// failed (report: the call to Redis failed, and OnError hears of it) or was
// not sent because the breaker is open.
func (s *schedule) failTake(ctx context.Context, err *StoreError, report bool, arrived time.Time, key string, n int, hold bool, local fallback) (rxthrottle.Token, error) {
	if report {
		s.report(err)
	}
	switch s.policy {
	case FailOpen:
		s.admitted(key, arrived, n, s.clock.Since(arrived), false)
		return rxthrottle.Token{}, nil
	case FallbackLocal:
		tok, lerr := local.take(ctx, key, n, hold)
		if lerr != nil {
			s.stats.cancel()
			return rxthrottle.Token{}, lerr
		}
		w := s.clock.Since(arrived)
		s.admitted(key, arrived, n, w, w > 0)
		return tok, nil
	}
	return rxthrottle.Token{}, err
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
