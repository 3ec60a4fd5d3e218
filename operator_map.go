package rxthrottle

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/reactivex/rxgo/v2"

	"github.com/rxthrottle/rxthrottle/attempt"
)

// ThrottleMap returns an rxgo operator that calls fn for each item within
// limit (and every WithLimit), holding a token for each call: the rxgo way
// to call a rate-limited API with the guarantee at the server. Each item
// waits for a token, in order; fn(ctx, item) runs while the token is held
// (so as many calls run at once as there are tokens), and the token is
// released when fn returns: it renews one window after the call ended, not
// after it started (SPEC.md, "Held tokens"), so however long a request takes
// to reach the server, the server never sees more than the quota in a
// window.
//
// The outputs keep the input order: output i goes as soon as fn has
// returned for item i and output i-1 has gone. An error returned by fn (or
// a panic in fn, as a *PanicError) becomes an error item in that item's
// place, and the later items go on.
//
// fn's error also says what became of its request (SPEC.md: an error is a
// completion only when the request can no longer arrive). By default it
// may have been sent (a timeout, a reset, a context ended in flight) and
// can still reach the server, so its token stays held for the in-flight
// bound (WithInFlightBound, DefaultInFlightBound) after the error and
// renews a window after that. Wrap it with NotSent for a request never
// sent (the token is given back at once), or with Answered for one the
// server answered (released at once, as for a result). Return
// RetryAfter(d, err) when the server refused and asked to wait: the
// Limiter is paused for d and, with WithMaxAttempts(n), the item is called
// again in its place, up to n calls in all (DefaultMaxAttempts, 3, by
// default); then its output is an error item wrapping the last
// *PushbackError. Every request fn sends
// is an arrival: a client that sends one again by itself (net/http does,
// for a GET on a reused keep-alive connection that dropped) makes two
// arrivals of one token, which ThrottleMap cannot see; turn keep-alives
// off in fn's client, or send a request net/http does not replay. Error items from the source take no
// token, never reach fn, and keep their place. The output completes right
// after the last output.
//
// The hold timeout (WithHoldTimeout, DefaultHoldTimeout by default) is
// fn's deadline: fn's context ends at the hold timeout after the token was
// granted, when the Limiter ends the hold itself. A call still running
// then does not stall the stream: its item becomes an error item in its
// place, at that instant, wrapping ErrHoldTimeout and
// context.DeadlineExceeded, and the later outputs go on; what fn returns
// afterwards is discarded (its token ends as its result says, within the
// hold timeout). So set the hold timeout above the longest call you
// accept.
//
// Like Throttle, it is lazy and each Observe gets a Bucket of its own (use
// ThrottleMapWith to share a quota); it reads the options of NewBucket,
// and WithInFlightBound, WithMaxAttempts and WithRetryBudget.
// Cancelling the context given with rxgo.WithContext to Observe stops
// everything: fn's context ends at that instant, no other call starts, and
// the output closes once the calls running have returned, or at their
// deadline for a call that ignores its context (its goroutine ends when
// fn returns). If the downstream is slow, ThrottleMap takes no new token
// while 64 results (or calls not yet started) wait for it. With an
// invalid limit or option, a nil fn or a nil source, the Observable emits
// one error item.
func ThrottleMap(limit Limit, fn rxgo.Func, opts ...Option) func(rxgo.Observable) rxgo.Observable {
	return func(src rxgo.Observable) rxgo.Observable {
		return rxgo.Defer([]rxgo.Producer{func(ctx context.Context, next chan<- rxgo.Item) {
			cfg, bucketOpts, err := splitMapOptions("ThrottleMap", opts)
			var b *Bucket
			if err == nil {
				b, err = NewBucket(limit, bucketOpts...)
			}
			if err == nil && fn == nil {
				err = errors.New("rxthrottle: ThrottleMap: the function is nil")
			}
			if err != nil {
				rxgo.Error(err).SendContext(ctx, next)
				return
			}
			cfg.own = true
			runMap(ctx, "ThrottleMap", src, b, fn, cfg, next)
		}})
	}
}

// ThrottleMapWith returns an rxgo operator like ThrottleMap that takes its
// tokens from l, a Limiter shared with other pipelines and callers (a
// *Bucket, a Redis-backed bucket). If l fails (it returns an error while the
// subscription is live), the item that waited gets no call: in its place the
// output emits an error item that says which item got no token and wraps
// l's error, after the outputs of the calls already started, and then
// completes; the source is cancelled. As for ThrottleWith, this is rxgo's
// default error strategy (rxgo.StopOnError) for an operator's own failure,
// whereas fn's errors concern one item each and let the others go on.
// fn's deadline is l's hold timeout, as for ThrottleMap: a *Bucket's own,
// or that of a Limiter with a HoldTimeout() time.Duration method, else
// DefaultHoldTimeout, on the clock l's holds time out on (a Keyed's
// WithClock, for ForKey's Limiter over one; else the real clock). It
// reads WithInFlightBound, WithMaxAttempts and WithRetryBudget; the other
// options belong to the Limiter and are an error here. With a nil l or
// fn, or a nil source, the Observable emits one error item.
func ThrottleMapWith(l Limiter, fn rxgo.Func, opts ...Option) func(rxgo.Observable) rxgo.Observable {
	return func(src rxgo.Observable) rxgo.Observable {
		return rxgo.Defer([]rxgo.Producer{func(ctx context.Context, next chan<- rxgo.Item) {
			var err error
			switch b, isBucket := l.(*Bucket); {
			case isNil(l):
				err = errors.New("rxthrottle: ThrottleMapWith(nil, ...): a Limiter is required")
			case isBucket:
				err = usableBucket("ThrottleMapWith", b)
			}
			if err == nil && fn == nil {
				err = errors.New("rxthrottle: ThrottleMapWith: the function is nil")
			}
			cfg, rest, optErr := splitMapOptions("ThrottleMapWith", opts)
			if err == nil && optErr != nil {
				err = optErr
			}
			if err == nil && len(rest) > 0 {
				err = fmt.Errorf("rxthrottle: ThrottleMapWith: %s is an option of the limiter: set it on l; ThrottleMapWith reads WithInFlightBound, WithMaxAttempts and WithRetryBudget only", optionName(rest[0]))
			}
			if err != nil {
				rxgo.Error(err).SendContext(ctx, next)
				return
			}
			runMap(ctx, "ThrottleMapWith", src, l, fn, cfg, next)
		}})
	}
}

// mapBacklog is how many items may wait, as results ready to go in order
// or as calls not yet started, before ThrottleMap stops taking tokens: it
// bounds the memory a slow downstream costs.
const mapBacklog = 64

// mapper runs one ThrottleMap subscription. One goroutine, the acquirer,
// reads the source and takes a token for each item in order, and queues
// the call (a job). Worker goroutines take the jobs in order, call fn,
// release the token and record the result in the item's slot; whoever
// completes the first slot not yet sent sends it downstream, with the
// complete slots after it, so that results go in input order without a
// goroutine of their own.
//
// A job must start at once, however long the calls before it run: so
// whenever jobs are queued, at least one worker is free (not inside fn,
// and not blocked sending downstream), or has been woken or started to be.
// A worker about to enter fn while jobs are queued and no other worker is
// free wakes or starts one first. A worker that is free takes the queued
// jobs one after the other, so a run of quick calls costs no hand-over
// between goroutines, while a call that blocks never holds up the next.
type mapper struct {
	op          string
	l           Limiter
	fn          rxgo.Func
	cfg         mapConfig
	holds       attempt.Holds   // the tokens held past fn's errors
	budget      attempt.Counter // WithRetryBudget's, shared over the Limiter; nil without
	ctx         context.Context // the subscription's: fn's context's parent
	done        <-chan struct{} // ctx.Done(), nil without rxgo.WithContext
	next        chan<- rxgo.Item
	clock       clock.Clock    // the Limiter's, for fn's deadline
	realClock   bool           // clock is the real one: read as time.Since(epoch)
	epoch       time.Time      // what the deadlines count from (nowOff): a *Bucket's base, else a reading at the start
	holdTimeout time.Duration  // the Limiter's: fn's deadline after its grant
	wg          sync.WaitGroup // the acquirer, the workers not detached, expiries emitting

	mu       sync.Mutex
	slots    []*mapSlot // slots[head:] are not yet sent, in input order
	head     int
	spare    []*mapSlot // sent, for reuse
	ready    int        // how many slots from head on are complete
	emitting bool       // a goroutine is sending the leading slots
	acqDone  bool       // the acquirer has ended: no slot will be added
	closed   bool       // the output is ending: send nothing more
	finished chan struct{}
	ended    bool          // finished is closed
	roomWait bool          // the acquirer waits for the backlog to drain
	room     chan struct{} // signals it, capacity 1

	jobs    []mapJob // queued, jobs[jobHead:] not yet taken, in order
	jobHead int
	free    int        // workers neither inside fn nor blocked sending, or woken
	parked  int        // workers waiting on idle
	idle    *sync.Cond // on mu
	stop    bool       // workers end

	callBlock []mapCall  // the calls allocated and not yet made (newCallLocked)
	running   []*mapCall // running[runHead:] are the calls started, in order (some returned)
	runHead   int
	watching  bool         // the watchdog is set, for armedAt
	armedAt   int64        // no later than running[runHead]'s deadline while watching
	watch     *clock.Timer // the watchdog's, made at the first call
	lazy      bool         // l is a *Bucket: the watchdog may wait for the acquirer (operator_map_guard.go)
	acqAwake  bool         // the acquirer will call sleepLocked before it can block
	unguarded bool         // a call started while acqAwake runs without the watchdog set for it
	deferred  []uint64     // the tokens of calls that returned while acqAwake, which the acquirer releases (operator_map_guard.go)
	releasing []uint64     // the acquirer's: deferred, taken by sleepLocked, released by sleepUnlock
}

// mapSlot is one item's place in the output.
type mapSlot struct {
	item rxgo.Item // the output, once complete
	done bool
}

// mapJob is one call of fn, with its token held.
type mapJob struct {
	slot     *mapSlot
	seq      int // the item's position in the source, for errors
	v        any
	tok      Token
	deadline int64 // a clock reading after the grant + the hold timeout, as an offset (nowOff): fn's deadline
}
