package marble

import (
	"context"
	"time"

	"github.com/reactivex/rxgo/v2"
)

// Expectation is an observable under test, subscribed by ExpectObservable;
// ToBe says what it must emit.
type Expectation struct {
	s      *Scheduler
	obs    rxgo.Observable
	caller string
	sub    time.Duration // instant of subscription
	unsub  time.Duration // instant of unsubscription, or -1
	api    string        // "ExpectObservable" or "ExpectChan"..., for messages

	// read, if set, stands for Observe and collect: it reads a channel
	// from the subscription frame until ctx ends, reporting through add
	// and finish (ExpectChan, chan_expect.go).
	read func(ctx context.Context)

	// The fields below require that s.mu is held.
	cancel       context.CancelFunc
	records      []record
	ended        bool // the observable closed, or ! unsubscribed it
	unsubscribed bool
	closed       bool // the observed channel closed
	lastWasError bool // the last notification recorded is an error

	// Set by ToBe, on fn's goroutine, before the driver runs.
	toBe   bool
	toBeAt string // where ToBe was called: failures are reported there
	want   []wantEvent
	values map[string]any
	bad    bool // ToBe's marble was malformed (already reported)
}

// record is one notification the observed pipeline emitted.
type record struct {
	at    time.Duration // since the start of Run
	kind  Kind
	value any // the value of a Next, the error of an Error
}

// wantEvent is one notification ToBe expects.
type wantEvent struct {
	at     time.Duration // since the start of Run
	kind   Kind
	symbol rune
	value  any
}

// ExpectObservable subscribes to obs when Run moves time, and records what
// it emits, with the virtual time of each notification; ToBe says what it
// must be. An optional subscription marble says when to subscribe (its ^,
// frame 0 if absent) and when to unsubscribe (its !, never if absent):
// "--^---!" subscribes at frame 2 and cancels the subscription's context
// at frame 6. The subscription passes rxgo.WithContext down, which rxgo
// propagates to the sources, so ! cancels the whole pipeline.
//
// Frames count from the start of Run, for the subscription marble and for
// ToBe's marble alike, so the two align one above the other.
func (s *Scheduler) ExpectObservable(obs rxgo.Observable, subscription ...string) *Expectation {
	s.rep.Helper()
	e := &Expectation{s: s, obs: obs, caller: location(), unsub: -1, api: "ExpectObservable"}
	if obs == nil {
		s.rep.Errorf("marble: ExpectObservable(nil)")
		e.bad = true
		return e
	}
	s.expect(e, subscription)
	return e
}

// expect registers e, with its optional subscription marble.
func (s *Scheduler) expect(e *Expectation, subscription []string) {
	s.rep.Helper()
	if len(subscription) > 1 {
		s.rep.Errorf("marble: %s takes at most one subscription marble, got %d", e.api, len(subscription))
		e.bad = true
		return
	}
	if len(subscription) == 1 {
		tl, err := s.parseSubscription(subscription[0])
		if err != nil {
			s.rep.Errorf("%v", err)
			e.bad = true
			return
		}
		if at, ok := tl.subscribeAt(s.frame); ok {
			e.sub = at
		}
		if at, ok := tl.unsubscribeAt(s.frame); ok {
			e.unsub = at
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.flushing {
		s.rep.Errorf("marble: %s after fn returned; call it inside fn", e.api)
		e.bad = true
		return
	}
	s.expectations = append(s.expectations, e)
	s.open++
	s.schedule(e.sub, classSubscription, s.nextSeq(), e.subscribe)
	if e.unsub >= 0 {
		s.schedule(e.unsub, classSubscription, s.nextSeq(), e.unsubscribe)
	}
}

// subscribe runs on the driver at the subscription frame.
func (e *Expectation) subscribe() {
	s := e.s
	ctx, cancel := context.WithCancel(s.ctx)
	s.mu.Lock()
	e.cancel = cancel
	s.mu.Unlock()
	s.collectorStarted()
	if e.read != nil {
		go func() {
			defer s.collectorDone()
			e.read(ctx)
		}()
		return
	}
	go e.collect(e.obs.Observe(rxgo.WithContext(ctx)))
}

// collect records every notification until the pipeline closes its
// channel. After ! it keeps reading (and drops what it reads), so that a
// pipeline that sends without watching its context can still finish.
func (e *Expectation) collect(ch <-chan rxgo.Item) {
	defer e.s.collectorDone()
	for {
		var item rxgo.Item
		var ok bool
		select {
		case item, ok = <-ch:
		case <-e.s.abandon:
			return
		}
		if !ok {
			break
		}
		e.add(item.V, item.E)
	}
	e.finish()
}

// add records a value, or an error if err is not nil, at the current
// instant, unless ! has unsubscribed.
func (e *Expectation) add(v any, err error) {
	s := e.s
	if obs, ok := v.(rxgo.Observable); ok && err == nil {
		v = s.materialize(obs)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e.unsubscribed {
		return
	}
	r := record{at: s.elapsed(), kind: Next, value: v}
	if err != nil {
		r.kind, r.value = Error, err
	}
	e.records = append(e.records, r)
	e.lastWasError = err != nil
}

// finish records that the observed channel closed.
func (e *Expectation) finish() {
	s := e.s
	s.mu.Lock()
	defer s.mu.Unlock()
	// A closed channel is the completion, unless it closes after an
	// error: rxgo ends a stream that errs by closing it too.
	if !e.unsubscribed && !e.lastWasError {
		e.records = append(e.records, record{at: s.elapsed(), kind: Complete})
	}
	e.closed = true
	e.end()
}

// unsubscribe runs on the driver at the ! of the subscription marble.
func (e *Expectation) unsubscribe() {
	s := e.s
	s.mu.Lock()
	e.unsubscribed = true
	e.end()
	cancel := e.cancel
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// end marks the expectation over; it requires that s.mu is held.
func (e *Expectation) end() {
	if e.ended {
		return
	}
	e.ended = true
	e.s.open--
	e.s.signal()
}

// ToBe says what the observable must emit: marble is read from frame 0,
// the start of Run (or from its ^, if it has one, to allow leading
// alignment), with values and # read as by Cold. The comparison happens
// once Run has moved time: every notification must match in instant, kind
// and value (reflect.DeepEqual for values, errors.Is for errors), and a
// mismatch fails the test with both timelines drawn one above the other.
func (e *Expectation) ToBe(marble string, values map[string]any, opts ...MarbleOption) {
	s := e.s
	s.rep.Helper()
	if e.toBe {
		s.rep.Errorf("marble: ToBe called twice on one %s", e.api)
		return
	}
	e.toBe, e.toBeAt = true, location()
	if e.bad {
		return
	}
	values = s.expectedValues(values)
	want, end, err := s.parseExpected(e.api, marble, values, opts)
	if err != nil {
		s.rep.Errorf("%v", err)
		e.bad = true
		return
	}
	e.want, e.values = want, values
	s.mu.Lock()
	s.reach(end)
	s.mu.Unlock()
}

// check compares what was recorded with ToBe's marble.
func (e *Expectation) check() {
	s := e.s
	s.rep.Helper()
	if e.bad {
		return
	}
	if !e.toBe {
		s.reportAt(e.caller, "marble: %s without ToBe", e.api)
		return
	}
	s.mu.Lock()
	got := append([]record(nil), e.records...)
	for i, r := range got {
		if inner, ok := r.value.(*innerRecorder); ok {
			got[i].value = inner.timeline()
		}
	}
	s.mu.Unlock()
	if msg := diffTimelines(e.want, got, e.values, s.frame); msg != "" {
		if hint := e.outsideHint(got); hint != "" {
			msg += "\n" + hint
		}
		s.reportAt(e.toBeAt, "marble: %s", msg)
	}
}
