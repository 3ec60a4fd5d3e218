package marble

import (
	"math"
	"testing"

	"github.com/reactivex/rxgo/v2"
)

// The marble cases of rxjs's filter, skip, skipWhile and ignoreElements specs.

func TestConformanceFilter(t *testing.T) {
	filter := func(p func(x any) bool) func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
		return func(_ *Scheduler, e1 rxgo.Observable) rxgo.Observable { return e1.Filter(p) }
	}
	oddFilter := func(x any) bool { return num(x)%2 == 1 }
	isPrime := func(x any) bool {
		i := num(x)
		if i <= 1 {
			return false
		}
		for j := 2; j <= int(math.Sqrt(float64(i))); j++ {
			if i%j == 0 {
				return false
			}
		}
		return true
	}
	// filter((x, i) => ...): rxgo passes no index; a counter gives it.
	withIndex := func(p func(x any, i int) bool) func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
		return func(_ *Scheduler, e1 rxgo.Observable) rxgo.Observable {
			i := 0
			return e1.Filter(func(x any) bool {
				defer func() { i++ }()
				return p(x, i)
			})
		}
	}
	primeWithIndex := withIndex(func(x any, i int) bool { return isPrime(num(x) + i*10) })
	const primes = "-1--2--^-3-4-5-6--7-8--9--|"
	all := []string{"       ^------------------!"}
	runRxjsSpec(t, "spec/operators/filter-spec.ts", opCases(
		opCase{it: "should filter out even values",
			hot: "  --0--1--2--3--4--|", subs: []string{"  ^----------------!"},
			want: "-----1-----3-----|", op: filter(oddFilter)},
		opCase{it: "should filter in only prime numbers",
			hot: primes, subs: all,
			want: "     --3---5----7-------|", op: filter(isPrime)},
		opCase{it: "should filter with an always-true predicate",
			hot: primes, subs: all,
			want: "     --3-4-5-6--7-8--9--|", op: filter(func(any) bool { return true })},
		opCase{it: "should filter with an always-false predicate",
			hot: primes, subs: all,
			want: "     -------------------|", op: filter(func(any) bool { return false })},
		opCase{it: "should filter in only prime numbers, source unsubscribes early",
			hot: primes, subs: []string{"       ^-----------!       "},
			want:  "     --3---5----7-       ",
			unsub: "        ------------!       ",
			op:    filter(isPrime)},
		opCase{it: "should filter in only prime numbers, source throws",
			hot: "-1--2--^-3-4-5-6--7-8--9--#", subs: all,
			want: "     --3---5----7-------#", op: filter(isPrime)},
		opCase{it: "should filter in only prime numbers, predicate with index",
			hot: primes, subs: all,
			want: "     --3--------7-------|", op: primeWithIndex},
		opCase{it: "should invoke predicate once for each checked value",
			hot: primes, subs: all,
			want: "     --3---5----7-------|",
			op: func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
				invoked := 0
				counted(s, 7, &invoked)
				return filter(func(x any) bool { invoked++; return isPrime(x) })(s, e1)
			}},
		opCase{it: "should filter in only prime numbers, predicate with index, source unsubscribes early",
			hot: primes, subs: []string{"       ^-----------!       "},
			want:  "     --3--------7-       ",
			unsub: "        ------------!       ",
			op:    primeWithIndex},
		opCase{it: "should filter in only prime numbers, predicate with index, source throws",
			hot: "-1--2--^-3-4-5-6--7-8--9--#", subs: all,
			want: "     --3--------7-------#", op: primeWithIndex},
		opCase{it: "should compose with another filter to allow multiples of six",
			hot: primes, subs: all,
			want: "     --------6----------|",
			op: func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
				return filter(func(x any) bool { return num(x)%3 == 0 })(s, filter(func(x any) bool { return num(x)%2 == 0 })(s, e1))
			}},
		// thisArg: closures over a Filterer.
		opCase{it: "should be able to accept and use a thisArg",
			hot: primes, subs: all,
			want: "     --------6----------|",
			op: func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
				filterer := struct{ filter1, filter2 func(x any) bool }{
					filter1: func(x any) bool { return num(x)%2 == 0 },
					filter2: func(x any) bool { return num(x)%3 == 0 },
				}
				return filter(filterer.filter1)(s, filter(filterer.filter2)(s, filter(filterer.filter1)(s, e1)))
			}},
		opCase{it: "should be able to use filter and map composed",
			hot: primes, subs: all,
			want:     "     ----a---b----c-----|",
			wantVals: map[string]any{"a": 16, "b": 36, "c": 64},
			op: func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
				even := filter(func(x any) bool { return num(x)%2 == 0 })(s, e1)
				return mapTo(func(x any) any { return num(x) * num(x) })(s, even)
			}},
		opCase{it: "should propagate errors from the source",
			hot: "  --0--1--2--3--4--#", subs: []string{"  ^----------------!"},
			want: "-----1-----3-----#", op: filter(oddFilter)},
		opCase{it: "should handle empty",
			cold: " |   ", subs: []string{"  (^!)"}, want: "|   ", op: filter(oddFilter)},
		opCase{it: "should handle never",
			cold: " -", subs: []string{"  ^"}, want: "-", op: filter(oddFilter)},
		opCase{it: "should handle throw",
			cold: " #   ", subs: []string{"  (^!)"}, want: "#   ", op: filter(oddFilter)},
		opCase{it: "should not break unsubscription chain when unsubscribed explicitly",
			hot: primes, subs: []string{"       ^-----------!       "},
			want:  "     --3---5----7-       ",
			unsub: "        ------------!       ",
			op: func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
				return mergeMapOf(filter(isPrime)(s, mergeMapOf(e1)))
			}},
		// Boolean: JavaScript's truthiness of a number.
		opCase{it: "should support Boolean as a predicate",
			hot:      "-t--f--^-t-f-t-f--t-f--f--|",
			values:   map[string]any{"t": 1, "f": 0},
			subs:     all,
			want:     "     --t---t----t-------|",
			wantVals: map[string]any{"t": 1, "f": 0},
			op:       filter(func(x any) bool { return x.(int) != 0 })},
	))
	// Not ported: "should filter in only prime numbers, but predicate
	// throws", "should filter in only prime numbers, predicate with index
	// and throws" and "should send errors down the error path" (rxgo's
	// Filter takes a func(any) bool, which cannot fail), "should support
	// type guards without breaking previous behavior" (TypeScript types),
	// "should stop listening to a synchronous observable when
	// unsubscribed" (synchronous, no marbles).
}

func TestConformanceSkip(t *testing.T) {
	skip := func(n uint) func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
		return func(_ *Scheduler, e1 rxgo.Observable) rxgo.Observable { return e1.Skip(n) }
	}
	const source = "--a--b--c--d--e--|"
	subs := []string{"      ^----------------!"}
	errSubs := []string{"      ^-------------!"}
	runRxjsSpec(t, "spec/operators/skip-spec.ts", opCases(
		opCase{it: "should skip values before a total",
			hot: source, subs: subs, want: "  -----------d--e--|", op: skip(3)},
		opCase{it: "should skip all values without error if total is more than actual number of values",
			hot: source, subs: subs, want: "  -----------------|", op: skip(6)},
		opCase{it: "should skip all values without error if total is same as actual number of values",
			hot: source, subs: subs, want: "  -----------------|", op: skip(5)},
		opCase{it: "should not skip if count is zero",
			hot: source, subs: subs, want: "  --a--b--c--d--e--|", op: skip(0)},
		opCase{it: "should allow unsubscribing explicitly and early",
			hot:   source,
			unsub: "     ----------!       ",
			subs:  []string{"      ^---------!       "},
			want:  "  --------c--       ",
			op:    skip(2)},
		opCase{it: "should not break unsubscription chains when result is unsubscribed explicitly",
			hot:   source,
			subs:  []string{"      ^---------!       "},
			want:  "  --------c--       ",
			unsub: "     ----------!       ",
			op: func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
				return mergeMapOf(skip(2)(s, mergeMapOf(e1)))
			}},
		opCase{it: "should raise error if skip count is more than actual number of emits and source raises error",
			hot: "--a--b--c--d--#", subs: errSubs, want: "  --------------#", op: skip(6)},
		opCase{it: "should raise error if skip count is same as emits of source and source raises error",
			hot: "--a--b--c--d--#", subs: errSubs, want: "  --------------#", op: skip(4)},
		opCase{it: "should skip values before a total and raises error if source raises error",
			hot: "--a--b--c--d--#", subs: errSubs, want: "  -----------d--#", op: skip(3)},
		opCase{it: "should complete regardless of skip count if source is empty",
			cold: " |", subs: []string{"  (^!)"}, want: "|", op: skip(3)},
		opCase{it: "should not complete if source never completes without emit",
			hot: "  -", subs: []string{"  ^"}, want: "-", op: skip(3)},
		opCase{it: "should skip values before total and never completes if source emits and does not complete",
			hot: "  --a--b--c-", subs: []string{"  ^         "}, want: "-----b--c-", op: skip(1)},
		opCase{it: "should skip all values and never completes if total is more than numbers of value and source does not complete",
			hot: "  --a--b--c-", subs: []string{"  ^         "}, want: "----------", op: skip(6)},
		opCase{it: "should skip all values and never completes if total is same asnumbers of value and source does not complete",
			hot: "  --a--b--c-", subs: []string{"  ^         "}, want: "----------", op: skip(3)},
		opCase{it: "should raise error if source throws",
			cold: " #", subs: []string{"  (^!)"}, want: "#", op: skip(3)},
	))
	// Not ported: "should not skip if count is negative value" (rxgo's
	// Skip takes a uint), "should stop listening to a synchronous
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
