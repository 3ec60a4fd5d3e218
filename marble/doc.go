// Package marble tests the timing of rxgo (github.com/reactivex/rxgo/v2)
// pipelines with marble diagrams on virtual time, in the manner of rxjs's
// TestScheduler.run. It works for any Observable: rxthrottle's operators,
// rxgo's own (Map, Filter, Debounce, BufferWithTime…) and yours, including
// operators that read the time package directly, because the whole test
// runs in a testing/synctest bubble, where time is virtual and moves only
// when every goroutine is blocked. A run of thousands of frames takes
// milliseconds of real time and gives the same result every time.
//
//	func TestThrottle(t *testing.T) {
//		marble.Run(t, func(s *marble.Scheduler) {
//			src := s.Cold("a-b-c-d-e-f-g|", nil)
//			out := rxthrottle.Throttle(rxthrottle.Per(2, 5*s.Frame()))(src)
//			s.ExpectObservable(out).ToBe("a-b--c-d--e-f--(g|)", nil)
//		})
//	}
//
// # Syntax
//
// A marble is read left to right; every rune but a space is one
// frame (1ms by default, see WithFrame), including each character of a
// group, as in rxjs.
//
//	symbol     meaning                                      frames
//	-          nothing happens                              1
//	a Z 7 é *  any other rune, emoji too, is a value: the   1
//	           rune as a string ("a"), or values["a"]
//	|          completion                                   1
//	#          error (ErrMarble, or WithError's)            1
//	(ab)       a, then b, both at the frame of the (        1 per character: (ab) takes 4,
//	                                                        (a|) takes 4, (abc) takes 5
//	^          hot source: frame 0, the start of Run;       1
//	           subscription marble: subscribe here
//	!          subscription marble only: unsubscribe here   1
//	space      nothing: aligns marbles                      0
//	10ms       time progression, at the start or after a   its duration: "10ms " is 10
//	1.5s 2m    space, and followed by a space               frames of 1ms; "a 9ms b" puts
//	10.2ms                                                  b at frame 10
//
// A time progression need not be a whole number of frames: as in rxjs run
// mode, "a 10.2ms b|" puts b 11.2ms after a, at that exact nanosecond of
// virtual time, and every symbol after it keeps the 0.2ms (| at 12.2ms),
// until another progression brings it back on a frame. A progression is
// exact to the nanosecond ("0.0000001ms " is an error).
//
// The frames a group takes are what make column n of a marble frame n
// (without spaces or progressions), so marbles align one above the other;
// the price is that nothing can be written in the frames a group covers.
//
// A value is one rune (one Unicode code point, as rxjs reads a marble),
// so an emoji written with a variation selector or a joiner ("❤️" is two
// runes) cannot be one: such invisible runes are errors, and so are tabs
// and other whitespace than the space, control characters and invalid
// UTF-8. The failure output aligns runes that terminals draw two cells
// wide.
//
// Malformed marbles are errors that name the column (1-based, in runes):
//
//	marble: "a-(b-c|": unclosed group at column 3
//
// and so are a nested or empty group, a dash inside a group, ^ or ! twice,
// an event after | or #, a value missing from a non-nil values map, a
// time progression without its trailing space ("a 10ms" at the end,
// "10msa"), or one that is not a whole number of nanoseconds. Each use adds
// its rules: no ^ or ! in a cold marble, no ! in a hot or expected one,
// only - ^ ! in a subscription marble. A subscription marble without ^
// is no subscription at all, as in rxjs: ExpectSubscriptions(src).ToBe
// ("-----") says src was never subscribed (and among several marbles,
// such a one is dropped); ExpectObservable subscribes at frame 0 if its
// subscription marble has no ^. Parse and Render convert between marbles
// and Timelines.
//
// # Frames and order
//
// Frame 0 is the start of Run for hot sources (at their ^), subscription
// marbles and expected marbles; a cold source's frame 0 is the instant it
// is subscribed (a ColdChan's, the instant it is called). ExpectObservable
// subscribes at the ^ of its subscription marble (frame 0 by default),
// records each notification with its virtual time, and stops recording at
// the ! (cancelling the context it gave to Observe, which rxgo propagates
// to the sources). ToBe compares once Run
// has moved time: every notification must match in instant (to the
// nanosecond), kind and value. A notification that falls between two
// frames where the expected marble has none fails the test and says so:
// make the pipeline's delays whole numbers of frames, or write the instant
// in the expected marble with a time progression ("2.5ms (a|)").
//
// Within one instant, the order is fixed: first the pipeline's own timers
// due then (a Debounce or BufferWithTime firing), then subscriptions and
// unsubscriptions of ExpectObservable, then the source events, in the
// order the sources were created; each is fully processed before the
// next. Sources emit at their exact frames whatever the downstream does:
// each subscription has an unbounded buffer, so an operator that holds
// items back (a throttle) never delays later source events. rxjs orders
// an instant otherwise, sources before the operators' timers; rxgo's
// timers are Go timers, which no harness can put after a source event of
// the same instant without leaving the operator's select to chance.
//
// A pipeline whose values are observables (WindowWithTime, GroupBy, a Map
// to observables) is compared as in rxjs: ExpectObservable subscribes to
// each such value when it is emitted and records what it emits, and in
// ToBe's values a Cold source of the same Scheduler stands for what it
// must emit, both in time from the instant it was emitted:
//
//	x := s.Cold("-a-b|", nil)
//	src := s.Hot("--x|", map[string]any{"x": x})
//	s.ExpectObservable(src).ToBe("--x|", map[string]any{"x": s.Cold("-a-b|", nil)})
//
// # Channels
//
// Code that moves values over channels (a debouncer, a batcher, a worker
// pool with a ticker) is tested the same way. The channel functions are
// generic, and a method cannot take a type parameter, so they take the
// Scheduler as their first argument:
//
//	func TestDebounce(t *testing.T) {
//		marble.Run(t, func(s *marble.Scheduler) {
//			in := marble.ColdChan[string](s, "a-b------c|", nil)
//			out := debounce(s.Context(), in, 5*s.Frame())
//			marble.ExpectChan(s, out).ToBe("-------b--(c|)", nil)
//		})
//	}
//
// ColdChan returns a <-chan T that plays its marble from the instant it
// is called: a channel has no subscription to wait for (a receive cannot
// be seen before it takes a value), so the call is the subscription. In
// fn that is frame 0; called later by the code under test (a consumer
// that reconnects through a function that calls ColdChan), it plays from
// then, as a cold observable subscribed then does. Each value is sent at
// its frame the way a goroutine sends it: if no receiver is ready (and
// the buffer, see WithBuffer, is full), it waits for one, the later values
// wait behind it, each sent at its own frame or once the one before it is
// sent, and nothing is lost; | closes the channel once every value before
// it has been sent (taken, or put in the buffer). HotChan, which must be
// called in fn, plays on the run's clock from its ^, whoever receives: a
// value goes to a receiver ready at its instant, or into the buffer if it
// has room, or it is dropped, and the test log says so.
//
// values is a map[string]T. A nil map stands for each value rune as a
// string, which needs T to be a string type (or any): for any other T,
// a nil map with values in the marble is an error that asks for a map. A
// <-chan T cannot carry #, and # in its marble is an error: ColdResultChan
// and HotResultChan return a <-chan Result[T] instead, on which # is a
// Result whose Err is set, followed by the close, as an rxgo stream ends.
// One channel of results keeps a value and an error in the marble's order;
// with a second channel for the error, that order within a frame would be
// left to select.
//
// ExpectChan(s, ch) reads ch from the ^ of its optional subscription
// marble (frame 0 by default) until ch is closed (| in ToBe), and ToBe
// compares what it received, frame by frame, with ExpectObservable's
// failure output; ExpectResultChan reads a <-chan Result[T] and takes a
// Result whose Err is set for #. A value is recorded at the instant
// ExpectChan receives it. Between ^ and ! ExpectChan is always ready to
// receive, so that is the instant the value was sent. Before ^ nothing
// receives: a sender on an unbuffered channel blocks until ^, values sent
// into a buffer wait in it, and all of them are recorded at ^. At !
// ExpectChan stops receiving for good, as a consumer that goes away does:
// a sender then blocks, and the code under test must watch a context, or
// the end of Run reports its goroutine. s.Context() ends when Run ends:
// give it to code that takes a context (a context cancelled by a defer in
// fn would end at frame 0). A channel that is never closed is read until
// WithIdle frames after the last marble event, as an observable that
// never completes, and Run's end closes every source channel still open,
// so code that ranges over one ends.
//
// The order within an instant is the one above: the code's own timers
// first, then ExpectChan's ^ and !, then the sources' values, channel and
// observable sources alike in the order they were created. A group's
// values are sent one at a time, each once the receiver of the one before
// has taken it and is blocked again, so a group reaches a receiver in its
// order, and a hot channel does not drop a group's second value only
// because its receiver has not yet come back from the first.
//
// # Limits
//
// Everything observed must be built inside fn: a channel, timer or eager
// observable made outside the bubble runs on real time (and one made in
// an init function or a package variable is outside it). The harness says
// what it can see of it: a failure whose got line is empty, or a lone |
// at the subscription, carries a hint (for ExpectObservable, whether the
// pipeline read any Cold or Hot source of the Run; for ExpectChan, that a
// channel, timer or goroutine made outside fn runs on real time); a Cold
// or Hot source of a Run that has ended emits an error that says so; and
// a goroutine blocked on a channel made outside the bubble, which is
// never durably blocked and so stops virtual time for good, makes Run log
// why after 10 seconds of real time without progress (the test then hangs
// until go test's -timeout, whose goroutine dump shows where). A channel
// of a channel source belongs to its Run's bubble in the same way, and
// the harness cannot see it cross: received in another Run, it stops the
// test binary with synctest's fatal error ("select on synctest channel
// from outside bubble").
//
// Operators run with rxgo.WithPool process items on several goroutines;
// their relative order within a frame is then not deterministic, and
// neither is the test. rxgo's Merge and other eager constructors subscribe
// when they are built, at frame 0, whatever the subscription marble says.
//
// An observable that never completes, or a channel never closed, is
// watched until WithIdle frames after the last marble event. When Run
// returns, every source has been cancelled and every goroutine of the
// bubble has ended: synctest fails the test otherwise, which catches
// pipelines that leak goroutines. fn runs on the bubble's goroutine: stop
// the test from it with s.T().Fatal, not with the outer t.
//
// # Failures
//
// A failed ToBe prints both timelines one frame per column, a caret under
// the first frame where they differ, and the notifications each has that
// the other lacks, with their values. It is reported at the line that
// called ToBe, once, in the testing package's own "file:line: message"
// form, although it is found after fn has returned (a mistake found while
// fn runs, such as a malformed marble, is reported through t.Helper, so a
// helper of yours marked Helper is skipped; the line of a failed ToBe is
// the first caller outside package marble):
//
//	throttle_test.go:12: marble: timelines differ at frame 9
//	  want: abcde----fg|
//	  got : abcde-----fg|
//	                 ^
//	  only in want:
//	    frame 9: f = "f"
//	    frame 10: g = "g"
//	    frame 11: |
//	  only in got:
//	    frame 10: f = "f"
//	    frame 11: g = "g"
//	    frame 12: |
package marble
