package rxthrottle

import (
	"context"
	"fmt"
	"math"
	"testing/synctest"
	"time"

	"github.com/rxthrottle/rxthrottle/internal/specmodel"
)

// The operations of TestHotPathsAgreeWithTheGeneralPath's program
// (hotpath_twin_test.go), each issued on every twin at one instant, and
// the choice of sleeps that land on renewals.

// pick returns a random op for which f holds, if any.
func (d *hotDriver) pick(f func(i int, op *hotOp) bool) (int, bool) {
	var is []int
	for i, op := range d.ops {
		if f(i, op) {
			is = append(is, i)
		}
	}
	if len(is) == 0 {
		return 0, false
	}
	return is[d.r.IntN(len(is))], true
}

// cancellable reports whether op i waits with a context the driver cancels.
func (d *hotDriver) cancellable(i int, op *hotOp) bool {
	return op.plain && op.item.Cancel < 0 && !d.outcome(0, i).Done
}

// toRenewal returns how long to sleep to the next mark plus w, to 1 ns
// before it or to 1 ns after.
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

// gap returns how long to sleep: 0, 1 ns, one window or two, to the next
// multiple of w, or anything up to 2w.
func (d *hotDriver) gap() time.Duration {
	return []time.Duration{0, 1, time.Duration(1+d.r.IntN(2)) * d.w, d.w - d.since()%d.w, time.Duration(d.r.Int64N(int64(2*d.w) + 1))}[d.r.IntN(5)]
}

// call issues kind on each bucket on a goroutine of its own, with a context
// that never ends, one with a deadline 1 ns to 3w on, or one the driver
// may cancel; then lets it go or block.
func (d *hotDriver) call(kind string, cost int) int {
	now, acquire, ctxKind := d.since(), kind[0] == 'A', d.r.IntN(3)
	op := &hotOp{caller: true, plain: ctxKind == 2 || ctxKind == 1 && d.ctxAt == nil,
		item: specmodel.Item{Arrive: now, Cost: cost, Cancel: -1, Acquire: acquire}}
	if acquire {
		op.item.Hold = -1 // until the driver ends it, or the hold timeout
	}
	if ctxKind == 1 && !op.plain {
		op.item.Cancel = now + 1 + time.Duration(d.r.Int64N(int64(3*d.w)))
	}
	i := d.add(op, kind)
	for k, b := range d.buckets {
		ctx, cancel := context.WithCancel(context.Background())
		if op.item.Cancel >= 0 {
			ctx, cancel = d.ctxAt(context.Background(), op.item.Cancel)
		}
		op.cancels = append(op.cancels, cancel)
		d.wg.Go(func() {
			var tok Token
			var err error
			switch kind {
			case "Wait":
				err = b.Wait(ctx)
			case "WaitN":
				err = b.WaitN(ctx, cost)
			case "Acquire":
				tok, err = b.Acquire(ctx)
			default:
				tok, err = b.AcquireN(ctx, cost)
			}
			d.note(k, i, err, false, tok)
		})
	}
	synctest.Wait()
	return i
}

func (d *hotDriver) add(op *hotOp, kind string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.ops = append(d.ops, op)
	for k := range d.recs {
		d.recs[k] = append(d.recs[k], hotOutcome{Op: kind})
	}
	return len(d.ops) - 1
}

// note records that op i returned now on bucket k. An error is compared
// whole: its words (the wait it saw, the earliest departure) must agree.
func (d *hotDriver) note(k, i int, err error, ok bool, tok Token) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.recs[k][i] = hotOutcome{Op: d.recs[k][i].Op, Done: true, At: d.since(), OK: ok}
	if err != nil {
		d.recs[k][i].Err = err.Error()
	}
	if tok != (Token{}) {
		d.toks[k][i] = tok
	}
}

func (d *hotDriver) outcome(k, i int) hotOutcome {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.recs[k][i]
}

// granted reports whether op i returned on A without an error.
func (d *hotDriver) granted(i int) bool {
	o := d.outcome(0, i)
	return o.Done && o.Err == ""
}

func (d *hotDriver) allow() {
	i := d.add(&hotOp{item: specmodel.Item{Arrive: d.since(), Cancel: -1}}, "Allow")
	for k, b := range d.buckets {
		ok, err := b.Allow(context.Background())
		d.note(k, i, err, ok, Token{})
	}
	d.ops[i].caller = d.outcome(0, i).OK // a Wait that went at once, for the model
	synctest.Wait()
}

// endHold ends op j's hold (perhaps timed out already: a no-op then): how
// 0 is Release, 1 Cancel, 2 ReleaseN(used), used up to cost+1 (a debt).
func (d *hotDriver) endHold(j, how, used int) {
	h := d.ops[j]
	h.ended = true
	for (how == 1 || how == 2 && used != h.item.Cost) && d.busy(true) {
		d.sleep(time.Nanosecond) // a give-back or a debt: see busy
	}
	h.item.Hold = d.since() - d.outcome(0, j).At
	h.item.Unused, h.item.ReleaseN, h.item.Used = how == 1, how == 2, used
	i := d.add(&hotOp{end: true}, fmt.Sprintf("end of %d (%d)", j, how))
	for k := range d.buckets {
		d.mu.Lock()
		tok := d.toks[k][j]
		d.mu.Unlock()
		var err error
		switch how {
		case 0:
			tok.Release()
		case 1:
			tok.Cancel()
		default:
			err = tok.ReleaseN(used)
		}
		d.note(k, i, err, false, Token{})
	}
	d.marks = append(d.marks, d.since())
	synctest.Wait()
}

// busy reports whether a call arrived at the current instant or, for ends
// too, returned or had its context end then. SPEC orders an instant's
// events: hold ends (tokens given back are free for a caller whose context
// ends then, a debt counts against a caller granted or arriving then),
// contexts ending, arrivals. The driver keeps that order by stepping 1 ns
// before a give-back, a debt or a cancellation that would break it. (A
// plain Release changes nothing at its instant.)
func (d *hotDriver) busy(ends bool) bool {
	now := d.since()
	for i, op := range d.ops {
		o := d.outcome(0, i)
		if !op.end && (op.item.Arrive == now || ends && (op.item.Cancel == now || o.Done && o.At == now)) {
			return true
		}
	}
	return false
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
