package marble

import (
	"context"
	"fmt"
	"time"

	"github.com/reactivex/rxgo/v2"
)

// source is the state behind an observable made by Cold or Hot.
type source struct {
	s      *Scheduler
	hot    bool
	caller string
	seq    uint64        // creation order: the tie-break for a hot source's emissions
	events []sourceEvent // cold: frames after the subscription; hot: frames after ^

	// The fields below require that s.mu is held.
	subs   []*subscription // hot: the current subscribers
	ended  bool            // hot: its | or # has been emitted
	ending sourceEvent     // hot: that | or #
	log    []subscriptionRecord
}

// sourceEvent is one notification of a source marble.
type sourceEvent struct {
	frame int64
	kind  Kind
	item  rxgo.Item
}

// subscriptionRecord is one subscription to a source, for
// ExpectSubscriptions.
type subscriptionRecord struct {
	subscribed   time.Duration
	unsubscribed time.Duration // valid if ended
	ended        bool
}

// subscription is one Observe of a source. The driver appends the due
// events to pending at their exact instants; the producer goroutine
// forwards them downstream at its own pace. So a slow downstream (a
// throttle holding items back) never delays later source events: they are
// already in pending, stamped with their own time.
type subscription struct {
	src        *source
	record     int // index in src.log
	signal     chan struct{}
	subscribed time.Duration
	seq        uint64 // tie-break of its emissions; see subscribe

	ctx  context.Context  // the subscriber's
	next chan<- rxgo.Item // the subscriber's channel

	// The fields below require that s.mu is held.
	pending []pendingEvent
	active  bool
	busy    bool // the producer is forwarding a batch
}

type pendingEvent struct {
	sourceEvent
	at time.Duration
}

// Cold returns an observable that plays marble anew for each subscriber,
// from the instant it subscribes: frame 0 of the marble is the moment of
// Observe. values maps each letter or digit of the marble to the value it
// stands for; with a nil map, each stands for itself as a one-character
// string ("a", "1"). # stands for ErrMarble unless WithError says
// otherwise. A cold marble cannot hold ^ or !.
//
// A malformed marble fails the test (Fatalf) with the column at fault.
func (s *Scheduler) Cold(marble string, values map[string]any, opts ...MarbleOption) rxgo.Observable {
	s.rep.Helper()
	return s.newSource(marble, values, opts, false)
}

// Hot returns an observable whose marble plays once, on the run's clock,
// whoever listens: frame 0 is the ^ of the marble (or its first column if
// there is no ^), which is the start of Run. A subscriber gets only the
// events from the instant it subscribes on (events before ^ happened
// before the test and nobody sees them); one that subscribes after the
// marble's | or # gets that | or # at once. values and # are read as by
// Cold. A hot marble cannot hold !.
func (s *Scheduler) Hot(marble string, values map[string]any, opts ...MarbleOption) rxgo.Observable {
	s.rep.Helper()
	return s.newSource(marble, values, opts, true)
}

func (s *Scheduler) newSource(marble string, values map[string]any, opts []MarbleOption, hot bool) rxgo.Observable {
	s.rep.Helper()
	src, err := s.buildSource(marble, values, opts, hot)
	if err != nil {
		s.rep.Fatalf("%v", err)
		return rxgo.Thrown(err)
	}
	// Defer runs the producer once per Observe, on a goroutine of the
	// subscriber (inside the bubble); WithContext(s.ctx) ends it with Run
	// if no subscriber context ends it first.
	obs := rxgo.Defer([]rxgo.Producer{src.produce}, rxgo.WithContext(s.ctx))
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.flushing {
		s.rep.Errorf("marble: %s: source created after fn returned; create sources inside fn", src.caller)
	}
	src.seq = s.nextSeq()
	s.sources[obs] = src
	if hot {
		s.hot = append(s.hot, src)
	}
	return obs
}

func (s *Scheduler) buildSource(marble string, values map[string]any, opts []MarbleOption, hot bool) (*source, error) {
	cfg, err := buildMarbleConfig(opts)
	if err != nil {
		return nil, err
	}
	tl, cols, err := parse(marble, s.frame)
	if err != nil {
		return nil, err
	}
	kind := "a cold"
	if hot {
		kind = "a hot"
	}
	if tl.Unsubscribe != NoFrame {
		return nil, &SyntaxError{Marble: marble, Column: indexOf(marble, '!') + 1, Msg: fmt.Sprintf("! in %s marble (only a subscription marble unsubscribes)", kind)}
	}
	origin := int64(0)
	if tl.Subscribe != NoFrame {
		if !hot {
			return nil, &SyntaxError{Marble: marble, Column: indexOf(marble, '^') + 1, Msg: "^ in a cold marble (only a hot source has a subscription point; a cold one starts when subscribed)"}
		}
		origin = tl.Subscribe
	}
	src := &source{s: s, hot: hot, caller: caller(3), events: make([]sourceEvent, 0, len(tl.Events))}
	for i, e := range tl.Events {
		ev := sourceEvent{frame: e.Frame - origin, kind: e.Kind}
		switch e.Kind {
		case Next:
			v, err := lookup(marble, cols[i], e.Symbol, values)
			if err != nil {
				return nil, err
			}
			ev.item = rxgo.Of(v)
		case Error:
			ev.item = rxgo.Error(cfg.err)
		}
		src.events = append(src.events, ev)
	}
	s.mu.Lock()
	s.reach(s.frames(tl.End - origin))
	s.mu.Unlock()
	return src, nil
}

// lookup returns the value symbol stands for.
func lookup(marble string, col int, symbol rune, values map[string]any) (any, error) {
	if values == nil {
		return string(symbol), nil
	}
	v, ok := values[string(symbol)]
	if !ok {
		return nil, &SyntaxError{Marble: marble, Column: col + 1, Msg: fmt.Sprintf("value %q missing from the values map", string(symbol))}
	}
	return v, nil
}

// start schedules a hot source's emissions; it requires that s.mu is held.
// Events before ^ happened before the test: nobody saw their values, but a
// | or # there means the source has already ended.
func (src *source) start() {
	for i, e := range src.events {
		if e.frame >= 0 {
			src.emitFrom(i, nil)
			return
		}
		if e.kind != Next {
			src.ended, src.ending = true, e
		}
	}
}

// emitFrom schedules the emission of the events that share event i's
// frame: to sub for a cold source, to every current subscriber for a hot
// one (sub nil). It requires that s.mu is held.
func (src *source) emitFrom(i int, sub *subscription) {
	s := src.s
	frame := src.events[i].frame
	at, seq := s.frames(frame), src.seq<<32
	if sub != nil {
		at, seq = sub.subscribed+s.frames(frame), sub.seq
	}
	s.schedule(at, classEmission, seq, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		j := i
		for ; j < len(src.events) && src.events[j].frame == frame; j++ {
			e := pendingEvent{sourceEvent: src.events[j], at: at}
			if sub != nil {
				sub.deliver(e)
				continue
			}
			for _, hs := range src.subs {
				hs.deliver(e)
			}
			if e.kind != Next {
				src.ended, src.ending = true, e.sourceEvent
				src.subs = nil
			}
		}
		if j < len(src.events) && (sub == nil || sub.active) {
			src.emitFrom(j, sub)
		}
	})
}

// deliver queues e for the producer; it requires that s.mu is held.
func (sub *subscription) deliver(e pendingEvent) {
	if !sub.active {
		return
	}
	// Hand a value straight to a downstream that is already waiting for
	// it, without waking the producer: a third fewer goroutine switches
	// per event. Only when nothing is queued before it and the producer
	// is idle, so the order holds.
	if e.kind == Next && !sub.busy && len(sub.pending) == 0 && sub.ctx.Err() == nil && sub.src.s.ctx.Err() == nil {
		select {
		case sub.next <- e.item:
			return
		default:
		}
	}
	sub.pending = append(sub.pending, e)
	select {
	case sub.signal <- struct{}{}:
	default:
	}
}

// subscribe registers a new subscriber at the current instant.
func (src *source) subscribe(ctx context.Context, next chan<- rxgo.Item) *subscription {
	s := src.s
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.elapsed()
	sub := &subscription{
		src:        src,
		ctx:        ctx,
		next:       next,
		record:     len(src.log),
		signal:     make(chan struct{}, 1),
		subscribed: now,
		// At one instant, sources emit in the order they were created
		// in fn, which is deterministic; the order in which subscribers
		// reach Observe is not (rxgo subscribes from goroutines), so it
		// only breaks ties between subscriptions of one source.
		seq:    src.seq<<32 | uint64(len(src.log)+1),
		active: true,
	}
	src.log = append(src.log, subscriptionRecord{subscribed: now})
	switch {
	case src.hot && src.ended:
		sub.deliver(pendingEvent{sourceEvent: src.ending, at: now})
	case src.hot:
		src.subs = append(src.subs, sub)
	case len(src.events) > 0:
		src.emitFrom(0, sub)
		s.reach(now + s.frames(src.events[len(src.events)-1].frame))
	}
	return sub
}

// produce is the rxgo.Producer of a source: one call per Observe, on a
// goroutine rxgo.Defer starts for the subscriber. ctx is the subscriber's
// context if it passed one down (rxgo propagates WithContext from Observe
// to the source), else the run's.
func (src *source) produce(ctx context.Context, next chan<- rxgo.Item) {
	s := src.s
	sub := src.subscribe(ctx, next)
	for {
		s.mu.Lock()
		batch := sub.pending
		sub.pending = nil
		sub.busy = len(batch) > 0
		s.mu.Unlock()
		for _, e := range batch {
			if e.kind == Complete {
				src.end(sub, e.at)
				return
			}
			// A cancelled subscriber gets nothing more, even if it
			// happens to be ready to receive.
			if ctx.Err() != nil || s.ctx.Err() != nil {
				src.cancelled(sub)
				return
			}
			if !send(ctx, s.ctx, next, e.item) {
				src.cancelled(sub)
				return
			}
			if e.kind == Error {
				src.end(sub, e.at)
				return
			}
		}
		select {
		case <-sub.signal:
		case <-ctx.Done():
			src.cancelled(sub)
			return
		case <-s.ctx.Done():
			src.cancelled(sub)
			return
		}
	}
}

// send hands item to next unless ctx or run ends first.
func send(ctx, run context.Context, next chan<- rxgo.Item, item rxgo.Item) bool {
	select {
	case next <- item: // the downstream is waiting: the usual case
		return true
	default:
	}
	select {
	case next <- item:
		return true
	case <-ctx.Done():
		return false
	case <-run.Done():
		return false
	}
}

// end records that sub ended with the source's | or #, at the instant of
// that symbol (not when a slow subscriber got it), as rxjs logs it.
func (src *source) end(sub *subscription, at time.Duration) {
	src.s.mu.Lock()
	defer src.s.mu.Unlock()
	src.detach(sub, at)
}

// cancelled records that the subscriber went away now. Cancellation by the
// end of Run is not an unsubscription: the test is over by then.
func (src *source) cancelled(sub *subscription) {
	s := src.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx.Err() != nil {
		sub.active = false
		return
	}
	src.detach(sub, s.elapsed())
}

// detach ends sub at instant at; it requires that s.mu is held.
func (src *source) detach(sub *subscription, at time.Duration) {
	if !sub.active {
		return
	}
	sub.active = false
	src.log[sub.record].unsubscribed = at
	src.log[sub.record].ended = true
	for i, hs := range src.subs {
		if hs == sub {
			src.subs = append(src.subs[:i], src.subs[i+1:]...)
			break
		}
	}
}
