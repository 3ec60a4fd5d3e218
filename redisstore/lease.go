package redisstore

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	front "github.com/rxthrottle/rxthrottle/internal/admission"
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
	idle    *sync.Cond                      // signalled when the worker stops (Close waits for it)
	avail   []leasedToken                   // granted and not handed out, oldest first
	waiters waiters                         // callers waiting for a lease or on the normal path, in the order they go (lease_queue.go)
	granted map[*front.Waiter][]leasedToken // the tokens handed to waiters, until their callers take them
	dated   []datedWaiter                   // waiters with a deadline, not probed yet (lease_probe.go)
	reports []*lease                        // leases with entries to report
	block   int                             // how many tokens the next lease asks for at least
	low     bool                            // the pool ran low since the last lease: ask for more
	busy    bool                            // the worker runs
	timer   *time.Timer                     // the flush timer, armed while tokens or reports are left
	took    time.Time                       // when a caller last took tokens from the pool
	called  time.Time                       // when the worker last sent a call
	due     bool                            // the reports are due: send them even without a lease
	abandon bool                            // the callers waiting go the normal path after the next call
	normal  int                             // the waiters on the normal path (lease_normal.go): the others wait behind them (take)
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

// leasedToken is token j of lease l (from 1 to its grant: the runs of a
// report name tokens so, lua/report.lua).
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
	p.waiters.p = p
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
