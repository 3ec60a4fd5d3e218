package rxthrottle

import (
	"context"
	"fmt"
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
// limit (acquireFree, endHold's full-ring release, takeOneLocked's ring
// case, overwriteOldest, Wait's budget and recordSorted's ring case) to the
// general path, to the nanosecond. Twins run one random program on virtual
// time: A, Per(n, w), takes the written-out paths; B adds Per(1<<20, 1ns),
// which never binds (A's limit lets fewer than n < 1<<20 tokens into any
// 1 ns) but makes len(limits) 2 (no acquireFree, no ring case in
// takeOneLocked) and maxN 1<<20, a ring never full here (no
// overwriteOldest, no endHold or recordSorted ring case); C is B read
// through the clock interface (no budget either). Every call's return
// instant and error class must be the same on all after every step, and
// Stats too; A's departures must be SPEC's (specmodel). The program sleeps
// onto renewals and hold deadlines and 1 ns either side, where a grant
// 1 ns early or a hold 1 ns late shows. It runs on the real clock in a
// synctest bubble, and on a clock.Mock (no budget: A and B only).
// RXTHROTTLE_TWIN_SEED replays a seed.
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

// hotOutcome is how an operation ended on one twin: when it returned (from
// the start) and how.
type hotOutcome struct {
	Op   string
	Done bool
	At   time.Duration
	Err  string
	OK   bool // Allow's
}

// hotOp is an operation of the program; item is the caller for specmodel.
type hotOp struct {
	item    specmodel.Item
	caller  bool // a Wait, Acquire or granted Allow: a caller of the model
	plain   bool // its context is one the driver cancels
	ended   bool // its hold ended by the driver's call
	marked  bool // its instants are in marks
	end     bool // an end of a hold, no caller
	cancels []context.CancelFunc
}

type hotDriver struct {
	t          *testing.T
	r          *rand.Rand
	name       string
	n          int
	w, timeout time.Duration
	buckets    []*Bucket // A, B (and C)
	mu         sync.Mutex
	recs       [][]hotOutcome  // per bucket, per op
	toks       []map[int]Token // per bucket: op to the Token it holds
	ops        []*hotOp
	marks      []time.Duration // completions and hold deadlines: renewals are w on
	since      func() time.Duration
	sleep      func(time.Duration) // moves the clock on and lets all that is due run
	ctxAt      func(context.Context, time.Duration) (context.Context, context.CancelFunc)
	wg         sync.WaitGroup
	step       int
	settled    bool // every operation returned, on A
}

func newHotDriver(t *testing.T, r *rand.Rand, name string, mock bool) *hotDriver {
	d := &hotDriver{t: t, r: r, name: name, n: 1 + r.IntN(4), w: time.Duration(1+r.IntN(5)) * time.Millisecond}
	d.timeout = time.Duration(1+r.IntN(6)) * d.w / 2
	hold, never := WithHoldTimeout(d.timeout), WithLimit(Per(1<<20, time.Nanosecond))
	variants := [][]Option{{hold}, {hold, never}}
	if mock {
		m := clock.NewMock()
		start := m.Now()
		d.since = func() time.Duration { return m.Since(start) }
		d.sleep = func(dt time.Duration) { synctest.Wait(); m.Add(dt); synctest.Wait() }
		// No deadlines (ctxAt nil): a Bucket reads a deadline's time left
		// on the real clock (arrivalOf), which the mock does not move.
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
		variants = append(variants, []Option{hold, never, WithClock(notRealClock{clock.New()})})
	}
	for _, o := range variants {
		b, err := NewBucket(Per(d.n, d.w), o...)
		require.NoError(t, err)
		d.buckets, d.recs, d.toks = append(d.buckets, b), append(d.recs, nil), append(d.toks, map[int]Token{})
	}
	return d
}

func (d *hotDriver) run() {
	kinds := []string{"Wait", "WaitN", "Acquire", "AcquireN"}
	for d.step = range 80 {
		switch k := d.r.IntN(16); {
		case k < 3:
			d.sleep(d.gap())
		case k < 5:
			d.sleep(d.toRenewal())
		case k < 8:
			kind := kinds[d.r.IntN(len(kinds))]
			d.call(kind, map[bool]int{true: 1 + d.r.IntN(d.n), false: 1}[kind[len(kind)-1] == 'N'])
		case k == 8 || k == 14:
			// Waits, often on a bucket left idle, at one instant or a
			// little apart: the budget hands out all but the first, and
			// the next lock records them (recordSorted).
			if d.r.IntN(2) == 0 {
				d.sleep(d.w + d.timeout)
			}
			for range 2 + d.r.IntN(d.n) {
				d.call("Wait", 1)
				d.sleep([]time.Duration{0, 0, 1, time.Duration(d.r.Int64N(int64(d.w)))}[d.r.IntN(4)])
			}
		case k == 9:
			// At the next renewal or 1 ns off, a Wait, or an Acquire
			// released soon (acquireFree, endHold's written-out end).
			d.sleep(d.toRenewal())
			if d.r.IntN(3) == 0 {
				d.call("Wait", 1)
			} else if i := d.call("Acquire", 1); d.granted(i) {
				d.sleep([]time.Duration{0, 1, time.Duration(d.r.Int64N(int64(d.w)))}[d.r.IntN(3)])
				d.endHold(i, 0, 1)
			}
		case k == 10:
			d.allow()
		case k < 13:
			if i, ok := d.pick(func(i int, op *hotOp) bool { return op.item.Acquire && !op.ended && d.granted(i) }); ok {
				d.endHold(i, d.r.IntN(3), d.r.IntN(d.ops[i].item.Cost+2))
			}
		case k == 13:
			if i, ok := d.pick(d.cancellable); ok {
				d.cancel(d.ops[i])
			}
		default:
			d.compareStats()
		}
		d.compare()
	}
	d.finish()
}

// compare fails at the first operation whose outcome on a twin is not A's,
// and marks A's new departures and hold deadlines.
func (d *hotDriver) compare() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for k := range d.buckets[1:] {
		for i, o := range d.recs[0] {
			if o != d.recs[k+1][i] {
				d.t.Fatalf("%s, n %d, w %v, hold timeout %v, step %d: op %d differs:\nA %+v\ntwin %d %+v",
					d.name, d.n, d.w, d.timeout, d.step, i, o, k+1, d.recs[k+1][i])
			}
		}
	}
	d.settled = true
	for i, o := range d.recs[0] {
		op := d.ops[i]
		d.settled = d.settled && o.Done
		if o.Done && !op.marked && o.Err == "" && op.caller {
			d.marks = append(d.marks, o.At) // a Wait's completion, or a hold's start
			if op.item.Acquire {
				d.marks = append(d.marks, o.At+d.timeout-d.w, o.At+d.timeout) // the deadline, its renewal
			}
		}
		op.marked = op.marked || o.Done
	}
}

func (d *hotDriver) compareStats() {
	for _, b := range d.buckets[1:] {
		require.Equal(d.t, d.buckets[0].Stats(), b.Stats(), "%s, step %d: Stats", d.name, d.step)
	}
}

// finish cancels what the driver may cancel, lets every hold time out and
// every caller go, and holds A's departures to SPEC's schedule.
func (d *hotDriver) finish() {
	for i, op := range d.ops {
		if d.cancellable(i, op) {
			d.cancel(op)
		}
	}
	for range 100 {
		d.sleep(d.w + d.timeout)
		if d.compare(); d.settled {
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
		if o := d.recs[0][i]; op.caller {
			items = append(items, op.item)
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
