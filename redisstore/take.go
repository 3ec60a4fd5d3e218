package redisstore

import (
	"context"
	"time"

	"github.com/rxthrottle/rxthrottle"
	front "github.com/rxthrottle/rxthrottle/internal/admission"
	"github.com/rxthrottle/rxthrottle/internal/fairq"
)

// ask is what a caller of take asks for: Wait (hold false) or Acquire
// (hold true) of n tokens on the schedule stored under keys, for key (in
// errors and the fallback), op naming the method in errors. local is
// used by FallbackLocal only. sent says the lease pool sent the caller
// here, its cost checked at its arrival there.
type ask struct {
	keys    []string
	key, op string
	n       int
	hold    bool
	local   fallback // FallbackLocal's limiter
	sent    bool
}

// taker is one caller of take: what it asked for, and where it stands.
type taker struct {
	ask
	s       *schedule
	ctx     context.Context
	req     request
	arrived time.Time
	who     fairq.Caller
	my      *front.Waiter // its place in the line of blocked callers, if any
	blocked bool          // held tokens blocked it (it waited)
	// asker: whether its schedule's window counts it waiting, the count
	// WithMaxQueue bounds, and its OnWait (take_wait.go)
	asker   front.Asker[rxthrottle.Event]
	place   *place // its place under WithAdaptiveConcurrency's cap, if it holds
	kept    bool   // place went to its Token
	gated   bool   // it waited for a place under the cap
	reasked bool   // it asked again behind a caller of higher priority (again)
	// again: a caller of higher priority took its departure, and this is
	// its admission asked again, queued behind that caller
	// (departures.go).
	again *departure
}

// take admits the caller of a (see ask). For a caller the lease pool
// sent here (a.sent), a cost the limits no longer serve is a SetLimit's
// since (SPEC.md, "Changing limits"), counted as cancelled, where it is
// otherwise a bad argument, counted nowhere. (Checked here only, with no
// gap between two checks for a SetLimit to fall in.)
//
// A caller blocked by held tokens has no time yet: it sleeps until the
// earliest lease deadline, at most the poll interval, or until this
// process releases a token, and asks again. It holds no reservation while
// it sleeps, so giving up costs nothing.
func (s *schedule) take(ctx context.Context, a ask) (rxthrottle.Token, error) {
	if ctx == nil {
		return rxthrottle.Token{}, errNilContext
	}
	c := &taker{ask: a, s: s, ctx: ctx, req: request{n: a.n, hold: a.hold, departs: true}}
	if err := s.checkCost(a.key, a.op, a.n, &c.req); err != nil {
		if a.sent {
			s.stats.cancel()
		}
		return rxthrottle.Token{}, err
	}
	if err := ctx.Err(); err != nil {
		s.stats.cancel()
		return rxthrottle.Token{}, err
	}
	c.arrived = s.clock.Now()
	s.stats.enter()
	defer s.stats.leave()
	if dl, ok := ctx.Deadline(); ok {
		c.req.deadline = dl
	}
	c.who = callerOf(ctx, a.n)
	defer c.done()
	if err := c.enterGate(); err != nil {
		return rxthrottle.Token{}, err
	}
	// At WithMaxQueue's bound the caller is admitted only if it may go
	// at once (SPEC.md, "Queue bound"), so one that would queue behind
	// blocked callers is refused (take_wait.go).
	if c.arrive() {
		s.stats.refuse()
		return rxthrottle.Token{}, refuse.QueueFull(a.op, s.queueBound)
	}
	for {
		if tok, done, err := c.round(); done {
			return tok, err
		}
	}
}

// round waits for the caller's turn in the line of blocked callers (if it
// is in it), asks Redis once and acts on the answer: done says whether
// take returns tok and err, or asks again.
func (c *taker) round() (tok rxthrottle.Token, done bool, err error) {
	s := c.s
	if c.my != nil {
		select {
		case <-s.lines.turn(c.my):
		case <-c.ctx.Done():
			return c.cancelled(c.ctx.Err())
		}
	}
	// A SetLimit lowered the smallest N below its cost while it waited
	// (SPEC.md, "Changing limits"): it fails here, before the breaker, as
	// no answer of Redis decides it (neither a probe nor a verdict), and
	// not by the failure policy. So does a caller the SetLimit re-planned
	// (c.again): its ask again is given up (dropAgain), or an open breaker
	// would hand it to the failure policy, FailOpen admitting a cost the
	// limits no longer serve.
	if err := s.stillServes(c.op, &c.req); err != nil {
		c.dropAgain()
		c.leave()
		return c.cancelled(err)
	}
	// A caller with an ask again queued (c.again: a SetLimit re-planned
	// its departure, or a caller of higher priority took it) is not a new
	// call for the breaker to hold back: its ask rides on the script run
	// that withdraws its reservation, sent whatever the breaker (ends
	// always go), and Redis's answer there decides it. Handed to the
	// failure policy instead, a SetLimit that lowered N during a back-off
	// let every sleeper it re-planned go at once (FailOpen) or failed
	// callers holding good reservations (FailClosed).
	t := ticket{call: true}
	if c.again == nil {
		t = s.brk.begin()
	}
	if !t.call {
		c.dropAgain()
		c.leave()
		tok, err := c.fail(&StoreError{Op: "admit", Key: c.keys[0], Err: s.brk.openError()}, false)
		return tok, true, err
	}
	woken := s.wake.channel()
	a, err := c.commit()
	if err != nil {
		tok, err := c.failed(t, err)
		return tok, true, err
	}
	s.succeeded(t, c.keys[0])
	return c.answered(a, woken)
}

// answered acts on Redis's answer a (see round); woken is closed when this
// process frees a token after the call was sent.
func (c *taker) answered(a admission, woken <-chan struct{}) (rxthrottle.Token, bool, error) {
	s := c.s
	switch {
	case c.req.allowOnly && !a.admitted && !a.withdrawn:
		c.leave()
		s.stats.refuse()
		return rxthrottle.Token{}, true, refuse.QueueFull(c.op, s.queueBound)
	case a.withdrawn:
		// Its context ended as the answer came: the admission is
		// withdrawn (group.go).
		return c.cancelled(c.ctx.Err())
	case a.refused && !c.reasked:
		// Its deadline comes before it could possibly go (SPEC.md,
		// "Deadlines"): refused at once, nothing reserved.
		c.leave()
		return c.cancelled(refuse.Deadline(c.op, -1, a.delay()))
	case a.late || a.refused:
		// (Refused when it asks again behind a caller of higher
		// priority: the rule is applied at arrival only, so it waits
		// until its deadline as a late caller.)
		// It cannot go by its deadline, so it holds no reservation
		// (nobody waits behind it): it waits until its context ends, or
		// until this process frees a token, and asks again.
		c.waits()
		c.leave()
		select {
		case <-woken:
			return rxthrottle.Token{}, false, nil
		case <-c.ctx.Done():
			return c.cancelled(c.ctx.Err())
		}
	case a.blocked:
		c.waits()
		c.blocked = true
		if c.my == nil {
			if c.my = s.lines.join(c.keys[0], c.who); !isClosed(s.lines.turn(c.my)) {
				return rxthrottle.Token{}, false, nil // behind other blocked callers: wait for the turn
			}
		}
		// It heads the line: a caller of higher priority arriving while
		// it sleeps takes its place (lost), and it waits for its turn.
		lost := s.lines.sleeping(c.keys[0], c.my)
		if err := s.sleep(c.ctx, min(a.delay(), s.poll), woken, lost); err != nil {
			return c.cancelled(err)
		}
		s.lines.awake(c.keys[0], c.my)
		return rxthrottle.Token{}, false, nil
	}
	c.leave()
	return c.depart(a)
}

// failed follows an admission that got no answer from Redis (err): an
// error of the caller's own, its context ended (or its deadline passed:
// endedErr) during the round trip (the admission, if the script made one,
// is withdrawn when the answer comes: group.go), or the failure policy.
func (c *taker) failed(t ticket, err error) (rxthrottle.Token, error) {
	s := c.s
	c.leave()
	if own := ownError(err); own != nil {
		s.ownFailed(t, c.op, &c.req)
		s.stats.cancel()
		return rxthrottle.Token{}, own
	}
	if cerr := endedErr(c.ctx); cerr != nil {
		s.brk.abandoned(t)
		s.stats.cancel()
		return rxthrottle.Token{}, cerr
	}
	s.brk.failed(t, err)
	return c.fail(&StoreError{Op: "admit", Key: c.keys[0], Err: err}, true)
}

// fail applies the failure policy to the caller, whose admission failed
// (report: the call to Redis failed, and OnError hears of it) or was not
// sent because the breaker is open.
func (c *taker) fail(err *StoreError, report bool) (rxthrottle.Token, error) {
	s := c.s
	if report {
		s.report(err)
	}
	switch s.policy {
	case FailOpen:
		s.admitted(c.key, c.arrived, c.n, s.clock.Since(c.arrived), false)
		return rxthrottle.Token{}, nil
	case FallbackLocal:
		tok, lerr := c.local.take(c.ctx, c.key, c.n, c.hold)
		if lerr != nil {
			s.stats.cancel()
			return rxthrottle.Token{}, lerr
		}
		w := s.clock.Since(c.arrived)
		s.admitted(c.key, c.arrived, c.n, w, w > 0)
		return tok, nil
	}
	s.stats.fail()
	return rxthrottle.Token{}, err
}

// endedErr returns ctx's error, or context.DeadlineExceeded once ctx's
// deadline has passed on the real clock (context deadlines are read there)
// though its timer has not fired yet, as on a loaded machine: such a
// caller's failed call is its deadline's, not the store's.
func endedErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		return context.DeadlineExceeded
	}
	return nil
}

// cancelled counts the caller as cancelled, and ends take with err.
func (c *taker) cancelled(err error) (rxthrottle.Token, bool, error) {
	c.s.stats.cancel()
	return rxthrottle.Token{}, true, err
}

// leave takes the caller out of the line of blocked callers, if it is in
// it.
func (c *taker) leave() {
	if c.my != nil {
		c.s.lines.leave(c.keys[0], c.my)
		c.my = nil
	}
}

// done is the end of take: the caller leaves the line and its window's
// count of waiters, and frees its place under the adaptive cap unless its
// Token has it.
func (c *taker) done() {
	c.stopWaiting()
	c.leave()
	if !c.kept {
		c.place.end(false)
	}
}
