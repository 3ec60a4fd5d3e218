package redisstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rxthrottle/rxthrottle"
)

// DefaultLeaseBlock is the most tokens one lease asks for, unless
// WithLease says otherwise.
const DefaultLeaseBlock = 256

// The lease's operations of batchScript (request.how), and the key of the
// leaseholders.
const (
	opLease       = "lease"
	opReport      = "lrep"
	suffixLessees = "}:lessees" // ZSET: the processes that lease, by their latest lease request
)

// leaseAge is how long after its lease request was sent a leased token may
// still be handed out (at most half the hold timeout, so that a token
// Acquire takes keeps at least half of it): after a SetLimit, a lease
// granted under the old limits admits nobody later than this (see the
// package doc, "Leases"), and a token left that long is given back.
const leaseAge = 250 * time.Millisecond

// leaseLive is how long a process counts as a leaseholder after its
// latest lease request (lease.lua): the block is at most the smallest N
// divided by the processes that leased within it.
const leaseLive = 2 * time.Second

type leaseOption struct{ max int }

func (o leaseOption) apply(c *config) { c.lease, c.leaseMax = true, o.max }

// WithLease makes a Bucket lease tokens from the shared schedule and hand
// them to this process's callers (Wait, WaitN, Acquire, Allow, AllowN)
// without a round trip each: one script run admits a block of up to max
// tokens (0: DefaultLeaseBlock) free now, held in Redis until this process
// reports their use, on Redis's clock, in a later run, or gives them back.
// The block adapts to the demand, and is never more than the smallest N
// divided by the processes that lease. See the package doc, "Leases", for
// what it keeps and what it costs. NewBucket refuses it with WithSpacing
// or WithConcurrency (leased tokens keep neither), and with a negative
// max; NewKeyed does not take it. Call Bucket.Close to give back the
// tokens leased and not used.
func WithLease(max int) Option { return newOption("WithLease", leaseOption{max}) }

// leasePool is a Bucket's leased tokens (WithLease) and the callers of
// this process waiting for a lease. One call to Redis at a time (the
// worker, lease_worker.go) carries the reports of the tokens used or given
// back and asks for the next lease; a call that passed its bound (a client
// that ignores the deadline on the socket) goes on in the background, and
// counts as failed.
type leasePool struct {
	s      *schedule
	keys   []string // done, held, state, runs, lessees
	holder string   // this pool's member in lessees
	max    int
	every  time.Duration // the flush timer's period
	gap    int64         // µs: the longest a stamp is moved later to join a run (entryLocked)

	mu      sync.Mutex
	idle    *sync.Cond     // signalled when the worker stops (Close waits for it)
	avail   []leasedToken  // granted and not handed out, oldest first
	waiters []*leaseWaiter // callers waiting for a lease, in order
	reports []*lease       // leases with entries to report
	block   int            // how many tokens the next lease asks for at least
	low     bool           // the pool ran low since the last lease: ask for more
	busy    bool           // the worker runs
	timer   *time.Timer    // the flush timer, armed while tokens or reports are left
	took    time.Time      // when a caller last took tokens from the pool
	called  time.Time      // when the worker last sent a call
	due     bool           // the reports are due: send them even without a lease
	abandon bool           // the callers waiting go the normal path after the next call
	normal  int            // callers of Wait or Acquire on the normal path (normalDone)
	heads   int            // of them, those fallHeadLocked sent there: the others wait behind them (take)
	closed  bool
	paused  time.Time // Pause in this process: no leases before it (the limiter's clock)

	leased atomic.Uint64 // callers admitted from leases

	// trace, if set (by tests only), sees every report that Redis
	// answered: the lease's id and grant, the script's now, the entries.
	trace func(id, d, now int64, entries string)
	// used, if set (by tests only), sees every token a Wait, WaitN or
	// Allow takes from a lease, under the pool's lock, with the earliest
	// Redis's clock can be at its use (lease.earliest).
	used func(id, d int64, j int, earliest int64)
	// sending, if set (by tests only), sees every report as it is taken
	// to be sent, under the pool's lock, with the earliest Redis's clock
	// can be then: a report that Redis may run without its answer coming
	// back (trace) completes its tokens no earlier than that.
	sending func(id, d, earliest int64, entries string)
}

// lease is one lease: its admission's id, its grant on Redis's clock and
// when it was asked for on the local one.
type lease struct {
	id      int64
	d       int64      // the grant: Redis's now in the script, µs
	sent    time.Time  // the local instant the request was sent (monotonic)
	recv    time.Time  // the local instant the answer came
	handout time.Time  // the latest local instant a token may be handed out
	runs    []leaseRun // the runs of tokens not yet reported (lua/report.lua)
	queued  bool       // in the pool's reports
}

// stamp is the local instant t on Redis's clock, as an offset from the
// grant: Redis read its TIME after the request was sent, so its clock at
// t is at most d + (t - sent), plus what the two clocks' rates may differ
// by over that time: 0.1% is added (quartz is within 0.01%, and NTP slews
// a clock by at most 0.05%), and a microsecond for TIME's rounding. The
// stamp is never earlier than the truth, only later (by the time the
// request took to reach Redis).
func (l *lease) stamp(t time.Time) int64 {
	e := t.Sub(l.sent)
	return micros(e) + micros(e/1000) + 1
}

// earliest is the earliest Redis's clock can be at the local instant t:
// d + the time since the answer, less 0.1% for the clocks' rates.
func (l *lease) earliest(t time.Time) int64 {
	return l.d + int64(t.Sub(l.recv)*999/1000/time.Microsecond)
}

// leasedToken is token j of lease l (member "id" for j = 1, "id.j").
type leasedToken struct {
	l *lease
	j int
}

// leaseRun is a run of tokens j ... j+n-1 of one lease to report: used by
// u (the latest stamp of the run: one never earlier than any of its
// tokens') with x tokens of debt, or given back (u = -1). u0 is the
// earliest stamp of the run.
type leaseRun struct {
	j, n, x int
	u, u0   int64
}

// leaseWaiter is a caller waiting for a lease: when ch is closed, it has
// toks (n of them), or fallback (it takes the normal path).
type leaseWaiter struct {
	n        int
	prio     int
	ch       chan struct{}
	toks     []leasedToken
	fallback bool
	head     bool // sent to the normal path ahead of the others (fallHeadLocked)
}

// newLeasePool returns the pool of the Bucket whose keys are keys.
func newLeasePool(s *schedule, name string, keys []string, most int) *leasePool {
	if most == 0 {
		most = DefaultLeaseBlock
	}
	p := &leasePool{
		s:      s,
		keys:   append(slices.Clone(keys), keyPrefix+name+suffixLessees),
		holder: strconv.Itoa(os.Getpid()) + "-" + strconv.FormatUint(rand.Uint64(), 36),
		max:    most,
		every:  s.poll,
		gap:    max(s.lim.Load().minW()/50, 1),
		block:  1,
	}
	p.idle = sync.NewCond(&p.mu)
	return p
}

// checkLease refuses the options a lease cannot keep.
func checkLease(cfg config) error {
	switch {
	case cfg.leaseMax < 0:
		return fmt.Errorf("redisstore: WithLease(%d): max must not be negative", cfg.leaseMax)
	case cfg.spacing > 0:
		return fmt.Errorf("redisstore: WithLease with WithSpacing(%v): leased tokens go at once, they cannot keep a spacing", cfg.spacing)
	case cfg.concurrency > 0:
		return fmt.Errorf("redisstore: WithLease with WithConcurrency(%d): leased tokens do not count holds", cfg.concurrency)
	}
	return nil
}

// take admits a caller of n tokens (held: Acquire) from the pool, waiting
// for a lease if the pool is empty. served false: the caller takes the
// normal path (no lease to be had, a nil or ended context, a bad cost,
// AcquireN) and calls normalDone after it; otherwise it has its token or
// its context's error. While a caller of this process is on the normal
// path, the later ones take it too: a lease never lets them overtake it.
// So a caller sent to the normal path is counted there (normal) under the
// same lock as the decision: counted later, a caller arriving in between
// could take a leased token ahead of it.
//
// A caller that a lease could not serve while others wait behind it (the
// first waiting caller, when Redis granted fewer tokens than it needs)
// goes first: until its normal path is done (done), the pool leases
// nothing and every caller waits behind it, since it reaches Redis a
// round trip or two after its arrival and a later caller could otherwise
// get there first.
func (p *leasePool) take(ctx context.Context, n int, hold bool) (tok rxthrottle.Token, served bool, done func(), err error) {
	tok, served, head, err := p.serve(ctx, n, hold)
	switch {
	case served:
		return tok, true, nil, err
	case head:
		return tok, false, p.headDone, err
	}
	return tok, false, p.normalDone, err
}

// toNormalLocked counts a caller that take sends to the normal path.
func (p *leasePool) toNormalLocked() (rxthrottle.Token, bool, bool, error) {
	p.normal++
	return rxthrottle.Token{}, false, false, nil
}

// headDone follows the normal path of a caller that fallHeadLocked sent
// there.
func (p *leasePool) headDone() {
	p.mu.Lock()
	p.heads--
	p.normalDoneLocked()
	p.mu.Unlock()
}

// normalDone follows the normal path of a caller that take did not serve.
func (p *leasePool) normalDone() {
	p.mu.Lock()
	p.normalDoneLocked()
	p.mu.Unlock()
}

// normalDoneLocked counts a caller off the normal path; the last one lets
// the callers waiting behind it lease again (wantLocked).
func (p *leasePool) normalDoneLocked() {
	p.normal--
	if p.normal == 0 && len(p.waiters) > 0 {
		p.kickLocked()
	}
}

// serve is take, but for the count of the callers on the normal path.
func (p *leasePool) serve(ctx context.Context, n int, hold bool) (tok rxthrottle.Token, served, head bool, err error) {
	s := p.s
	if ctx == nil || ctx.Err() != nil || s.lim.Load().checkCost("", n) != nil {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.toNormalLocked()
	}
	if hold && n > 1 {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.flushLocked()
		return p.toNormalLocked()
	}
	arrived := s.clock.Now()
	p.mu.Lock()
	// While callers of this process are on the normal path, a new one
	// follows them there, unless some wait here behind them: then it waits
	// behind those.
	if !p.usableLocked() || (p.normal > 0 && p.heads == 0 && len(p.waiters) == 0) {
		defer p.mu.Unlock()
		return p.toNormalLocked()
	}
	if len(p.waiters) == 0 && p.heads == 0 {
		if toks := p.popLocked(n, time.Now()); toks != nil {
			tok = p.useLocked(toks, hold, time.Now())
			p.mu.Unlock()
			s.admitted("", arrived, n, s.clock.Since(arrived), false)
			return tok, true, false, nil
		}
	}
	// WithMaxQueue: a caller that waits behind a head (see take) waits for
	// a token; the callers waiting here count, with those of this process
	// waiting on the normal path, and past the bound it is refused. (One
	// that waits only for a lease in flight goes as the lease allows.)
	if q := s.queueBound; q >= 0 && p.heads > 0 && int64(len(p.waiters))+s.waiters.Load() >= int64(q) {
		p.mu.Unlock()
		s.stats.refuse()
		return rxthrottle.Token{}, true, false, queueFullError(takeOp(n, hold), q)
	}
	w := &leaseWaiter{n: n, prio: rxthrottle.PriorityFrom(ctx), ch: make(chan struct{})}
	i := len(p.waiters)
	for i > 0 && p.waiters[i-1].prio < w.prio {
		i--
	}
	p.waiters = slices.Insert(p.waiters, i, w)
	p.low = true
	p.kickLocked()
	p.mu.Unlock()

	s.stats.enter()
	defer s.stats.leave()
	select {
	case <-w.ch:
	case <-ctx.Done():
		p.mu.Lock()
		if i := slices.Index(p.waiters, w); i >= 0 {
			p.waiters = slices.Delete(p.waiters, i, i+1)
		} else if len(w.toks) > 0 {
			p.avail = append(w.toks, p.avail...) // handed over meanwhile: nothing is lost
			p.armLocked()
		} else if w.fallback {
			if w.head { // sent to the normal path meanwhile, and not going
				p.heads--
			}
			p.normalDoneLocked()
		}
		p.mu.Unlock()
		s.stats.cancel()
		return rxthrottle.Token{}, true, false, ctx.Err()
	}
	if w.fallback {
		return rxthrottle.Token{}, false, w.head, nil // counted by fallBackLocked or fallHeadLocked
	}
	p.mu.Lock()
	now := time.Now()
	if now.After(w.toks[0].l.handout) || now.After(w.toks[len(w.toks)-1].l.handout) {
		defer p.mu.Unlock()
		p.giveBackLocked(w.toks)
		return p.toNormalLocked()
	}
	tok = p.useLocked(w.toks, hold, now)
	p.mu.Unlock()
	s.admitted("", arrived, n, s.clock.Since(arrived), false)
	return tok, true, false, nil
}

// allow admits a caller of Allow of n tokens from the pool if it has them
// now; otherwise (served false) the caller takes the normal path, and the
// pool asks for a lease for the next callers.
func (p *leasePool) allow(ctx context.Context, n int) (served bool) {
	s := p.s
	if ctx == nil || ctx.Err() != nil || s.lim.Load().checkCost("", n) != nil {
		return false
	}
	p.mu.Lock()
	if !p.usableLocked() || len(p.waiters) > 0 {
		p.mu.Unlock()
		return false
	}
	toks := p.popLocked(n, time.Now())
	if toks == nil {
		// No lease for Allow: one in flight would take the token it
		// could have had.
		p.mu.Unlock()
		return false
	}
	p.useLocked(toks, false, time.Now())
	p.mu.Unlock()
	s.admitted("", time.Time{}, n, 0, false)
	return true
}

// usableLocked reports whether callers may be served from leases now.
func (p *leasePool) usableLocked() bool {
	return !p.closed && (p.paused.IsZero() || !p.s.clock.Now().Before(p.paused))
}

// popLocked takes n tokens from the pool, or none (nil) if it has fewer
// that may still be handed out at now; tokens past their handout are
// given back.
func (p *leasePool) popLocked(n int, now time.Time) []leasedToken {
	k := 0
	for k < len(p.avail) && now.After(p.avail[k].l.handout) {
		k++
	}
	if k > 0 {
		p.giveBackLocked(p.avail[:k])
		p.avail = slices.Delete(p.avail, 0, k)
	}
	if len(p.avail) < n {
		return nil
	}
	toks := slices.Clone(p.avail[:n])
	p.avail = slices.Delete(p.avail, 0, n)
	if len(p.avail) <= p.block/2 {
		p.low = true
		p.kickLocked() // the next lease before the pool runs dry
	}
	return toks
}

// useLocked records the use of toks at now (a Wait's), or returns the
// Token of a caller of Acquire (one token) that records it at its release.
func (p *leasePool) useLocked(toks []leasedToken, hold bool, now time.Time) rxthrottle.Token {
	p.took = now
	p.leased.Add(1)
	if hold {
		return newLeaseToken(p, toks[0])
	}
	for _, t := range toks {
		p.entryLocked(t, t.l.stamp(now), 0)
		if p.used != nil {
			p.used(t.l.id, t.l.d, t.j, t.l.earliest(now))
		}
	}
	return rxthrottle.Token{}
}

// giveBackLocked reports toks as given back unused.
func (p *leasePool) giveBackLocked(toks []leasedToken) {
	for _, t := range toks {
		p.entryLocked(t, -1, 0)
	}
}

// entryLocked adds token t to its lease's report: used at offset u from
// the grant with x tokens of debt, or given back (u = -1). A token next to
// the last run, and used within the pool's gap of that run's first stamp
// (or given back with it), joins the run: the run completes at its latest
// stamp, never earlier than any of its tokens, so the window only gets
// stricter, by at most the gap, and Redis has fewer members to read.
func (p *leasePool) entryLocked(t leasedToken, u int64, x int) {
	l := t.l
	if k := len(l.runs) - 1; k >= 0 {
		r := &l.runs[k]
		if r.j+r.n == t.j && x == 0 && r.x == 0 && (u < 0) == (r.u < 0) && (u < 0 || u-r.u0 <= p.gap) {
			r.n++
			r.u = max(r.u, u)
			r.u0 = min(r.u0, u)
			return
		}
	}
	l.runs = append(l.runs, leaseRun{j: t.j, n: 1, x: x, u: u, u0: u})
	if !l.queued {
		l.queued = true
		p.reports = append(p.reports, l)
	}
	p.armLocked()
}

// pause makes this process's callers take the normal path (which waits
// for the pause) until until, and gives the tokens in the pool back.
func (p *leasePool) pause(until time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if until.After(p.paused) {
		p.paused = until
	}
	p.giveBackLocked(p.avail)
	p.avail = nil
	p.fallBackLocked()
	p.kickLocked()
}

// fallHeadLocked sends the first waiting caller to the normal path,
// counted there at once (see take).
func (p *leasePool) fallHeadLocked() {
	if len(p.waiters) == 0 {
		return
	}
	w := p.waiters[0]
	p.waiters = p.waiters[1:]
	w.fallback, w.head = true, true
	p.normal++
	p.heads++
	close(w.ch)
}

// fallBackLocked sends every waiting caller to the normal path, counted
// there at once (see take).
func (p *leasePool) fallBackLocked() {
	for _, w := range p.waiters {
		w.fallback = true
		p.normal++
		close(w.ch)
	}
	p.waiters = nil
}

// takeOp names the method of a caller of n tokens (held: Acquire), for
// errors.
func takeOp(n int, hold bool) string {
	switch {
	case hold && n > 1:
		return "AcquireN"
	case hold:
		return "Acquire"
	case n > 1:
		return "WaitN"
	}
	return "Wait"
}
