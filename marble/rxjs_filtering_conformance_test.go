package marble

import (
	"context"
	"errors"
	"testing"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"
)

// The marble cases of rxjs's takeLast, takeWhile, skipWhile,
// distinctUntilChanged, ignoreElements and defaultIfEmpty specs.

// rxgoStopKeepsSource is the note of cases where an rxgo operator ends
// before its source: it stops reading the source but does not cancel it.
const rxgoStopKeepsSource = "rxjs unsubscribes from the source when the operator completes early. " +
	"rxgo's operator completes but does not cancel its source, which stays subscribed " +
	"until the end of Run (its next value finds nobody reading)."

// rxgoEndAfterError is the note of operators whose end step runs after an
// error too: rxgo calls it whenever its loop stops.
const rxgoEndAfterError = "rxjs emits nothing after an error. rxgo's operator emits what its end " +
	"step holds after the error too, then closes"

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

func TestConformanceSkipWhile(t *testing.T) {
	skipWhile := func(p func(v any) bool) func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
		return func(_ *Scheduler, e1 rxgo.Observable) rxgo.Observable { return e1.SkipWhile(p) }
	}
	// skipWhile((v, index) => index < n): rxgo passes no index; a counter
	// gives it.
	indexBelow := func(n int) func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
		return func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
			index := 0
			return skipWhile(func(any) bool { index++; return index-1 < n })(s, e1)
		}
	}
	const numbers = "-1-^2--3--4--5--6--|"
	const letters = "--a--b-^-c--d--e--f--g--h--|"
	runRxjsSpec(t, "spec/operators/skipWhile-spec.ts", opCases(
		opCase{it: "should skip all elements until predicate is false",
			hot: numbers, subs: []string{"   ^---------------!"},
			want: "     -------4--5--6--|", op: skipWhile(func(v any) bool { return num(v) < 4 })},
		opCase{it: "should skip all elements with a true predicate",
			hot: numbers, subs: []string{"   ^---------------!"},
			want: "     ----------------|", op: skipWhile(func(any) bool { return true })},
		opCase{it: "should not skip any element with a false predicate",
			hot: numbers, subs: []string{"   ^---------------!"},
			want: "     -2--3--4--5--6--|", op: skipWhile(func(any) bool { return false })},
		opCase{it: "should skip elements on hot source",
			hot: "--1--2-^-3--4--5--6--7--8--", subs: []string{"       ^-------------------"},
			want: "         --------5--6--7--8--", op: skipWhile(func(v any) bool { return num(v) < 5 })},
		opCase{it: "should be possible to skip using the element's index",
			hot: letters, subs: []string{"       ^-------------------!"},
			want: "         --------e--f--g--h--|", op: indexBelow(2)},
		opCase{it: "should skip using index with source unsubscribes early",
			hot:   letters,
			subs:  []string{"       ^----------!         "},
			unsub: "            -----------!         ",
			want:  "         -----d--e---         ", op: indexBelow(1)},
		opCase{it: "should not break unsubscription chains when result is unsubscribed explicitly",
			hot:   letters,
			subs:  []string{"       ^----------!         "},
			want:  "         -----d--e---         ",
			unsub: "            -----------!         ",
			op: func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
				return mergeMapOf(indexBelow(1)(s, mergeMapOf(e1)))
			}},
		opCase{it: "should skip using value with source throws",
			hot: "--a--b-^-c--d--e--f--g--h--#", subs: []string{"       ^-------------------!"},
			want: "         -----d--e--f--g--h--#", op: skipWhile(func(v any) bool { return v != "d" })},
		opCase{it: "should invoke predicate while its false and never again",
			hot: letters, subs: []string{"       ^-------------------!"},
			want: "         --------e--f--g--h--|",
			op: func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
				invoked := 0
				counted(s, 3, &invoked)
				return skipWhile(func(v any) bool { invoked++; return v != "e" })(s, e1)
			}},
		opCase{it: "should handle Observable.empty",
			cold: "|   ", subs: []string{"       (^!)"}, want: "   |   ", op: skipWhile(func(any) bool { return true })},
		opCase{it: "should handle Observable.never",
			cold: "-", subs: []string{"       ^"}, want: "   -", op: skipWhile(func(any) bool { return true })},
		opCase{it: "should handle Observable.throw",
			cold: "#   ", subs: []string{"       (^!)"}, want: "   #   ", op: skipWhile(func(any) bool { return true })},
	))
	// Not ported: "should skip all elements with a truthy predicate",
	// "should not skip any elements with a falsy predicate" (JavaScript
	// truthiness), "should handle predicate that throws" (rxgo's
	// predicate cannot fail), "should stop listening to a synchronous
	// observable when unsubscribed" (synchronous, no marbles).
}

func TestConformanceDistinctUntilChanged(t *testing.T) {
	distinctUntilChanged := func(key func(v any) (any, error)) func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
		return func(_ *Scheduler, e1 rxgo.Observable) rxgo.Observable {
			return e1.DistinctUntilChanged(func(_ context.Context, v any) (any, error) { return key(v) })
		}
	}
	// distinctUntilChanged() with no key selector: rxgo's needs one.
	identity := distinctUntilChanged(func(v any) (any, error) { return v, nil })
	errError := errors.New("error")
	cases := opCases(
		opCase{it: "should distinguish between values",
			hot: "  -1--2-2----1-3-|", subs: []string{"  ^--------------!"},
			want: "-1--2------1-3-|", op: identity},
		opCase{it: "should distinguish between values",
			hot: "  --a--a--a--b--b--a--|", subs: []string{"  ^-------------------!"},
			want: "--a--------b-----a--|", op: identity},
		opCase{it: "should distinguish between values and does not complete",
			hot: "  --a--a--a--b--b--a-", subs: []string{"  ^------------------"},
			want: "--a--------b-----a-", op: identity},
		opCase{it: "should not complete if source never completes",
			cold: " -", subs: []string{"  ^"}, want: "-", op: identity},
		opCase{it: "should not complete if source does not complete",
			hot: "  -", subs: []string{"  ^"}, want: "-", op: identity},
		opCase{it: "should complete if source is empty",
			cold: " |   ", subs: []string{"  (^!)"}, want: "|   ", op: identity},
		opCase{it: "should complete if source does not emit",
			hot: "  ------|", subs: []string{"  ^-----!"}, want: "------|", op: identity},
		opCase{it: "should emit if source emits single element only",
			hot: "  --a--|", subs: []string{"  ^----!"}, want: "--a--|", op: identity},
		// of('a') is rxgo's Just("a").
		opCase{it: "should emit if source is scalar",
			run: func(s *Scheduler) {
				s.ExpectObservable(identity(s, rxgo.Just("a")())).ToBe("(a|)", nil)
			}},
		opCase{it: "should raise error if source raises error",
			hot: "  --a--a--#", subs: []string{"  ^-------!"}, want: "--a-----#", op: identity},
		opCase{it: "should raise error if source throws",
			cold: " #   ", subs: []string{"  (^!)"}, want: "#   ", op: identity},
		opCase{it: "should not omit if source elements are all different",
			hot: "  --a--b--c--d--e--f--|", subs: []string{"  ^-------------------!"},
			want: "--a--b--c--d--e--f--|", op: identity},
		opCase{it: "should allow unsubscribing early and explicitly",
			hot:   "  --a--b--b--d--a--f--|",
			subs:  []string{"  ^---------!          "},
			want:  "--a--b-----          ",
			unsub: "   ----------!          ", op: identity},
		opCase{it: "should not break unsubscription chains when unsubscribed explicitly",
			hot:   "  --a--b--b--d--a--f--|",
			subs:  []string{"  ^---------!          "},
			want:  "--a--b-----          ",
			unsub: "   ----------!          ",
			op: func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
				return mergeMapOf(identity(s, mergeMapOf(e1)))
			}},
		opCase{it: "should emit once if source elements are all same",
			hot: "  --a--a--a--a--a--a--|", subs: []string{"  ^-------------------!"},
			want: "--a-----------------|", op: identity},
		opCase{it: "should use the keySelector even for the first emit",
			hot: "  --a--b--|", values: map[string]any{"a": 2, "b": 4}, subs: []string{"  ^-------!"},
			want: "--a-----|", wantVals: map[string]any{"a": 2},
			op: distinctUntilChanged(func(v any) (any, error) { return v.(int) % 2, nil })},
		opCase{it: "should raise error when keySelector throws",
			rxgo: rxgoErrorKeepsSource + " (rxjs: ^----------!)",
			hot:  "  --a--b--c--d--e--f--|", subs: []string{"  ^"},
			want: "--a--b--c--#         ", wantErr: errError,
			op: distinctUntilChanged(func(v any) (any, error) {
				if v == "d" {
					return nil, errError
				}
				return v, nil
			})},
	)
	runRxjsSpec(t, "spec/operators/distinctUntilChanged-spec.ts", cases)
	// Not ported: "should emit once if comparator returns true always
	// regardless of source emits", "should emit all if comparator returns
	// false always regardless of source emits", "should distinguish values
	// by comparator", "should raise error when comparator throws", "should
	// use the keySelector to pick comparator values" (rxgo's
	// DistinctUntilChanged compares keys with ==, it takes no
	// comparator), "should stop listening to a synchronous observable when
	// unsubscribed" and "should work properly with reentrant streams"
	// (synchronous, no marbles).
}

func TestConformanceIgnoreElements(t *testing.T) {
	ignore := func(_ *Scheduler, e1 rxgo.Observable) rxgo.Observable { return e1.IgnoreElements() }
	runRxjsSpec(t, "spec/operators/ignoreElements-spec.ts", opCases(
		opCase{it: "should ignore all the elements of the source",
			hot: "  --a--b--c--d--|", subs: []string{"  ^-------------!"},
			want: "--------------|", op: ignore},
		opCase{it: "should allow unsubscribing early and explicitly",
			hot: "  --a--b--c--d--|", subs: []string{"  ^------!       "},
			want: "--------       ", unsub: "   -------!       ", op: ignore},
		opCase{it: "should allow unsubscribing early and explicitly with higher order",
			hot: "  --a--b--c--d--|", subs: []string{"  ^------!       "},
			want: "--------       ", unsub: "   -------!       ",
			op: func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
				return mergeMapOf(ignore(s, mergeMapOf(e1)))
			}},
		opCase{it: "should propagate errors from the source",
			hot: "  --a--#", subs: []string{"  ^----!"}, want: "-----#", op: ignore},
		opCase{it: "should handle empty",
			cold: " |   ", subs: []string{"  (^!)"}, want: "|   ", op: ignore},
		opCase{it: "should handle never",
			cold: " -", subs: []string{"  ^"}, want: "-", op: ignore},
		opCase{it: "should handle throw",
			cold: "  #  ", subs: []string{"  (^!)"}, want: "#   ", op: ignore},
	))
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
