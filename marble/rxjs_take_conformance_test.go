package marble

import (
	"testing"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"
)

// The marble cases of rxjs's take, takeWhile, takeLast and defaultIfEmpty
// specs.

func TestConformanceTake(t *testing.T) {
	take := func(n uint) func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
		return func(_ *Scheduler, e1 rxgo.Observable) rxgo.Observable { return e1.Take(n) }
	}
	// rxgoTake is the note of the cases where rxgo's Take ends before
	// its source does.
	const rxgoTake = "rxjs's take completes with the n-th value and unsubscribes from its source. " +
		"rxgo's Take completes only when the next value arrives after the n-th, and never " +
		"cancels its source, which stays subscribed until the end of Run."
	runRxjsSpec(t, "spec/operators/take-spec.ts", opCases(
		opCase{it: "should take two values of an observable with many values",
			rxgo: rxgoTake + " (rxjs: --a-----(b|) and ^-------!)",
			cold: " --a-----b----c---d--|", subs: []string{"  ^"},
			want: "--a-----b----|", op: take(2)},
		opCase{it: "should work with empty",
			cold: " |", subs: []string{"  (^!)"}, want: "|", op: take(42)},
		opCase{it: "should go on forever on never",
			cold: " -", subs: []string{"  ^"}, want: "-", op: take(42)},
		opCase{it: "should be empty on take(0)",
			rxgo: rxgoTake + " With 0, rxjs completes at once without subscribing to the source " +
				"(expected |, no subscription); rxgo subscribes and completes when the first value arrives.",
			hot: "--a--^--b----c---d--|", subs: []string{"^"},
			want: "   ---|", op: take(0)},
		opCase{it: "should take one value of an observable with one value",
			hot: "  ---(a|)", subs: []string{"  ^--!---"}, want: "---(a|)", op: take(1)},
		opCase{it: "should take one values of an observable with many values",
			rxgo: rxgoTake + " (rxjs: ---(b|) and ^--!)",
			hot:  "--a--^--b----c---d--|", subs: []string{"     ^"},
			want: "   ---b----|", op: take(1)},
		opCase{it: "should error on empty",
			hot: "--a--^----|", subs: []string{"     ^----!"}, want: "   -----|", op: take(42)},
		opCase{it: "should propagate error from the source observable",
			hot: "---^---#", srcErr: errTooBad, subs: []string{"   ^---!"},
			want: " ----#", wantErr: errTooBad, op: take(42)},
		opCase{it: "should propagate error from an observable with values",
			hot: "---^--a--b--#", subs: []string{"   ^--------!"}, want: " ---a--b--#", op: take(42)},
		opCase{it: "should allow unsubscribing explicitly and early",
			hot:   "---^--a--b-----c--d--e--|",
			unsub: "    ---------!------------",
			subs:  []string{"   ^--------!------------"},
			want:  " ---a--b---            ",
			op:    take(42)},
		opCase{it: "should work with throw",
			cold: " #", subs: []string{"  (^!)"}, want: "#", op: take(42)},
		opCase{it: "should not break unsubscription chain when unsubscribed explicitly",
			hot:   "---^--a--b-----c--d--e--|",
			unsub: "    ---------!            ",
			subs:  []string{"   ^--------!            "},
			want:  " ---a--b---            ",
			op: func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
				return mergeMapOf(take(42)(s, mergeMapOf(e1)))
			}},
	))
	// Not ported: "should be empty if provided with negative value" and
	// "should complete even if the parameter is a string" (rxgo's Take
	// takes a uint), "should unsubscribe from the source when it reaches
	// the limit", "should complete when the source is reentrant", "should
	// stop listening to a synchronous observable when unsubscribed"
	// (synchronous, no marbles); "should unsubscribe from the source when
	// it reaches the limit before a recursive synchronous upstream error
	// is notified" is it.skip in rxjs.
}

func TestConformanceTakeWhile(t *testing.T) {
	takeWhile := func(p func(v any) bool) func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
		return func(_ *Scheduler, e1 rxgo.Observable) rxgo.Observable { return e1.TakeWhile(p) }
	}
	always := takeWhile(func(any) bool { return true })
	notD := takeWhile(func(v any) bool { return v != "d" })
	const source = "--a-^-b--c--d--e--|"
	runRxjsSpec(t, "spec/operators/takeWhile-spec.ts", opCases(
		opCase{it: "should take all elements until predicate is false",
			rxgo: rxgoStopKeepsSource + " (rxjs: ^------!)",
			hot:  "-1-^2--3--4--5--6--|", subs: []string{"   ^"},
			want: " -2--3--|         ", op: takeWhile(func(v any) bool { return num(v) < 4 })},
		opCase{it: "should take all elements with predicate returns true",
			hot: source, subs: []string{"    ^-------------!"},
			want: "  --b--c--d--e--|", op: always},
		opCase{it: "should skip all elements with predicate returns false",
			rxgo: rxgoStopKeepsSource + " (rxjs: ^-!)",
			hot:  source, subs: []string{"    ^"},
			want: "  --|            ", op: takeWhile(func(any) bool { return false })},
		opCase{it: "should take all elements until predicate return false",
			rxgo: rxgoStopKeepsSource + " (rxjs: ^-------!)",
			hot:  source, subs: []string{"    ^"},
			want: "  --b--c--|      ", op: notD},
		opCase{it: "should take elements with predicate when source does not complete",
			hot: "--a-^-b--c--d--e--", subs: []string{"    ^-------------"},
			want: "  --b--c--d--e--", op: always},
		opCase{it: "should not complete when source never completes",
			cold: " -", subs: []string{"  ^"}, want: "-", op: always},
		opCase{it: "should complete when source does not emit",
			hot: "--a-^------------|", subs: []string{"    ^------------!"},
			want: "  -------------|", op: always},
		opCase{it: "should complete when source is empty",
			cold: " |   ", subs: []string{"  (^!)"}, want: "|   ", op: always},
		// rxgo passes no index; a counter gives it.
		opCase{it: "should pass element index to predicate",
			rxgo: rxgoStopKeepsSource + " (rxjs: ^-------!)",
			hot:  source, subs: []string{"    ^"},
			want: "  --b--c--|      ",
			op: func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
				index := 0
				return takeWhile(func(any) bool { index++; return index-1 < 2 })(s, e1)
			}},
		opCase{it: "should raise error when source raises error",
			hot: "--a-^-b--c--d--e--#", subs: []string{"    ^-------------!"},
			want: "  --b--c--d--e--#", op: always},
		opCase{it: "should raise error when source throws",
			cold: " #   ", subs: []string{"  (^!)"}, want: "#   ", op: always},
		opCase{it: "should invoke predicate until return false",
			rxgo: rxgoStopKeepsSource + " (rxjs: ^-------!)",
			hot:  source, subs: []string{"    ^"},
			want: "  --b--c--|      ",
			op: func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
				invoked := 0
				counted(s, 3, &invoked)
				return takeWhile(func(v any) bool { invoked++; return v != "d" })(s, e1)
			}},
		opCase{it: "should take elements until unsubscribed",
			hot:   source,
			unsub: "     -----!         ",
			subs:  []string{"    ^----!         "},
			want:  "  --b---         ", op: notD},
		opCase{it: "should not break unsubscription chain when unsubscribed explicitly",
			hot:   source,
			unsub: "     -----!         ",
			subs:  []string{"    ^----!         "},
			want:  "  --b---         ",
			op: func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
				return mergeMapOf(notD(s, mergeMapOf(e1)))
			}},
	))
	// Not ported: "should take all elements with truthy predicate",
	// "should skip all elements with falsy predicate" (JavaScript
	// truthiness; rxgo's predicate returns a bool), "should take all
	// elements up to and including the element that made the predicate
	// return false" (rxgo's TakeWhile has no inclusive flag), "should
	// raise error if predicate throws" (rxgo's predicate cannot fail),
	// "should support type guards without breaking previous behavior"
	// (TypeScript types), "should stop listening to a synchronous
	// observable when unsubscribed" (synchronous, no marbles).
}

func TestConformanceTakeLast(t *testing.T) {
	takeLast := func(n uint) func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
		return func(_ *Scheduler, e1 rxgo.Observable) rxgo.Observable { return e1.TakeLast(n) }
	}
	const source = " --a-----b----c---d--|    "
	all := []string{"  ^-------------------!    "}
	cases := opCases(
		opCase{it: "should take two values of an observable with many values",
			cold: source, subs: all, want: "--------------------(cd|)", op: takeLast(2)},
		opCase{it: "should take last three values",
			cold: source, subs: all, want: "--------------------(bcd|)", op: takeLast(3)},
		opCase{it: "should take all element when try to take larger then source",
			cold: source, subs: all, want: "--------------------(abcd|)", op: takeLast(5)},
		opCase{it: "should take all element when try to take exact",
			cold: source, subs: all, want: "--------------------(abcd|)", op: takeLast(4)},
		opCase{it: "should work with empty",
			cold: " |", subs: []string{"  (^!)"}, want: "|", op: takeLast(42)},
		opCase{it: "should go on forever on never",
			cold: " -", subs: []string{"  ^"}, want: "-", op: takeLast(42)},
		opCase{it: "should take one value from an observable with one value",
			hot: "  ---(a|)", subs: []string{"  ^--!   "}, want: "---(a|)", op: takeLast(1)},
		opCase{it: "should take one value from an observable with many values",
			hot: "--a--^--b----c---d--|   ", subs: []string{"     ^--------------!   "},
			want: "   ---------------(d|)", op: takeLast(1)},
		opCase{it: "should error on empty",
			hot: "--a--^----|", subs: []string{"     ^----!"}, want: "   -----|", op: takeLast(42)},
		opCase{it: "should propagate error from the source observable",
			hot: "---^---#", srcErr: errTooBad, subs: []string{"   ^---!"},
			want: " ----#", wantErr: errTooBad, op: takeLast(42)},
		opCase{it: "should propagate error from an observable with values",
			rxgo: rxgoEndAfterError + " (rxjs: ---------#).",
			run: func(s *Scheduler) {
				e1 := s.Hot("---^--a--b--#", nil)
				got := recordAll(s, e1.TakeLast(42))
				s.ExpectSubscriptions(e1).ToBe("   ^--------!")
				s.T().Cleanup(func() {
					assert.Equal(s.T(), []string{"9:#", "9:a", "9:b", "9:close"}, got())
				})
			}},
		opCase{it: "should allow unsubscribing explicitly and early",
			hot:   "---^--a--b-----c--d--e--|",
			unsub: "    ---------!            ",
			subs:  []string{"   ^--------!            "},
			want:  " ----------------------",
			op:    takeLast(42)},
		opCase{it: "should work with throw",
			cold: " #", subs: []string{"  (^!)"}, want: "#", op: takeLast(42)},
		opCase{it: "should not break unsubscription chain when unsubscribed explicitly",
			hot:   "---^--a--b-----c--d--e--|",
			unsub: "    ---------!            ",
			subs:  []string{"   ^--------!            "},
			want:  " ----------------------",
			op: func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
				return mergeMapOf(takeLast(42)(s, mergeMapOf(e1)))
			}},
	)
	runRxjsSpec(t, "spec/operators/takeLast-spec.ts", cases)
	// Not ported: "should not take any values" and "should be empty on
	// takeLast(0)" (rxgo's TakeLast(0) keeps its values in a ring of
	// size 0, which is nil: the first value panics on rxgo's goroutine),
	// "should not take any values if provided with negative value"
	// (rxgo's TakeLast takes a uint).
}

func TestConformanceDefaultIfEmpty(t *testing.T) {
	defaultIfEmpty := func(v any) func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
		return func(_ *Scheduler, e1 rxgo.Observable) rxgo.Observable { return e1.DefaultIfEmpty(v) }
	}
	runRxjsSpec(t, "spec/operators/defaultIfEmpty-spec.ts", opCases(
		opCase{it: "should return the Observable if not empty with a default value",
			hot: "  --------|", subs: []string{"  ^-------!"},
			want: "--------(x|)", wantVals: map[string]any{"x": 42}, op: defaultIfEmpty(42)},
		opCase{it: "should return the argument if Observable is empty",
			cold: " |", subs: []string{"  (^!)"}, want: "(x|)", op: defaultIfEmpty("x")},
		opCase{it: "should return the Observable if not empty with a default value",
			hot: "  --a--b--|", subs: []string{"  ^-------!"}, want: "--a--b--|", op: defaultIfEmpty("x")},
		// undefined is Go's nil.
		opCase{it: "should allow undefined as a default value",
			hot: "  --------|", subs: []string{"  ^-------!"},
			want: "--------(U|)", wantVals: map[string]any{"U": nil}, op: defaultIfEmpty(nil)},
		opCase{it: "should allow unsubscribing early and explicitly",
			hot: "  --a--b--|", subs: []string{"  ^---!    "},
			want: "--a--    ", unsub: "   ----!    ", op: defaultIfEmpty("x")},
		opCase{it: "should not break unsubscription chains when unsubscribed explicitly",
			hot: "  --a--b--|", subs: []string{"  ^---!    "},
			want: "--a--    ", unsub: "   ----!    ",
			op: func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
				return mergeMapOf(defaultIfEmpty("x")(s, mergeMapOf(e1)))
			}},
		opCase{it: "should error if the Observable errors",
			rxgo: rxgoEndAfterError + ": here the default value (rxjs: #).",
			run: func(s *Scheduler) {
				e1 := s.Cold(" #", nil)
				got := recordAll(s, e1.DefaultIfEmpty("x"))
				s.ExpectSubscriptions(e1).ToBe("  (^!)")
				s.T().Cleanup(func() {
					assert.Equal(s.T(), []string{"0:#", "0:x", "0:close"}, got())
				})
			}},
	))
	// Not ported: "should stop listening to a synchronous observable when
	// unsubscribed" (synchronous, no marbles).
}
