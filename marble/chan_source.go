package marble

import (
	"context"
	"fmt"
	"time"
)

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
		fail("%v", err)
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

// buildChanSource reads a channel source's marble, options and values into
// its events. Its errors are the test's failure messages as they stand:
// each starts with "marble:" and names the marble (a SyntaxError) or the
// function api.
func buildChanSource[T, E any](s *Scheduler, api, marble string, values map[string]T, opts []MarbleOption, hot bool, wrap func(T) E, wrapErr func(error) E) (*chanSource[E], error) {
	buffer := 0
	var rest []MarbleOption
	for _, o := range opts {
		if b, ok := o.(bufferOption); ok {
			if b < 0 {
				return nil, fmt.Errorf("marble: %s: WithBuffer(%d): a buffer cannot be negative", api, int(b))
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
		return nil, fmt.Errorf("marble: %s: %w", api, err)
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
