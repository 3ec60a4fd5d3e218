package marble

import (
	"context"
	"fmt"
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
// buffer) if that is later. values maps each value symbol to its value;
// with a nil map, each stands for itself as a string, which needs T to be
// a string type (or any): for other types, pass a map. A <-chan T cannot
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
