package redisstore

import (
	"cmp"
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/redis/go-redis/v9"
	"github.com/rxthrottle/rxthrottle"
	front "github.com/rxthrottle/rxthrottle/internal/admission"
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
	// waiting at once (-1: none), per key for a Keyed limiter, which
	// each schedule's window counts (take_wait.go).
	queueBound int
	ack        replicaAckOption // WithReplicaAck (replicas.go)

	lim atomic.Pointer[limitSet] // replaced by a configuration read or SetLimit (config.go)
	// limWake wakes the callers waiting for a departure when the limits
	// in force change (config.go): a cost they no longer serve ends the
	// wait (take_depart.go).
	limWake wakeup
	// tiers is a Keyed limiter's (tiers.go), nil for a Bucket.
	tiers *keyTiers

	conf storedConf // the stored configuration (config.go)

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
	// gates is WithAdaptiveConcurrency's cap on this process's holds
	// (capgate.go), nil without it.
	gates *gates
	// lines keeps the callers blocked by held tokens in their order
	// (line.go).
	lines lines

	// trace, if set (by tests only), sees every admission that lets a
	// caller of Wait or Acquire go; sleeping, if set (by tests only),
	// sees each caller that starts to wait for its departure, with its
	// delay, as the clock's timer of a blocked caller's sleep does.
	trace    func(admission)
	sleeping func(time.Duration)
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
		conf:       storedConf{own: ls, strict: cfg.strictConfig},
	}
	s.group.clock = cfg.clock
	s.gates = newGates(cfg.adaptMin, cfg.adaptMax, cfg.clock, cmp.Or(cfg.holdTimeout, rxthrottle.DefaultHoldTimeout))
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

// refuse words the errors of the callers a Bucket refuses (queue bound,
// deadline, cost) as the root's limiters do; the queue bound counts this
// process's callers.
var refuse = front.Refusals{Limiter: "redisstore", Waiting: "callers of this process"}

// isClosed reports whether ch is closed.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// sleep waits d on the limiter's clock, or until woken is closed (a local
// release) or lost is (a caller of higher priority took the head of the
// line), or until ctx ends (its error).
func (s *schedule) sleep(ctx context.Context, d time.Duration, woken, lost <-chan struct{}) error {
	tm := s.clock.Timer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
	case <-woken:
	case <-lost:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// succeeded closes the breaker after a call that Redis answered, and
// checks the server's eviction policy if that is not done yet.
func (s *schedule) succeeded(t ticket, key string) {
	s.brk.succeeded(t)
	if !s.evict.done.Load() {
		s.checkEviction(key)
	}
}

// ownFailed ends t, the ticket of a call that ended with an error of the
// caller's own (ownError): Redis answered (a configuration mismatch, stale
// answers, a tier's cost), which closes the breaker, unless the limits in
// force decided it (a SetLimit lowered their smallest N below req's cost:
// stillServes, before any call or for an admission runTier did not send),
// which says nothing of Redis: then it is no verdict, and the next caller
// probes if t was the probe.
func (s *schedule) ownFailed(t ticket, op string, req *request) {
	if s.stillServes(op, req) != nil {
		s.brk.abandoned(t)
		return
	}
	s.brk.succeeded(t)
}

// report passes err to the OnError hook, if any.
func (s *schedule) report(err error) {
	if s.onError != nil {
		s.onError(err)
	}
}
