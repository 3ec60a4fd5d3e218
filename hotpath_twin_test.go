package rxthrottle

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/rxthrottle/rxthrottle/internal/specmodel"
	"github.com/stretchr/testify/require"
)

// TestHotPathsAgreeWithTheGeneralPath holds the written-out paths of one
// limit (acquireFree, endHold's full-ring release, takeOneLocked's full
// ring, overwriteOldest, recordSorted's and Wait's budget) to the general
// path, to the nanosecond. Twin buckets run the same random program on
// virtual time: A, Per(n, w), takes the written-out paths; B adds
// Per(1<<20, 1ns), which never binds (A's limit keeps fewer than n < 1<<20
// tokens in any 1 ns) but makes len(limits) 2 (no acquireFree, no
// takeOneLocked ring case) and maxN 1<<20, a ring that is never full here
// (no overwriteOldest, no endHold full-ring case, no recordSorted fast
// case); C is B reading the clock through the interface, so no budget
// either. Each call's return instant and error class, and Stats, must be
// the same on all, after every step; A's departures must be SPEC's
// (specmodel). Sleeps land on renewals and hold deadlines, and 1 ns either
// side, where a grant 1 ns early or a hold 1 ns late shows. The program
// runs on the real clock in a synctest bubble, and again on a clock.Mock
// (no budget: A and B only). RXTHROTTLE_TWIN_SEED replays a seed.
func TestHotPathsAgreeWithTheGeneralPath(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("RXTHROTTLE_TWIN_SEED"); s != "" {
		var err error
		seed, err = strconv.ParseUint(s, 10, 64)
		require.NoError(t, err)
	}
	t.Logf("seed %d (RXTHROTTLE_TWIN_SEED=%[1]d replays it)", seed)
	for c := range 30 {
		for _, mock := range []bool{false, true} {
			r := rand.New(rand.NewPCG(seed, uint64(c)))
			name := fmt.Sprintf("seed %d, case %d, mock %v", seed, c, mock)
			synctest.Test(t, func(t *testing.T) { newHotDriver(t, r, name, mock).run() })
		}
	}
}

// hotOutcome is how one operation ended on one twin: when it returned,
// from the program's start, and how.
type hotOutcome struct {
	Op   string
	Done bool
	At   time.Duration
	Err  string
	OK   bool // Allow's
}

type hotTwin struct {
	b    *Bucket
	mu   sync.Mutex
	rec  []hotOutcome
	toks map[int]Token // op index to the Token its Acquire returned
}

// hotOp is what the program did for one operation, for the model:
// item says the caller's arrival, cost, cancellation and hold.
type hotOp struct {
	item    specmodel.Item
	caller  bool // a Wait, Acquire or granted Allow: specmodel schedules it
	plain   bool // a context the driver cancels (not a deadline)
	ended   bool // the hold was ended by the driver
	marked  bool // its instants are in marks
	end     bool // the end of a hold
	cancels []context.CancelFunc
}

type hotDriver struct {
	t       *testing.T
	r       *rand.Rand
	name    string
	n       int
	w       time.Duration
	timeout time.Duration
	twins   []*hotTwin
	ops     []*hotOp
	marks   []time.Duration // departures, releases, hold deadlines
	since   func() time.Duration
	sleep   func(time.Duration) // moves the clock on and lets everything due run
	ctxAt   func(context.Context, time.Duration) (context.Context, context.CancelFunc)
	wg      sync.WaitGroup
	step    int
	settled bool // every operation has returned, on A
}

func newHotDriver(t *testing.T, r *rand.Rand, name string, mock bool) *hotDriver {
	const ms = time.Millisecond
	d := &hotDriver{t: t, r: r, name: name, n: 1 + r.IntN(4), w: time.Duration(1+r.IntN(5)) * ms}
	d.timeout = time.Duration(1+r.IntN(6)) * d.w / 2
	opts := []Option{WithHoldTimeout(d.timeout)}
	never := WithLimit(Per(1<<20, time.Nanosecond))
	variants := [][]Option{opts, append(opts[:1:1], never)}
	if mock {
		m := clock.NewMock()
		start := m.Now()
		d.since = func() time.Duration { return m.Since(start) }
		d.sleep = func(dt time.Duration) { synctest.Wait(); m.Add(dt); synctest.Wait() }
		// No deadlines: a Bucket reads a deadline's time left on the real
		// clock (arrivalOf), which the mock does not move.
		for i := range variants {
			variants[i] = append(variants[i], WithClock(m))
		}
	} else {
		start := time.Now()
		d.since = func() time.Duration { return time.Since(start) }
		d.sleep = func(dt time.Duration) { time.Sleep(dt); synctest.Wait() }
		d.ctxAt = func(ctx context.Context, at time.Duration) (context.Context, context.CancelFunc) {
			return context.WithDeadline(ctx, start.Add(at))
		}
		variants = append(variants, append(opts[:1:1], never, WithClock(notRealClock{clock.New()})))
	}
	for _, o := range variants {
		b, err := NewBucket(Per(d.n, d.w), o...)
		require.NoError(t, err)
		d.twins = append(d.twins, &hotTwin{b: b, toks: map[int]Token{}})
	}
	return d
}

func (d *hotDriver) run() {
	kinds := []string{"Wait", "WaitN", "Acquire", "AcquireN"}
	for d.step = range 80 {
		switch k := d.r.IntN(16); {
		case k < 4:
			d.sleep(d.gap())
		case k < 7:
			kind := kinds[d.r.IntN(len(kinds))]
			d.call(kind, map[bool]int{true: 1 + d.r.IntN(d.n), false: 1}[kind[len(kind)-1] == 'N'])
		case k == 7:
			// A burst of Waits, often on a bucket left idle, at one
			// instant or a little apart: Wait's budget hands out all but
			// the first, and the next lock records them (recordSorted).
			if d.r.IntN(2) == 0 {
				d.sleep(d.w + d.timeout)
			}
			for range 2 + d.r.IntN(d.n) {
				d.call("Wait", 1)
				d.sleep([]time.Duration{0, 0, 1, time.Duration(d.r.Int64N(int64(d.w)))}[d.r.IntN(4)])
			}
		case k == 8:
			// At the next renewal, 1 ns before it or after, Acquire and
			// Release soon (acquireFree's and endHold's written-out
			// paths, if nothing else is held), or Wait.
			d.sleep(d.toRenewal())
			if d.r.IntN(3) == 0 {
				d.call("Wait", 1)
			} else if i := d.call("Acquire", 1); d.twins[0].granted(i) {
				d.sleep([]time.Duration{0, 1, time.Duration(d.r.Int64N(int64(d.w)))}[d.r.IntN(3)])
				d.endHoldOf(i, 0, 1)
			}
		case k == 9:
			d.allow()
		case k < 12:
			d.endHold()
		case k == 12:
			d.cancelOne()
		case k == 13:
			d.sleep(d.toRenewal())
		default:
			d.compareStats()
		}
		d.compare()
	}
	d.finish()
}

// toRenewal returns how long to sleep to 1 ns before the next mark plus
// w, to it, or to 1 ns after.
func (d *hotDriver) toRenewal() time.Duration {
	now, next := d.since(), time.Duration(math.MaxInt64)
	for _, m := range d.marks {
		if at := m + d.w - 1; at > now {
			next = min(next, at)
		}
	}
	if next == math.MaxInt64 {
		return 0
	}
	return next + time.Duration(d.r.IntN(3)) - now
}

// gap returns how long to sleep: often onto a renewal (a mark plus w) or a
// hold deadline, or 1 ns either side; else 0, 1 ns, a window or two, up to
// the next multiple of w, or anything up to 2w.
func (d *hotDriver) gap() time.Duration {
	now := d.since()
	if len(d.marks) > 0 && d.r.IntN(2) == 0 {
		m := d.marks[len(d.marks)-1-d.r.IntN(min(len(d.marks), 6))]
		target := m + d.w + time.Duration(d.r.IntN(3)-1)
		if target > now {
			return target - now
		}
	}
	switch d.r.IntN(6) {
	case 0:
		return 0
	case 1:
		return time.Nanosecond
	case 2:
		return time.Duration(1+d.r.IntN(2)) * d.w
	case 3:
		return d.w - now%d.w
	}
	return time.Duration(d.r.Int64N(int64(2*d.w) + 1))
}

// call issues a Wait, WaitN, Acquire or AcquireN on each twin, on a
// goroutine, with a context that never ends, one with a deadline (1 ns to
// 3w on), or one the driver may cancel; then lets it go or block.
func (d *hotDriver) call(kind string, cost int) int {
	acquire := kind[0] == 'A'
	now := d.since()
	op := &hotOp{caller: true, item: specmodel.Item{Arrive: now, Cost: cost, Cancel: -1, Acquire: acquire}}
	if acquire {
		op.item.Hold = -1 // until the driver ends it: the hold timeout
	}
	ctxKind := d.r.IntN(3)
	if ctxKind == 1 && d.ctxAt == nil {
		ctxKind = 2
	}
	if ctxKind == 1 {
		op.item.Cancel = now + 1 + time.Duration(d.r.Int64N(int64(3*d.w)))
	}
	op.plain = ctxKind == 2
	i := d.add(op, kind)
	for _, tw := range d.twins {
		ctx, cancel := context.WithCancel(context.Background())
		if ctxKind == 1 {
			ctx, cancel = d.ctxAt(context.Background(), op.item.Cancel)
		}
		op.cancels = append(op.cancels, cancel)
		d.wg.Go(func() {
			var tok Token
			var err error
			switch kind {
			case "Wait":
				err = tw.b.Wait(ctx)
			case "WaitN":
				err = tw.b.WaitN(ctx, cost)
			case "Acquire":
				tok, err = tw.b.Acquire(ctx)
			default:
				tok, err = tw.b.AcquireN(ctx, cost)
			}
			tw.end(i, d.since(), err, false, tok)
		})
	}
	synctest.Wait()
	return i
}

func (d *hotDriver) add(op *hotOp, kind string) int {
	d.ops = append(d.ops, op)
	for _, tw := range d.twins {
		tw.mu.Lock()
		tw.rec = append(tw.rec, hotOutcome{Op: kind})
		tw.mu.Unlock()
	}
	return len(d.ops) - 1
}

// end notes that op i returned at at with err; a departure and its hold's
// deadline become marks, the instants renewals count from.
func (tw *hotTwin) end(i int, at time.Duration, err error, ok bool, tok Token) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	tw.rec[i].Done, tw.rec[i].At, tw.rec[i].Err, tw.rec[i].OK = true, at, errClass(err), ok
	if tok != (Token{}) {
		tw.toks[i] = tok
	}
}

func errClass(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrDeadline):
		return "refused at arrival"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline"
	case errors.Is(err, ErrTokenEnded):
		return "token ended"
	}
	return err.Error()
}

func (d *hotDriver) allow() {
	i := d.add(&hotOp{item: specmodel.Item{Arrive: d.since(), Cancel: -1}}, "Allow")
	for _, tw := range d.twins {
		ok, err := tw.b.Allow(context.Background())
		tw.end(i, d.since(), err, ok, Token{})
	}
	d.ops[i].caller = d.twins[0].rec[i].OK
	synctest.Wait()
}

// endHold ends a hold granted and not ended yet, if any (perhaps timed out
// already: the end is then a no-op): Release, Cancel, or ReleaseN of 0 to
// cost+1 tokens (a debt).
func (d *hotDriver) endHold() {
	var live []int
	a := d.twins[0]
	a.mu.Lock()
	for i, op := range d.ops {
		if _, ok := a.toks[i]; ok && !op.ended {
			live = append(live, i)
		}
	}
	a.mu.Unlock()
	if len(live) == 0 {
		return
	}
	j := live[d.r.IntN(len(live))]
	d.endHoldOf(j, d.r.IntN(3), d.r.IntN(d.ops[j].item.Cost+2))
}

// endHoldOf ends the hold of op j: how 0 is Release, 1 Cancel, 2
// ReleaseN(used).
func (d *hotDriver) endHoldOf(j, how, used int) {
	a, h := d.twins[0], d.ops[j]
	h.ended = true
	for (how == 1 || how == 2 && used != h.item.Cost) && d.busy(true) {
		d.sleep(time.Nanosecond) // a give-back or a debt: see busy
	}
	now := d.since()
	a.mu.Lock()
	h.item.Hold = now - a.rec[j].At
	a.mu.Unlock()
	h.item.Unused, h.item.ReleaseN, h.item.Used = how == 1, how == 2, used
	i := d.add(&hotOp{end: true}, fmt.Sprintf("end of %d (%d)", j, how))
	for _, tw := range d.twins {
		tw.mu.Lock()
		tok := tw.toks[j]
		tw.mu.Unlock()
		var err error
		switch how {
		case 0:
			tok.Release()
		case 1:
			tok.Cancel()
		default:
			err = tok.ReleaseN(used)
		}
		tw.end(i, d.since(), err, false, Token{})
	}
	d.marks = append(d.marks, now)
	synctest.Wait()
}

// busy reports whether a call arrived at the current instant or, for
// ends too, returned or had its context end then. SPEC orders an instant's
// events: the hold ends (tokens given back are free for a caller whose
// context ends then, a debt counts against a caller granted or arriving
// then), the contexts that end, the arrivals. The driver keeps that order
// by stepping 1 ns before a give-back, a debt or a cancellation that would
// break it. (A plain Release changes nothing at its instant.)
func (d *hotDriver) busy(ends bool) bool {
	now := d.since()
	a := d.twins[0]
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, op := range d.ops {
		if !op.end && (op.item.Arrive == now || ends && (op.item.Cancel == now || a.rec[i].Done && a.rec[i].At == now)) {
			return true
		}
	}
	return false
}

// cancelOne cancels the context of a call the driver may cancel.
func (d *hotDriver) cancelOne() {
	var pending []*hotOp
	for i, op := range d.ops {
		if op.plain && op.item.Cancel < 0 && !d.twins[0].done(i) {
			pending = append(pending, op)
		}
	}
	if len(pending) > 0 {
		d.cancel(pending[d.r.IntN(len(pending))])
	}
}

func (d *hotDriver) cancel(op *hotOp) {
	for d.busy(false) {
		d.sleep(time.Nanosecond)
	}
	op.item.Cancel, op.item.PlainCancel = d.since(), true
	for _, c := range op.cancels {
		c()
	}
	synctest.Wait()
}

func (tw *hotTwin) granted(i int) bool {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	_, ok := tw.toks[i]
	return ok
}

func (tw *hotTwin) done(i int) bool {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	return tw.rec[i].Done
}

// compare fails at the first operation whose outcome differs between A
// and a twin, and notes A's departures and hold deadlines as marks.
func (d *hotDriver) compare() {
	a := d.twins[0]
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, tw := range d.twins[1:] {
		tw.mu.Lock()
		for i := range a.rec {
			if a.rec[i] != tw.rec[i] {
				tw.mu.Unlock()
				d.t.Fatalf("%s, n %d, w %v, hold timeout %v, step %d: op %d differs:\nA %+v\ngeneral %+v", d.name, d.n, d.w, d.timeout, d.step, i, a.rec[i], tw.rec[i])
			}
		}
		tw.mu.Unlock()
	}
	d.settled = true
	for i, o := range a.rec {
		op := d.ops[i]
		if !o.Done {
			d.settled = false
			continue
		}
		if !op.marked && o.Err == "" && op.caller {
			// A departure, and a hold's deadline: mark+w is the deadline
			// itself, then its renewal.
			d.marks = append(d.marks, o.At)
			if op.item.Acquire {
				d.marks = append(d.marks, o.At+d.timeout-d.w, o.At+d.timeout)
			}
		}
		op.marked = true
	}
}

func (d *hotDriver) compareStats() {
	want := d.twins[0].b.Stats()
	for _, tw := range d.twins[1:] {
		require.Equal(d.t, want, tw.b.Stats(), "%s, step %d: Stats", d.name, d.step)
	}
}

// finish cancels what the driver may cancel, lets every hold time out and
// every caller go, and checks A's departures against SPEC's schedule.
func (d *hotDriver) finish() {
	for i, op := range d.ops {
		if op.plain && op.item.Cancel < 0 && !d.twins[0].done(i) {
			d.cancel(op)
		}
	}
	for range 100 {
		d.sleep(d.w + d.timeout)
		d.compare()
		if d.settled {
			break
		}
	}
	require.True(d.t, d.settled, "%s: callers still waiting", d.name)
	d.wg.Wait()
	d.compareStats()
	var items []specmodel.Item
	var got []time.Duration
	for i, op := range d.ops {
		for _, c := range op.cancels {
			c()
		}
		if op.caller {
			items = append(items, op.item)
			o := d.twins[0].rec[i]
			got = append(got, map[bool]time.Duration{true: o.At, false: -1}[o.Err == ""])
		}
	}
	cfg := specmodel.Config{Limits: []specmodel.Limit{{N: d.n, Window: d.w}}, HoldTimeout: d.timeout}
	if want := specmodel.Schedule(cfg, items); !slices.Equal(want, got) {
		for i, it := range items {
			d.t.Logf("caller %d: %+v: went at %v, by SPEC at %v", i, it, got[i], want[i])
		}

		d.t.Fatalf("%s, n %d, w %v, hold timeout %v: A's departures are not SPEC's (-1: none)", d.name, d.n, d.w, d.timeout)
	}
}
