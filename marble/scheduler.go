package marble

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/reactivex/rxgo/v2"
)

// Scheduler builds sources and expectations on the virtual time of one Run.
// Use it only inside the fn given to Run, from the goroutine running fn.
type Scheduler struct {
	t     *testing.T
	rep   reporter
	runAt string // where Run was called

	progress *progress // for the watchdog, outside the bubble
	frame    time.Duration
	idle     int64
	start    time.Time

	// ctx ends when Run ends; every source and subscription hangs off it,
	// so nothing the run started outlives it.
	ctx    context.Context
	cancel context.CancelFunc

	mu           sync.Mutex
	queue        actionQueue
	seq          uint64
	flushing     bool
	lastAction   time.Duration
	marbleEnd    time.Duration // the latest instant any marble reaches
	open         int           // expectations that have not ended
	expectations []*Expectation
	subExpects   []*SubscriptionExpectation
	sources      map[rxgo.Observable]*source
	hot          []*source
	collectors   int           // collecting goroutines still running
	collected    chan struct{} // closed when collectors drops to 0 after teardown
	abandon      chan struct{} // closed when teardown stops waiting for pipelines to close
	tearingDown  bool
	wake         chan struct{} // tells the driver the queue or the expectations changed
	timer        *time.Timer   // the driver's, reused across sleeps
}

// Run runs fn inside a testing/synctest bubble, where time is virtual, and
// then runs the marbles fn set up: it starts the hot sources, subscribes
// every ExpectObservable at its ^, lets virtual time pass until every
// expectation has ended and the sources have nothing left to emit (for
// an observable that never ends, until WithIdle frames after the last
// event), and reports every expectation that did not hold as a test
// error.
//
// fn only sets things up (sources, the pipeline under test, expectations);
// virtual time stays at frame 0 until fn returns. Everything the test
// observes must be created inside fn: a channel or a timer made outside
// the bubble runs on real time. When Run returns, every source has been
// cancelled and every goroutine of the bubble has ended (synctest checks
// it; a pipeline that ignores its context fails the test).
func Run(t *testing.T, fn func(*Scheduler), opts ...RunOption) {
	t.Helper()
	run(t, nil, fn, opts)
}

// run is Run reporting to rep, or to the bubble's own *testing.T if rep is
// nil.
func run(t *testing.T, rep reporter, fn func(*Scheduler), opts []RunOption) {
	t.Helper()
	runAt := location()
	cfg, err := buildRunConfig(opts)
	if err != nil {
		if rep == nil {
			rep = t
		}
		rep.Fatalf("%v", err)
		return
	}
	p := &progress{}
	done := make(chan struct{})
	watched := make(chan struct{})
	outer := rep
	if outer == nil {
		outer = t
	}
	go func() {
		defer close(watched)
		watchStall(outer, p, cfg.stall, done)
	}()
	defer func() {
		close(done)
		<-watched
	}()
	synctest.Test(t, func(t *testing.T) {
		t.Helper()
		if rep == nil {
			rep = t
		}
		s := newScheduler(rep, cfg)
		s.t, s.runAt, s.progress = t, runAt, p
		defer p.ended.Store(true)
		defer s.teardown()
		fn(s)
		s.flush()
	})
}

func newScheduler(rep reporter, cfg runConfig) *Scheduler {
	ctx, cancel := context.WithCancel(context.Background())
	return &Scheduler{
		rep:       rep,
		frame:     cfg.frame,
		idle:      cfg.idle,
		start:     time.Now(),
		ctx:       ctx,
		cancel:    cancel,
		sources:   make(map[rxgo.Observable]*source),
		collected: make(chan struct{}),
		abandon:   make(chan struct{}),
		wake:      make(chan struct{}, 1),
	}
}

// T returns the *testing.T of the synctest bubble that runs fn. Inside fn,
// stop the test with s.T().Fatal (or require.New(s.T())), not with the
// outer t: FailNow must run on the test's own goroutine, which for the
// bubble is this T's.
func (s *Scheduler) T() *testing.T { return s.t }

// Frame returns the length of one frame of virtual time.
func (s *Scheduler) Frame() time.Duration { return s.frame }

// Now returns how many whole frames of virtual time have passed since Run
// started.
func (s *Scheduler) Now() int64 { return int64(s.elapsed() / s.frame) }

// Clock returns a clock.Clock for operators that take one. Inside the
// bubble the real clock (clock.New()) reads virtual time, so this is it;
// use it rather than a clock.Mock, whose Add sleeps in real time.
func (s *Scheduler) Clock() clock.Clock { return clock.New() }

func (s *Scheduler) elapsed() time.Duration { return time.Since(s.start) }

// frames converts a frame count of a marble to virtual time.
func (s *Scheduler) frames(n int64) time.Duration { return time.Duration(n) * s.frame }

// schedule queues an action; it requires that mu is held.
func (s *Scheduler) schedule(at time.Duration, class int, seq uint64, run func()) {
	s.queue.push(&action{at: at, class: class, seq: seq, run: run})
	s.signal()
}

// nextSeq returns a fresh scheduling sequence number; it requires that mu
// is held.
func (s *Scheduler) nextSeq() uint64 {
	s.seq++
	return s.seq
}

// reach records that a marble reaches instant at; it requires that mu is
// held.
func (s *Scheduler) reach(at time.Duration) {
	if at > s.marbleEnd {
		s.marbleEnd = at
	}
}

// signal wakes the driver if it sleeps; it never blocks.
func (s *Scheduler) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// flush runs the marbles: it drives virtual time until every expectation
// has ended and the sources have nothing left to emit, then checks them.
func (s *Scheduler) flush() {
	s.rep.Helper()
	if d := s.elapsed(); d != 0 {
		s.reportAt(s.runAt, "marble: virtual time moved by %v while fn ran; fn must only set up sources and expectations (Run moves time once fn returns)", d)
	}
	s.mu.Lock()
	s.flushing = true
	for _, h := range s.hot {
		h.start()
	}
	s.mu.Unlock()
	s.drive()
	// Let the last action's effects (a cancellation reaching a source)
	// land before checking.
	synctest.Wait()
	for _, e := range s.expectations {
		e.check()
	}
	for _, e := range s.subExpects {
		e.check()
	}
}

// drive is the scheduler's loop. It sleeps (in virtual time) until the
// next action is due, then lets every goroutine woken at that instant
// settle (synctest.Wait) before it runs the due actions one at a time,
// settling after each. So at one instant the pipeline's own timers fire
// first, then expectations subscribe or unsubscribe, then sources emit in
// the order they were scheduled, each emission fully processed before the
// next: the same order on every run.
func (s *Scheduler) drive() {
	for {
		s.progress.step()
		s.mu.Lock()
		// A wake signalled before this point is stale: the peek below
		// sees what it was about (signals are sent with mu held).
		select {
		case <-s.wake:
		default:
		}
		// Done when every expectation has ended and no source has
		// anything left to emit (as rxjs flushes until its queue is
		// empty, so a late unsubscription still shows in
		// ExpectSubscriptions).
		if len(s.expectations) > 0 && s.open == 0 && s.queue.Len() == 0 {
			s.mu.Unlock()
			// The last actions' effects may not have landed: a pipeline
			// that subscribes to a source when another ends (rxgo's
			// Concat) does so on its own goroutine, and rxjs flushes
			// what that schedules too. Settle, then look again.
			synctest.Wait()
			s.mu.Lock()
			done := s.open == 0 && s.queue.Len() == 0
			s.mu.Unlock()
			if done {
				return
			}
			continue
		}
		now := s.elapsed()
		next := s.queue.peek()
		deadline := s.horizon()
		if next != nil {
			deadline = next.at
		}
		s.mu.Unlock()
		if now < deadline {
			s.sleep(deadline - now)
			continue
		}
		if next == nil {
			return // nothing scheduled and nothing happened for the idle frames
		}
		synctest.Wait()
		for {
			s.mu.Lock()
			a := s.queue.popDue(now)
			if a != nil {
				s.lastAction = now
			}
			s.mu.Unlock()
			if a == nil {
				break
			}
			a.run()
			// Settle before the next action of this instant. Before a
			// later one, sleeping settles anyway: virtual time moves
			// only once every goroutine is blocked.
			s.mu.Lock()
			more := s.queue.peek() != nil && s.queue.peek().at <= now
			s.mu.Unlock()
			if more {
				synctest.Wait()
			}
		}
	}
}

// horizon is when the driver gives up on expectations that never end; it
// requires that mu is held.
func (s *Scheduler) horizon() time.Duration {
	last := s.lastAction
	if s.marbleEnd > last {
		last = s.marbleEnd
	}
	return last + s.frames(s.idle)
}

func (s *Scheduler) sleep(d time.Duration) {
	if s.timer == nil {
		s.timer = time.NewTimer(d)
	} else {
		s.timer.Reset(d)
	}
	select {
	case <-s.timer.C:
	case <-s.wake:
		s.timer.Stop()
	}
}
