package marble

import (
	"testing"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"
)

// The marble cases of rxjs's static merge and concat specs, against
// rxgo.Merge and rxgo.Concat. Both are eager in rxgo: they start when
// they are built (in fn, at frame 0), not when subscribed, which is the
// same here since every case subscribes at frame 0.

// sources builds e1, e2... of a case: a marble starting with "hot:" is
// hot, any other cold.
func sources(s *Scheduler, marbles ...string) []rxgo.Observable {
	out := make([]rxgo.Observable, len(marbles))
	for i, m := range marbles {
		if len(m) > 4 && m[:4] == "hot:" {
			out[i] = s.Hot(m[4:], nil)
		} else {
			out[i] = s.Cold(m, nil)
		}
	}
	return out
}

// combineCase is a merge or concat case: its sources, what the result
// must emit, and each source's subscriptions.
type combineCase struct {
	it      string
	rxgo    string
	sources []string   // "hot:" marks a hot one
	unsub   string     // the result's subscription marble
	want    string     //
	subs    [][]string // per source; nil: not checked
	combine func(obs []rxgo.Observable) rxgo.Observable
}

func combineCases(combine func([]rxgo.Observable) rxgo.Observable, cs ...combineCase) []rxjsCase {
	out := make([]rxjsCase, len(cs))
	for i, c := range cs {
		out[i] = rxjsCase{it: c.it, rxgo: c.rxgo, run: func(s *Scheduler) {
			obs := sources(s, c.sources...)
			var unsub []string
			if c.unsub != "" {
				unsub = []string{c.unsub}
			}
			f := combine
			if c.combine != nil {
				f = c.combine
			}
			s.ExpectObservable(f(obs), unsub...).ToBe(c.want, nil)
			for j, subs := range c.subs {
				if subs != nil {
					s.ExpectSubscriptions(obs[j]).ToBe(subs...)
				}
			}
		}}
	}
	return out
}

func merge(obs []rxgo.Observable) rxgo.Observable  { return rxgo.Merge(obs) }
func concat(obs []rxgo.Observable) rxgo.Observable { return rxgo.Concat(obs) }

// subs is one subscription marble per source.
func subs(marbles ...string) [][]string {
	out := make([][]string, len(marbles))
	for i, m := range marbles {
		out[i] = []string{m}
	}
	return out
}

func TestConformanceMerge(t *testing.T) {
	const rxgoMergeError = "rxjs's merge errors and unsubscribes from every source at the first error. " +
		"rxgo's Merge forwards the error but keeps the other sources subscribed"
	cases := combineCases(merge,
		combineCase{it: "should merge cold and cold",
			sources: []string{" ---a-----b-----c----|   ", " ------x-----y-----z----|"},
			subs:    subs("  ^-------------------!   ", "  ^----------------------!"),
			want:    "---a--x--b--y--c--z----|"},
		combineCase{it: "should merge hot and hot",
			sources: []string{"hot: ---a---^-b-----c----|   ", "hot: -----x-^----y-----z----|"},
			subs:    subs("        ^------------!   ", "        ^---------------!"),
			want:    "      --b--y--c--z----|"},
		combineCase{it: "should merge hot and cold",
			sources: []string{"hot: ---a-^---b-----c----|    ", "     --x-----y-----z----|"},
			subs:    subs("      ^--------------!    ", "      ^------------------!"),
			want:    "    --x-b---y-c---z----|"},
		combineCase{it: "should merge parallel emissions",
			sources: []string{"hot:  ---a----b----c----|", "hot:  ---x----y----z----|"},
			subs:    subs("  ^-----------------!", "  ^-----------------!"),
			want:    "---(ax)-(by)-(cz)-|"},
		combineCase{it: "should merge empty and empty",
			sources: []string{"|   ", "|   "},
			subs:    subs(" (^!)", " (^!)"),
			want:    "|  "},
		combineCase{it: "should merge three empties",
			sources: []string{"|   ", "|   ", "|   "},
			subs:    subs(" (^!)", " (^!)", " (^!)"),
			want:    "|  "},
		combineCase{it: "should merge never and empty",
			sources: []string{"-   ", "|   "},
			subs:    subs(" ^   ", " (^!)"),
			want:    "-  "},
		combineCase{it: "should merge never and never",
			sources: []string{" -", " -"},
			subs:    subs("  ^", "  ^"),
			want:    "-"},
		combineCase{it: "should merge empty and throw",
			sources: []string{" |   ", " #   "},
			subs:    subs("  (^!)", "  (^!)"),
			want:    "#"},
		combineCase{it: "should merge never and throw",
			rxgo:    rxgoMergeError + " (rxjs: e1 (^!)).",
			sources: []string{" -   ", " #   "},
			subs:    subs("  ^", "  (^!)"),
			want:    "#   "},
		combineCase{it: "should merge empty and eventual error",
			sources: []string{" |       ", "hot:  -------#"},
			subs:    subs("  (^!)    ", "  ^------!"),
			want:    "-------#"},
		combineCase{it: "should merge never and error",
			rxgo:    rxgoMergeError + " (rxjs: e1 ^------!).",
			sources: []string{"hot:  --------", "hot:  -------#"},
			subs:    subs("  ^", "  ^------!"),
			want:    "-------#"},
	)
	// No marble has anything after its #, so these list what rxgo emits.
	cases = append(cases,
		rxjsCase{it: "should merge hot and throw",
			rxgo: rxgoMergeError + ", which go on emitting after the error, and closes when they end " +
				"(rxjs: # and e1 (^!)).",
			run: func(s *Scheduler) {
				obs := sources(s, "hot:  --a--b--c--|", " #           ")
				got := recordAll(s, merge(obs))
				s.ExpectSubscriptions(obs[0]).ToBe("  ^----------!")
				s.ExpectSubscriptions(obs[1]).ToBe("  (^!)        ")
				s.T().Cleanup(func() {
					assert.Equal(s.T(), []string{"0:#", "2:a", "5:b", "8:c", "11:close"}, got())
				})
			}},
		rxjsCase{it: "should merge hot and error",
			rxgo: rxgoMergeError + ", which go on emitting after the error, and closes when they end " +
				"(rxjs: --a--b-# and e1 ^------!).",
			run: func(s *Scheduler) {
				obs := sources(s, "hot:  --a--b--c--|", "hot:  -------#    ")
				got := recordAll(s, merge(obs))
				s.ExpectSubscriptions(obs[0]).ToBe("  ^----------!")
				s.ExpectSubscriptions(obs[1]).ToBe("  ^------!    ")
				s.T().Cleanup(func() {
					assert.Equal(s.T(), []string{"2:a", "5:b", "7:#", "8:c", "11:close"}, got())
				})
			}},
		// The scheduler argument has no counterpart; the timing does.
		rxjsCase{it: "merge(...observables, Scheduler, number): should handle scheduler", run: func(s *Scheduler) {
			e1 := rxgo.Just("a")()
			e2 := concatDelay(2 * time.Millisecond)(rxgo.Just("b")())
			s.ExpectObservable(merge([]rxgo.Observable{e1, e2})).ToBe("a-(b|)", nil)
		}},
	)
	runRxjsSpec(t, "spec/observables/merge-spec.ts", cases)
	// Not ported: "should return itself when try to merge single
	// observable" (object identity), the lowerCaseO cases (3: foreign
	// observables), "should handle concurrency limits" and "should handle
	// scheduler with concurrency limits" (rxgo's Merge has no concurrency
	// limit), "should use the scheduler even when one Observable is
	// merged" (scheduler internals), "should deem a single array argument
	// to be an ObservableInput" (arrays as observables).
}

func TestConformanceConcat(t *testing.T) {
	const rxgoConcatUnsub = "rxjs unsubscribes from the current source when the result is unsubscribed. " +
		"rxgo's Concat runs from when it is built and never sees the subscriber's cancellation: " +
		"it goes on through every source (the harness keeps reading, and drops, what comes after the !)."
	same := func(n int) func([]rxgo.Observable) rxgo.Observable {
		return func(obs []rxgo.Observable) rxgo.Observable {
			all := make([]rxgo.Observable, n)
			for i := range all {
				all[i] = obs[0]
			}
			return rxgo.Concat(all)
		}
	}
	runRxjsSpec(t, "spec/observables/concat-spec.ts", combineCases(concat,
		combineCase{it: "should emit elements from multiple sources",
			sources: []string{" -a-b-c-|", "        -0-1-|", "             -w-x-y-z-|"},
			subs:    subs("  ^------!", "  -------^----!", "  ------------^--------!"),
			want:    "-a-b-c--0-1--w-x-y-z-|"},
		combineCase{it: "should concat the same cold observable multiple times",
			sources: []string{"--i-j-k-l-|"},
			subs: [][]string{{
				"                 ^---------!                              ",
				"                 ----------^---------!                    ",
				"                 --------------------^---------!          ",
				"                 ------------------------------^---------!",
			}},
			want:    "  --i-j-k-l---i-j-k-l---i-j-k-l---i-j-k-l-|",
			combine: same(4)},
		combineCase{it: "should concat the same cold observable multiple times, but the result is unsubscribed early",
			rxgo:    rxgoConcatUnsub + " (rxjs: ^---------! and ----------^----!)",
			sources: []string{"--i-j-k-l-|     "},
			unsub:   "     ---------------!",
			subs: [][]string{{
				"    ^---------!     ",
				"    ----------^---------!",
				"    --------------------^---------!",
				"    ------------------------------^---------!",
			}},
			want:    "  --i-j-k-l---i-j-",
			combine: same(4)},
		combineCase{it: "should complete without emit if both sources are empty",
			sources: []string{" --|", " ----|"},
			subs:    subs("  ^-!", "  --^---!"),
			want:    "------|"},
		combineCase{it: "should not complete if first source does not completes",
			sources: []string{" -", " --|"},
			subs:    subs("  ^", "  -"),
			want:    "-"},
		combineCase{it: "should not complete if second source does not completes",
			sources: []string{" --|", " ---"},
			subs:    subs("  ^-!", "  --^"),
			want:    "---"},
		combineCase{it: "should not complete if both sources do not complete",
			sources: []string{" -", " -"},
			subs:    subs("  ^", "  -"),
			want:    "-"},
		combineCase{it: "should raise error when first source is empty, second source raises error",
			sources: []string{" --|", " ----#"},
			subs:    subs("  ^-!", "  --^---!"),
			want:    "------#"},
		combineCase{it: "should raise error when first source raises error, second source is empty",
			sources: []string{" ---#", " ----|"},
			subs:    subs("  ^--!", "     -"),
			want:    "---#"},
		combineCase{it: "should raise first error when both source raise error",
			sources: []string{" ---#", " ------#"},
			subs:    subs("  ^--!", "     -"),
			want:    "---#"},
		combineCase{it: "should concat if first source emits once, second source is empty",
			sources: []string{" --a--|", " --------|"},
			subs:    subs("  ^----!", "  -----^-------!"),
			want:    "--a----------|"},
		combineCase{it: "should concat if first source is empty, second source emits once",
			sources: []string{" --|", " --a--|"},
			subs:    subs("  ^-!", "  --^----!"),
			want:    "----a--|"},
		combineCase{it: "should emit element from first source, and should not complete if second source does not completes",
			sources: []string{" --a--|", " -"},
			subs:    subs("  ^----!", "  -----^"),
			want:    "--a---"},
		combineCase{it: "should not complete if first source does not complete",
			sources: []string{" -", " --a--|"},
			subs:    subs("  ^", "  -"),
			want:    "-"},
		combineCase{it: "should emit elements from each source when source emit once",
			sources: []string{" ---a|", "     -----b--|"},
			subs:    subs("  ^---!", "  ----^-------!"),
			want:    "---a-----b--|"},
		combineCase{it: "should unsubscribe to inner source if outer is unsubscribed early",
			rxgo:    rxgoConcatUnsub + " (rxjs: e2 ---------^-------!)",
			sources: []string{" ---a-a--a|            ", "          -----b-b--b-|"},
			subs:    subs("  ^--------!            ", "  ---------^-----------!"),
			unsub:   "   -----------------!    ",
			want:    "---a-a--a-----b-b-    "},
		combineCase{it: "should raise error from first source and does not emit from second source",
			sources: []string{" --#", " ----a--|"},
			subs:    subs("  ^-!", "  -"),
			want:    "--#"},
		combineCase{it: "should emit element from first source then raise error from second source",
			sources: []string{" --a--|", " -------#"},
			subs:    subs("  ^----!", "  -----^------!"),
			want:    "--a---------#"},
		combineCase{it: "should emit all elements from both hot observable sources if first source completes before second source starts emit",
			sources: []string{"hot:  --a--b-|", "hot:  --------x--y--|"},
			subs:    subs("  ^------!", "  -------^------!"),
			want:    "--a--b--x--y--|"},
		combineCase{it: "should emit elements from second source regardless of completion time when second source is cold observable",
			sources: []string{"hot:  --a--b--c---|", "             -x-y-z-|"},
			subs:    subs("  ^-----------!", "  ------------^------!"),
			want:    "--a--b--c----x-y-z-|"},
		combineCase{it: "should not emit collapsing element from second source",
			sources: []string{"hot:  --a--b--c--|", "hot:  --------x--y--z--|"},
			subs:    subs("  ^----------!", "  -----------^-----!"),
			want:    "--a--b--c--y--z--|"},
		combineCase{it: "should return empty if concatenating an empty source",
			sources: []string{"|"},
			subs:    [][]string{{"(^!)", "(^!)"}},
			want:    "|",
			combine: same(2)},
		combineCase{it: "should error immediately if given a just-throw source",
			sources: []string{" #"},
			subs:    subs("  (^!)"),
			want:    "#",
			combine: same(2)},
		// rxjs's spec has these two cases twice.
		combineCase{it: "should emit elements from second source regardless of completion time when second source is cold observable",
			sources: []string{"hot:  --a--b--c---|", "             -x-y-z-|"},
			subs:    subs("  ^-----------!", "  ------------^------!"),
			want:    "--a--b--c----x-y-z-|"},
		combineCase{it: "should not emit collapsing element from second source",
			sources: []string{"hot:  --a--b--c--|", "hot:  --------x--y--z--|"},
			subs:    subs("  ^----------!", "  -----------^-----!"),
			want:    "--a--b--c--y--z--|"},
		combineCase{it: "should return passed observable if no scheduler was passed",
			sources: []string{"--a---b----c---|"},
			want:    "   --a---b----c---|"},
	))
	// Not ported: "should not break unsubscription chains when result is
	// unsubscribed explicitly" (it concatenates one mergeMap'd observable
	// four times; rxgo's FlatMap, like every rxgo operator built on
	// customObservableOperator, makes its output channel once, so a
	// second Observe closes a closed channel and panics), "should concat
	// an immediately-scheduled source with an immediately-scheduled
	// second" and "should use the scheduler even when one Observable is
	// concat'd" (schedulers), "should return RxJS Observable when single
	// lowerCaseO was passed" (foreign observables).
}

func TestConformanceStartWith(t *testing.T) {
	// startWith(...values) is rxgo's StartWith(Just(values...)()); the
	// scheduler argument has no counterpart.
	startWith := func(values ...any) func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
		return func(_ *Scheduler, e1 rxgo.Observable) rxgo.Observable {
			if len(values) == 0 {
				return e1.StartWith(rxgo.Empty())
			}
			return e1.StartWith(rxgo.Just(values...)())
		}
	}
	const rxgoStartWithUnsub = "rxjs unsubscribes from the source when the result is unsubscribed. " +
		"rxgo's StartWith runs from when it is built and never sees the subscriber's cancellation: " +
		"it reads its source to the end."
	x := startWith("x")
	runRxjsSpec(t, "spec/operators/startWith-spec.ts", opCases(
		opCase{it: "should prepend to a cold Observable",
			cold: " ---a--b--c--|", subs: []string{"  ^-----------!"},
			want: "s--a--b--c--|", op: startWith("s")},
		opCase{it: "should start an observable with given value",
			hot: "  --a--|", subs: []string{"  ^----!"}, want: "x-a--|", op: x},
		opCase{it: "should start with given value and does not completes if source does not completes",
			hot: "  ----a-", subs: []string{"  ^-----"}, want: "x---a-", op: x},
		opCase{it: "should start with given value and does not completes if source never emits",
			cold: " - ", subs: []string{"  ^ "}, want: "x-", op: x},
		opCase{it: "should start with given value and completes if source does not emits",
			hot: "  ---|", subs: []string{"  ^--!"}, want: "x--|", op: x},
		opCase{it: "should start with given value and complete immediately if source is empty",
			cold: " |   ", subs: []string{"  (^!)"}, want: "(x|)", op: x},
		opCase{it: "should start with given value and source both if source emits single value",
			cold: " (a|)", subs: []string{"  (^!)"}, want: "(xa|)", op: x},
		opCase{it: "should start with given values when given value is more than one",
			hot: "  -----a--|", subs: []string{"  ^-------!"}, want: "(yz)-a--|", op: startWith("y", "z")},
		opCase{it: "should start with given value and raises error if source raises error",
			hot: "  --#", subs: []string{"  ^-!"}, want: "x-#", op: x},
		opCase{it: "should start with given value and raises error immediately if source throws error",
			cold: " #   ", subs: []string{"  (^!)"}, want: "(x#)", op: x},
		opCase{it: "should allow unsubscribing explicitly and early",
			rxgo:  rxgoStartWithUnsub + " (rxjs: ^--------!)",
			hot:   "  ---a--b----c--d--|",
			unsub: "   ---------!        ",
			subs:  []string{"  ^----------------!"},
			want:  "s--a--b---        ", op: startWith("s")},
		opCase{it: "should not break unsubscription chains when result is unsubscribed explicitly",
			rxgo:  rxgoStartWithUnsub + " (rxjs: ^--------!)",
			hot:   "  ---a--b----c--d--|",
			subs:  []string{"  ^----------------!"},
			want:  "s--a--b---        ",
			unsub: "   ---------!        ",
			op: func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
				return mergeMapOf(startWith("s")(s, mergeMapOf(e1)))
			}},
		opCase{it: "should start with empty if given value is not specified",
			hot: "  -a-|", subs: []string{"  ^--!"}, want: "-a-|", op: startWith()},
		opCase{it: "should accept scheduler as last argument with single value",
			hot: "  --a--|", subs: []string{"  ^----!"}, want: "x-a--|", op: x},
		opCase{it: "should accept scheduler as last argument with multiple value",
			hot: "  -----a--|", subs: []string{"  ^-------!"}, want: "(yz)-a--|", op: startWith("y", "z")},
	))
	// Not ported: "should stop listening to a synchronous observable when
	// unsubscribed" (synchronous, no marbles).
}
