package marble

import (
	"context"
	"fmt"
)

// ChanExpectation is a channel under test, read by ExpectChan or
// ExpectResultChan; ToBe says what it must deliver. T is the type of the
// channel's values (for ExpectResultChan, of its results' Value).
type ChanExpectation[T any] struct {
	e       *Expectation
	results bool // the channel carries Result[T], so # can be expected
}

// ExpectChan reads ch when Run moves time and records each value it
// receives, with the virtual time it received it; ToBe says what it must
// be. It is ExpectObservable for a channel, with the same marbles and the
// same failure output, and it is a function rather than a method because
// a method cannot take a type parameter.
//
// An optional subscription marble says when to start reading (its ^,
// frame 0 if absent) and when to stop (its !, never if absent). A value is
// recorded at the instant ExpectChan receives it, which is the instant it
// was sent while ExpectChan is reading: ExpectChan is always ready to
// receive. Before ^, nothing reads the channel: a sender on an unbuffered
// channel blocks until ^, and its value is recorded at ^; values sent into
// a buffer wait there and are all recorded at ^. At ! ExpectChan stops
// receiving for good, as a consumer that goes away does: a sender on the
// channel then blocks, so the code under test must watch a context (give
// it s.Context(), or a context you cancel at the same frame), or Run's
// end reports its goroutine as leaked.
//
// The channel's close is the completion (| in ToBe). A channel that is
// never closed is read until WithIdle frames after the last marble event,
// as an observable that never completes. A plain channel cannot carry an
// error: to expect #, use ExpectResultChan. Read a channel with one
// ExpectChan: two would share its values, each value going to one.
func ExpectChan[T any](s *Scheduler, ch <-chan T, subscription ...string) *ChanExpectation[T] {
	s.rep.Helper()
	return expectChan[T](s, "ExpectChan", ch, false, func(v T) (any, error) { return v, nil }, subscription)
}

// ExpectResultChan is ExpectChan for a channel of results: a Result whose
// Err is not nil is an error notification (# in ToBe, compared with
// errors.Is), any other its Value. The channel's close after an error is
// not a completion (an rxgo stream that errs is closed too): "ab#" is two
// values, then an error, then the close.
func ExpectResultChan[T any](s *Scheduler, ch <-chan Result[T], subscription ...string) *ChanExpectation[T] {
	s.rep.Helper()
	return expectChan[T](s, "ExpectResultChan", ch, true, func(r Result[T]) (any, error) { return r.Value, r.Err }, subscription)
}

func expectChan[T, E any](s *Scheduler, api string, ch <-chan E, results bool, conv func(E) (any, error), subscription []string) *ChanExpectation[T] {
	s.rep.Helper()
	e := &Expectation{s: s, caller: location(), unsub: -1, api: api}
	c := &ChanExpectation[T]{e: e, results: results}
	if ch == nil {
		s.rep.Errorf("marble: %s(nil): a nil channel never delivers anything", api)
		e.bad = true
		return c
	}
	e.read = func(ctx context.Context) {
		for {
			select {
			case v, ok := <-ch:
				if !ok {
					e.finish()
					return
				}
				e.add(conv(v))
			case <-ctx.Done():
				// ! or the end of Run: stop receiving.
				return
			}
		}
	}
	s.expect(e, subscription)
	return c
}

// ToBe says what the channel must deliver: marble is read from frame 0,
// the start of Run (or from its ^), as by ExpectObservable's ToBe; values
// maps each value symbol to its value (with a nil map, a symbol stands for
// itself as a string, which needs T to be a string type or any), and #
// stands for ErrMarble or WithError's (ExpectResultChan only). Every
// element must match in frame, kind and value (reflect.DeepEqual), and a
// mismatch fails the test with both timelines drawn one above the other.
func (c *ChanExpectation[T]) ToBe(marble string, values map[string]T, opts ...MarbleOption) {
	e := c.e
	s := e.s
	s.rep.Helper()
	if e.toBe || e.bad {
		e.ToBe(marble, nil, opts...) // reports a second ToBe
		return
	}
	anyValues, letters, err := valuesFor(values)
	if values == nil {
		tl, perr := Parse(marble, s.frame)
		switch {
		case perr != nil:
			// ToBe, below, reports it.
		case err != nil && hasValues(tl):
			s.rep.Errorf("marble: %s: %v", e.api, err)
			e.toBe, e.bad = true, true
			return
		case letters:
			if _, same := any("").(T); !same {
				// A named string type: each symbol stands for itself
				// converted to T, not for a string.
				anyValues = make(map[string]any)
				for _, ev := range tl.Events {
					if ev.Kind == Next {
						anyValues[string(ev.Symbol)], _ = letterValue[T](string(ev.Symbol))
					}
				}
			}
		}
	}
	e.ToBe(marble, anyValues, opts...)
	if c.results || e.bad {
		return
	}
	for _, w := range e.want {
		if w.kind == Error {
			err := &SyntaxError{Marble: marble, Column: indexOf(marble, '#') + 1, Msg: fmt.Sprintf("# expected of a plain channel (a <-chan %s cannot carry an error: use ExpectResultChan over a <-chan Result[%[1]s])", typeName[T]())}
			s.rep.Errorf("%v", err)
			e.bad = true
			return
		}
	}
}
