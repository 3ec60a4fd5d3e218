package marble

import (
	"errors"
	"testing"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"
)

// The marble cases of rxjs's debounceTime and bufferTime specs, against
// rxgo's Debounce and BufferWithTime (BufferWithTimeOrCount for a
// maxBufferSize). rxjs's time("--|") is a duration of as many frames.

// debounce is rxjs's debounceTime(frames).
func debounce(frames int) func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
	return func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
		return e1.Debounce(rxgo.WithDuration(time.Duration(frames) * s.Frame()))
	}
}

// rxgoDebounceDrops is the note of cases where a value is pending when
// the source completes.
const rxgoDebounceDrops = "rxjs's debounceTime emits the pending value when the source completes, " +
	"then completes. rxgo's Debounce drops it and completes."

func TestConformanceDebounceTime(t *testing.T) {
	runRxjsSpec(t, "spec/operators/debounceTime-spec.ts", opCases(
		opCase{it: "should debounce values by 2 time units",
			hot: "  -a--bc--d---|", subs: []string{"  ^-----------!"},
			want: "---a---c--d-|", op: debounce(2)},
		// c is pending when the source completes at 22, but its 5 frames
		// are up at 22 too: rxgo's timer fires first, so rxgo emits it.
		opCase{it: "should delay all elements by the specified time",
			hot: "  -a--------b------c----|", subs: []string{"  ^---------------------!"},
			want: "------a--------b------(c|)", op: debounce(5)},
		opCase{it: "should debounce and delay element by the specified time",
			hot: "  -a--(bc)-----------d-------|", subs: []string{"  ^--------------------------!"},
			want: "---------c--------------d--|", op: debounce(5)},
		opCase{it: "should complete when source does not emit",
			hot: "  -----|", subs: []string{"  ^----!"}, want: "-----|", op: debounce(1)},
		opCase{it: "should complete when source is empty",
			cold: " |", subs: []string{"  (^!)"}, want: "|", op: debounce(1)},
		opCase{it: "should raise error when source does not emit and raises error",
			hot: "  -----#", subs: []string{"  ^----!"}, want: "-----#", op: debounce(1)},
		opCase{it: "should raise error when source throws",
			cold: " #", subs: []string{"  (^!)"}, want: "#", op: debounce(1)},
		opCase{it: "should allow unsubscribing early and explicitly",
			hot:   "  --a--bc--d----|",
			subs:  []string{"  ^------!       "},
			want:  "----a---       ",
			unsub: "   -------!       ",
			op:    debounce(2)},
		opCase{it: "should not break unsubscription chains when unsubscribed explicitly",
			hot:   "  --a--bc--d----|",
			subs:  []string{"  ^------!       "},
			want:  "----a---       ",
			unsub: "   -------!       ",
			op: func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
				return mergeMapOf(debounce(2)(s, mergeMapOf(e1)))
			}},
		opCase{it: "should debounce and does not complete when source does not completes",
			hot: "  -a--(bc)-----------d-------", subs: []string{"  ^--------------------------"},
			want: "---------c--------------d--", op: debounce(5)},
		opCase{it: "should not completes when source does not completes",
			hot: "  -", subs: []string{"  ^"}, want: "-", op: debounce(1)},
		opCase{it: "should not completes when source never completes",
			cold: " -", subs: []string{"  ^"}, want: "-", op: debounce(1)},
		// c's 5 frames are up at 22, the frame of the #. rxjs delivers
		// the # first (the hot source's events were scheduled before the
		// operator's timer) and drops c. Here the pipeline's timers fire
		// before the sources emit at one instant (see doc.go): rxgo's
		// timers are Go timers, and a source event cannot be put before
		// one due at the same instant without making the operator's
		// select pick at random. So rxgo's Debounce emits c, then the #.
		opCase{it: "should delay all elements until source raises error",
			harness: "rxjs: ------a--------b------# (at frame 22 the # comes first and c is dropped); " +
				"here the timer due at 22 fires before the source's #, so c is emitted with it.",
			hot: "  -a--------b------c----#", subs: []string{"  ^---------------------!"},
			want: "------a--------b------(c#)", op: debounce(5)},
		opCase{it: "should debounce all elements while source emits within given time",
			rxgo: rxgoDebounceDrops + " (rxjs: -------------------------(h|))",
			hot:  "  --a--b--c--d--e--f--g--h-|", subs: []string{"  ^------------------------!"},
			want: "-------------------------|", op: debounce(4)},
		opCase{it: "should debounce all element while source emits within given time until raises error",
			hot: "  --a--b--c--d--e--f--g--h-#", subs: []string{"  ^------------------------!"},
			want: "-------------------------#", op: debounce(4)},
	))
	// Not ported: "should debounce correctly when synchronously
	// reentered" (a Subject fed from its own subscriber) and "should
	// unsubscribe from the scheduled debounce action when downstream
	// unsubscribes" (scheduler internals).
}

func TestConformanceBufferTime(t *testing.T) {
	bufferTime := func(frames int) func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
		return func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
			return e1.BufferWithTime(rxgo.WithDuration(time.Duration(frames) * s.Frame()))
		}
	}
	bufferTimeOrCount := func(frames, count int) func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
		return func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
			return e1.BufferWithTimeOrCount(rxgo.WithDuration(time.Duration(frames)*s.Frame()), count)
		}
	}
	const rxgoNoEmpty = "rxjs's bufferTime emits every buffer when its time is up, empty ones " +
		"included, and the last one when the source completes. rxgo's BufferWithTime never " +
		"emits an empty buffer."
	buffers := func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	errHaha := errors.New("haha")
	runRxjsSpec(t, "spec/operators/bufferTime-spec.ts", opCases(
		opCase{it: "should emit buffers at intervals",
			rxgo:     rxgoNoEmpty + " (rxjs: ...y--(z|) with z = [])",
			hot:      "  ---a---b---c---d---e---f---g-----|   ",
			subs:     []string{"    ^--------------------------------!   "},
			want:     "----------w---------x---------y--|",
			wantVals: buffers("w", []any{"a", "b"}, "x", []any{"c", "d", "e"}, "y", []any{"f", "g"}),
			op:       bufferTime(10)},
		opCase{it: "should emit buffers at intervals test 2",
			rxgo:     rxgoNoEmpty + " (rxjs: ...y---(z|) with z = [])",
			hot:      "  ---------a---------b---------c---------d---------e---------g--------|   ",
			want:     "--------------------------------x-------------------------------y---|",
			wantVals: buffers("x", []any{"a", "b", "c"}, "y", []any{"d", "e", "g"}),
			op:       bufferTime(32)},
		opCase{it: "should emit buffers at intervals or when the buffer is full",
			hot:      "  ---a---b---c---d---e---f---g-----|   ",
			subs:     []string{"    ^--------------------------------!   "},
			want:     "-------w-------x-------y---------(z|)",
			wantVals: buffers("w", []any{"a", "b"}, "x", []any{"c", "d"}, "y", []any{"e", "f"}, "z", []any{"g"}),
			op:       bufferTimeOrCount(10, 2)},
		opCase{it: "should emit buffers at intervals or when the buffer is full test 2",
			rxgo:     rxgoNoEmpty + " (rxjs: ...y---(z|) with z = [])",
			hot:      "  ---a---b---c---d---e---f---g-----|   ",
			subs:     []string{"    ^--------------------------------!   "},
			want:     "----------w--------x---------y---|",
			wantVals: buffers("w", []any{"a", "b"}, "x", []any{"c", "d", "e"}, "y", []any{"f", "g"}),
			op:       bufferTimeOrCount(10, 3)},
		opCase{it: "should handle empty",
			rxgo: rxgoNoEmpty + " (rxjs: (b|) with b = [])",
			cold: " |", subs: []string{"  (^!)"}, want: "|", op: bufferTime(10)},
		opCase{it: "should handle never",
			rxgo:  rxgoNoEmpty + " (rxjs: ----------a---------a---------a---------a---- with a = [])",
			cold:  "-",
			unsub: "   --------------------------------------------!",
			want:  "--------------------------------------------",
			op:    bufferTime(10)},
		// throwError(() => new Error('haha')) is rxgo's Thrown.
		opCase{it: "should handle throw",
			run: func(s *Scheduler) {
				s.ExpectObservable(bufferTime(10)(s, rxgo.Thrown(errHaha))).ToBe("#", nil, WithError(errHaha))
			}},
		// No marble has anything after its #, so the case lists what
		// rxgo emits.
		opCase{it: "should handle errors",
			rxgo: "rxjs: ----------w----# and c is dropped. rxgo's BufferWithTime, on the error, " +
				"emits the #, then the buffer it holds ([c]), then closes: a value after an error.",
			run: func(s *Scheduler) {
				e1 := s.Hot("  ---a---b---c---#", nil)
				got := recordAll(s, bufferTime(10)(s, e1))
				s.ExpectSubscriptions(e1).ToBe("  ^--------------!")
				s.T().Cleanup(func() {
					assert.Equal(s.T(), []string{"10:[a b]", "15:#", "15:[c]", "15:close"}, got())
				})
			}},
		opCase{it: "should not throw when subscription synchronously unsubscribed after emit",
			rxgo: "rxjs: ----------w---------(x|) and ^-------------------! (take(2) completes " +
				"with x and unsubscribes). rxgo's Take completes when the item after x arrives and " +
				"leaves its source subscribed, so e1 runs to its end.",
			hot:      "  ---a---b---c---d---e---f---g-----|",
			subs:     []string{"    ^--------------------------------!"},
			want:     "----------w---------x---------|",
			wantVals: buffers("w", []any{"a", "b"}, "x", []any{"c", "d", "e"}),
			op: func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
				return bufferTime(10)(s, e1).Take(2)
			}},
	))
	// Not ported: the cases with a bufferCreationInterval ("...created at
	// intervals and close after the specified delay" with and without a
	// maxBufferSize or errors, "...timeSpan 10 and creationInterval 7",
	// "...handle source ending with an error", "...allow result to
	// unsubscribed early", "should not break unsubscription chains when
	// result is unsubscribed explicitly": 7 cases; rxgo has no
	// overlapping buffers), "should handle situations with a creation
	// interval of zero" (asap scheduler), "should not mutate the buffer
	// on reentrant next" (a Subject fed from its own subscriber), "should
	// not have errors when take follows and maxBufferSize is provided"
	// (rxgo's Interval and BufferWithTimeOrCount fire timers at the same
	// instants, and no order holds between two timers of the pipeline;
	// rxjs orders them by when they were scheduled).
}

func TestConformanceWindowTime(t *testing.T) {
	// rxgo's WindowWithTime(timeSpan) has no windowCreationInterval nor
	// maxWindowSize; the cases with an interval are ported only where the
	// source ends before it matters (an empty, a one-value, a failing
	// source). The windows are compared as in rxjs, each with a Cold.
	windowTime := func(frames int) func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
		return func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
			return e1.WindowWithTime(rxgo.WithDuration(time.Duration(frames) * s.Frame()))
		}
	}
	cases := []rxjsCase{
		{it: "should emit windows given windowTimeSpan", run: func(s *Scheduler) {
			source := s.Hot("--1--2--^--a--b--c--d--e--f--g--h--|", nil)
			subs := "                ^--------------------------!"
			expected := "            x---------y---------z------|"
			x := s.Cold("            ---a--b--c|                 ", nil)
			y := s.Cold("                      --d--e--f-|       ", nil)
			z := s.Cold("                                -g--h--|", nil)
			s.ExpectObservable(windowTime(10)(s, source)).ToBe(expected, map[string]any{"x": x, "y": y, "z": z})
			s.ExpectSubscriptions(source).ToBe(subs)
		}},
		{it: "should return a single empty window if source is empty", run: func(s *Scheduler) {
			source := s.Cold("|", nil)
			s.ExpectObservable(windowTime(5)(s, source)).ToBe("(w|)", map[string]any{"w": s.Cold("|", nil)})
			s.ExpectSubscriptions(source).ToBe("(^!)")
		}},
		{it: "should split a Just source into a single window identical to source", run: func(s *Scheduler) {
			source := s.Cold("(a|)", nil)
			s.ExpectObservable(windowTime(5)(s, source)).ToBe("(w|)", map[string]any{"w": s.Cold("(a|)", nil)})
			s.ExpectSubscriptions(source).ToBe("(^!)")
		}},
		{it: "should emit an error-only window if outer is a simple throw-Observable",
			rxgo: "rxjs errors the window and the outer observable: (w#). rxgo's WindowWithTime " +
				"errs the window only, and completes the outer one: (w|).",
			run: func(s *Scheduler) {
				source := s.Cold("#   ", nil)
				s.ExpectObservable(windowTime(5)(s, source)).ToBe("(w|)", map[string]any{"w": s.Cold("#   ", nil)})
				s.ExpectSubscriptions(source).ToBe("(^!)")
			}},
	}
	runRxjsSpec(t, "spec/operators/windowTime-spec.ts", cases)
	// Not ported: the cases with a windowCreationInterval or a
	// maxWindowSize over a source that outlives them ("should emit windows
	// given windowTimeSpan and windowCreationInterval" twice, "should close
	// windows after max count is reached" and "...with
	// windowCreationInterval", "should be able to split a never Observable
	// into timely empty windows", "should handle source Observable which
	// eventually emits an error", "...but outer is unsubscribed early",
	// "should not break unsubscription chains when result is unsubscribed
	// explicitly", "should not error if maxWindowSize is hit while nexting
	// to other windows.": rxgo has neither).
}
