package marble

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing/synctest"
	"time"
)

// Result is the element of a channel that can carry a marble's #: a value,
// or an error when Err is not nil. ColdResultChan and HotResultChan send
// one Result per value and, for #, a Result with the error followed by the
// channel's close; ExpectResultChan reads them back.
//
// A channel of results keeps a value and an error in the order the marble
// gives them, as an rxgo stream does; a second channel for the error would
// leave that order, within one frame, to select's random choice.
type Result[T any] struct {
	Value T
	Err   error
}

// ColdChan returns a channel that plays marble once, from the instant of
// the call: a channel has no subscription to wait for, so the call is the
// subscription, and frame 0 of the marble is the instant ColdChan is
// called. Called in fn, as usual, that is the start of Run (frame 0 of
// every other marble); called later by the code under test (a consumer
// that reconnects through a function of yours that calls ColdChan), it
// plays from that instant, as a cold observable subscribed then would.
//
// Each value is sent at its frame as a goroutine of yours would send it:
// if no receiver is ready then (and the buffer, see WithBuffer, is full),
// the value waits for one, and the later values wait behind it, each sent
// at its own frame or as soon as the one before it is sent, whichever is
// later. No value is lost. | closes the channel at its frame, or once
// every value before it has been sent (taken by a receiver or put in the
// buffer) if that is later. values maps each value symbol to its value; with a
// nil map, each stands for itself as a string, which needs T to be a
// string type (or any): for other types, pass a map. A <-chan T cannot
// carry #: use ColdResultChan. A cold marble cannot hold ^ or !.
//
// A channel still open when Run ends (a marble without |) is closed then,
// as Run cancels every observable source, so code that ranges over it
// ends. A malformed marble fails the test (Fatalf in fn, Errorf after)
// with the column at fault; the channel returned then is closed at once.
func ColdChan[T any](s *Scheduler, marble string, values map[string]T, opts ...MarbleOption) <-chan T {
	s.rep.Helper()
	return newChanSource(s, "ColdChan", marble, values, opts, false, plainValue[T], nil)
}

// HotChan returns a channel on which marble plays once, on the run's
// clock, whoever receives: frame 0 is the ^ of the marble (or its first
// column if there is no ^), which is the start of Run. Values before ^
// happened before the test and are not sent; a | before ^ means the
// channel is closed from the start.
//
// A value is sent at its frame without waiting: to a receiver ready for it
// at that instant (once everything else due then has run), else into the
// buffer if it has room (WithBuffer), else it is dropped, as a value of a
// hot observable is lost to a subscriber that comes later, and the test
// log says so. | closes the channel at its frame (values still in the
// buffer can be received after it). values are read as by ColdChan; use
// HotResultChan for #. HotChan must be called in fn; a hot marble cannot
// hold !.
func HotChan[T any](s *Scheduler, marble string, values map[string]T, opts ...MarbleOption) <-chan T {
	s.rep.Helper()
	return newChanSource(s, "HotChan", marble, values, opts, true, plainValue[T], nil)
}

// ColdResultChan is ColdChan for a channel of results: each value is a
// Result with Value set, and # sends a Result whose Err is ErrMarble (or
// WithError's) and then closes the channel, as an rxgo stream ends with
// its error.
func ColdResultChan[T any](s *Scheduler, marble string, values map[string]T, opts ...MarbleOption) <-chan Result[T] {
	s.rep.Helper()
	return newChanSource(s, "ColdResultChan", marble, values, opts, false, resultValue[T], resultError[T])
}

// HotResultChan is HotChan for a channel of results, with # as in
// ColdResultChan.
func HotResultChan[T any](s *Scheduler, marble string, values map[string]T, opts ...MarbleOption) <-chan Result[T] {
	s.rep.Helper()
	return newChanSource(s, "HotResultChan", marble, values, opts, true, resultValue[T], resultError[T])
}

// WithBuffer gives the channel of a channel source (ColdChan, HotChan and
// their Result variants) a buffer of n elements, as make(chan T, n) does;
// the default is 0, an unbuffered channel. A value sent when no receiver
// is ready goes into the buffer if it has room. It matters most for
// HotChan, which drops a value that finds neither. Cold, Hot and ToBe
// reject it.
func WithBuffer(n int) MarbleOption { return bufferOption(n) }

type bufferOption int

func (o bufferOption) applyMarble(*marbleConfig) error {
	return fmt.Errorf("marble: WithBuffer(%d) applies to channel sources (ColdChan, HotChan and their Result variants) only", int(o))
}

// Context returns a context that ends when Run ends, before Run waits for
// the bubble's goroutines to exit: give it to code under test that takes
// one (a channel pipeline, a worker), so that its goroutines end with the
// run. A context made in fn and cancelled by a defer there would end at
// frame 0: fn returns before virtual time moves.
func (s *Scheduler) Context() context.Context { return s.ctx }

func plainValue[T any](v T) T { return v }

func resultValue[T any](v T) Result[T] { return Result[T]{Value: v} }

func resultError[T any](err error) Result[T] { return Result[T]{Err: err} }

// chanSource is the state behind a channel made by ColdChan, HotChan or
// their Result variants; E is the channel's element, T or Result[T].
type chanSource[E any] struct {
	s      *Scheduler
	api    string // "ColdChan"... for messages
	caller string // where it was made, for the log of dropped values
	hot    bool
	ch     chan E
	events []chanEvent[E] // in order, each at its offset from frame 0 (cold: the call; hot: ^)
	origin time.Duration  // the instant of frame 0, since the start of Run
	seq    uint64         // the tie-break of its emissions within an instant

	// The fields below require that s.mu is held.
	backlog []chanEvent[E] // cold: events due that wait for a receiver, in order
	sending bool           // cold: a goroutine is sending the backlog
	closed  bool
}

// chanEvent is one element to send, or the close.
type chanEvent[E any] struct {
	at     time.Duration // since frame 0
	close  bool
	value  E
	symbol rune // the marble's symbol, for messages
}

func newChanSource[T, E any](s *Scheduler, api, marble string, values map[string]T, opts []MarbleOption, hot bool, wrap func(T) E, wrapErr func(error) E) <-chan E {
	s.rep.Helper()
	s.mu.Lock()
	flushing, ended := s.flushing, s.ctx.Err() != nil
	s.mu.Unlock()
	fail := s.rep.Fatalf
	if flushing {
		// Not on fn's goroutine: Fatalf must not be called there.
		fail = s.rep.Errorf
	}
	where := location()
	if ended {
		// Called by code reacting to the end of Run: the run is over, so
		// the channel never delivers anything (the code must watch its
		// context, as it would in production).
		return make(chan E)
	}
	if flushing && hot {
		fail("marble: %s after fn returned; create hot sources inside fn", api)
		return closedChan[E]()
	}
	c, err := buildChanSource(s, api, marble, values, opts, hot, wrap, wrapErr)
	if err != nil {
		var syntax *SyntaxError
		if errors.As(err, &syntax) {
			fail("%v", err) // names the marble
		} else {
			fail("marble: %s: %v", api, err)
		}
		return closedChan[E]()
	}
	c.caller = where
	s.mu.Lock()
	c.seq = s.nextSeq() << 32
	if !hot {
		c.origin = s.elapsed()
	}
	if n := len(c.events); n > 0 {
		s.reach(c.origin + c.events[n-1].at)
		c.schedule(0)
	}
	s.mu.Unlock()
	// Run closes a channel still open when it ends, so that code ranging
	// over it ends too. A sending goroutine closes it itself (see send).
	context.AfterFunc(s.ctx, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if !c.sending {
			c.closeLocked()
		}
	})
	return c.ch
}

func closedChan[E any]() chan E {
	ch := make(chan E)
	close(ch)
	return ch
}

func buildChanSource[T, E any](s *Scheduler, api, marble string, values map[string]T, opts []MarbleOption, hot bool, wrap func(T) E, wrapErr func(error) E) (*chanSource[E], error) {
	buffer := 0
	var rest []MarbleOption
	for _, o := range opts {
		if b, ok := o.(bufferOption); ok {
			if b < 0 {
				return nil, fmt.Errorf("WithBuffer(%d): a buffer cannot be negative", int(b))
			}
			buffer = int(b)
			continue
		}
		rest = append(rest, o)
	}
	m, err := parseSource(marble, s.frame, rest, hot, "a cold channel starts when it is made")
	if err != nil {
		return nil, err
	}
	anyValues, letters, err := valuesFor(values)
	if err != nil && hasValues(m.tl) {
		return nil, err
	}
	c := &chanSource[E]{s: s, api: api, hot: hot, ch: make(chan E, buffer), events: make([]chanEvent[E], 0, len(m.tl.Events)+1)}
	for i, e := range m.tl.Events {
		ev := chanEvent[E]{at: e.Time(s.frame) - m.origin, symbol: e.Symbol}
		if ev.at < 0 {
			// Before ^: a value nobody saw; an end that already happened.
			if e.Kind == Next {
				continue
			}
			ev.at = 0
		}
		switch e.Kind {
		case Next:
			v, err := valueOf[T](marble, m.cols[i], e.Symbol, anyValues, letters)
			if err != nil {
				return nil, err
			}
			ev.value = wrap(v)
		case Error:
			if wrapErr == nil {
				return nil, &SyntaxError{Marble: marble, Column: m.cols[i] + 1, Msg: fmt.Sprintf("# on a plain channel (a <-chan %s cannot carry an error: use %sResultChan, whose elements are Result[%[1]s])", typeName[T](), api[:len(api)-len("Chan")])}
			}
			ev.value, ev.symbol = wrapErr(m.cfg.err), '#'
			c.events = append(c.events, ev)
			ev = chanEvent[E]{at: ev.at, close: true, symbol: '#'}
		case Complete:
			ev.close, ev.symbol = true, '|'
		}
		c.events = append(c.events, ev)
	}
	return c, nil
}

// hasValues reports whether tl holds a value (a symbol to look up).
func hasValues(tl Timeline) bool {
	for _, e := range tl.Events {
		if e.Kind == Next {
			return true
		}
	}
	return false
}

// valuesFor returns values as a map of any, for lookup; for a nil map,
// whether a symbol can stand for itself as a T (letters), or why not.
func valuesFor[T any](values map[string]T) (map[string]any, bool, error) {
	if values != nil {
		m := make(map[string]any, len(values))
		for k, v := range values {
			m[k] = v
		}
		return m, false, nil
	}
	if _, ok := letterValue[T]("a"); ok {
		return nil, true, nil
	}
	name := typeName[T]()
	return nil, false, fmt.Errorf("a nil values map stands for each value symbol as a string, and %s is not a string type: pass a map[string]%s", name, name)
}

// valueOf returns the T symbol stands for: its value in the map, or the
// symbol itself as a T if the map is nil (letters).
func valueOf[T any](marble string, col int, symbol rune, values map[string]any, letters bool) (T, error) {
	var zero T
	if values == nil && letters {
		v, _ := letterValue[T](string(symbol))
		return v, nil
	}
	v, err := lookup(marble, col, symbol, values)
	if err != nil {
		return zero, err
	}
	t, _ := v.(T) // v came from a map[string]T; only a nil interface fails, and its T is the zero value
	return t, nil
}

// letterValue converts a marble symbol to a T: for T string, any or a
// named string type.
func letterValue[T any](symbol string) (T, bool) {
	var zero T
	if v, ok := any(symbol).(T); ok {
		return v, true
	}
	typ := reflect.TypeFor[T]()
	if typ.Kind() != reflect.String {
		return zero, false
	}
	return reflect.ValueOf(symbol).Convert(typ).Interface().(T), true
}

func typeName[T any]() string { return reflect.TypeFor[T]().String() }

// schedule queues the sending of the events that share event i's instant;
// it requires that s.mu is held. Each instant schedules the next, so the
// queue holds one action per source, however long its marble.
func (c *chanSource[E]) schedule(i int) {
	s := c.s
	s.schedule(c.origin+c.events[i].at, classEmission, c.seq, func() { c.emit(i) })
}

// emit runs on the driver: it sends the events that share event i's
// instant.
func (c *chanSource[E]) emit(i int) {
	s := c.s
	j := i
	for j < len(c.events) && c.events[j].at == c.events[i].at {
		j++
	}
	if j < len(c.events) {
		s.mu.Lock()
		c.schedule(j)
		s.mu.Unlock()
	}
	for k := i; k < j; k++ {
		e := c.events[k]
		if k > i {
			// Let the receiver of the value before this one (of a group)
			// take it in and come back, as between any two actions.
			synctest.Wait()
		}
		s.mu.Lock()
		if c.closed {
			s.mu.Unlock()
			return
		}
		if c.sending {
			// Behind a value that waits for its receiver.
			c.backlog = append(c.backlog, c.events[k:j]...)
			s.mu.Unlock()
			return
		}
		if e.close {
			c.closeLocked()
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		select {
		case c.ch <- e.value:
			continue
		default:
		}
		if c.hot {
			full := ""
			if cap(c.ch) > 0 {
				full = fmt.Sprintf(" and its buffer of %d was full", cap(c.ch))
			}
			s.logAt(c.caller, "marble: %s dropped %c at %s: no receiver was ready%s", c.api, e.symbol, when(c.origin+e.at, s.frame), full)
			continue
		}
		s.mu.Lock()
		c.backlog = append(c.backlog, c.events[k:j]...)
		c.sending = true
		s.mu.Unlock()
		go c.send()
		return
	}
}

// send runs on a goroutine of a cold source while values wait for their
// receiver: it sends the backlog in order, blocking as a sender does, and
// ends when the backlog is empty, or closes the channel at its | or when
// Run ends.
func (c *chanSource[E]) send() {
	s := c.s
	for {
		s.mu.Lock()
		if len(c.backlog) == 0 {
			c.sending = false
			if s.ctx.Err() != nil {
				// Run ended while the last value was being taken; the
				// close Run does skipped this channel (it was sending).
				c.closeLocked()
			}
			s.mu.Unlock()
			return
		}
		e := c.backlog[0]
		c.backlog = c.backlog[1:]
		if e.close {
			c.sending, c.backlog = false, nil
			c.closeLocked()
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		select {
		case c.ch <- e.value:
		case <-s.ctx.Done():
			s.mu.Lock()
			c.sending, c.backlog = false, nil
			c.closeLocked()
			s.mu.Unlock()
			return
		}
	}
}

// closeLocked closes the channel unless it is closed already; it requires
// that s.mu is held.
func (c *chanSource[E]) closeLocked() {
	if !c.closed {
		c.closed = true
		close(c.ch)
	}
}
