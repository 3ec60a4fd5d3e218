package marble

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"
)

// The marble cases of rxjs's specs of the operators rxgo has with the same
// meaning: map, filter, skip, scan, distinct, take.

// mergeMapOf is rxjs's mergeMap(x => of(x)), which the specs put around
// an operator to check that an unsubscription crosses it. of(x) is a
// Defer that sends x, not rxgo.Just(x), which would send each element of
// a slice.
func mergeMapOf(o rxgo.Observable) rxgo.Observable {
	return o.FlatMap(func(item rxgo.Item) rxgo.Observable {
		return rxgo.Defer([]rxgo.Producer{func(ctx context.Context, next chan<- rxgo.Item) {
			item.SendContext(ctx, next)
		}})
	})
}

// counted checks, when the run ends, that a function was called n times
// (the specs' tap({complete() { expect(invoked)... }})).
func counted(s *Scheduler, n int, invoked *int) {
	s.T().Cleanup(func() { assert.Equal(s.T(), n, *invoked, "invocations") })
}

// rxgoErrorKeepsSource is the note of cases where a function passed to an
// rxgo operator fails.
const rxgoErrorKeepsSource = "rxjs unsubscribes from the source when the function throws. rxgo's " +
	"operator emits the error and stops reading, but does not cancel its source, which stays " +
	"subscribed (until its own | or #, or the end of Run)."

func TestConformanceMap(t *testing.T) {
	addDrama := func(x any) any { return fmt.Sprint(x) + "!" }
	// map((x, index) => ...): rxgo passes no index; a counter gives it.
	withIndex := func(f func(x any, index int) any) func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
		return func(_ *Scheduler, e1 rxgo.Observable) rxgo.Observable {
			index := 0
			return e1.Map(func(_ context.Context, x any) (any, error) {
				defer func() { index++ }()
				return f(x, index), nil
			})
		}
	}
	indexValues := map[string]any{"a": 5, "b": 14, "c": 23, "d": 32}
	runRxjsSpec(t, "spec/operators/map-spec.ts", opCases(
		opCase{it: "should map multiple values",
			cold:     " --1--2--3--|",
			subs:     []string{"  ^----------!"},
			want:     "--x--y--z--|",
			wantVals: map[string]any{"x": 10, "y": 20, "z": 30},
			op:       mapTo(func(x any) any { return 10 * num(x) }),
		},
		opCase{it: "should map one value",
			cold:     " --x--|",
			values:   map[string]any{"x": 42},
			subs:     []string{"  ^----!"},
			want:     "--y--|",
			wantVals: map[string]any{"y": "42!"},
			op:       mapTo(addDrama),
		},
		opCase{it: "should map multiple values",
			cold:     " --1--2--3--|",
			subs:     []string{"  ^----------!"},
			want:     "--x--y--z--|",
			wantVals: map[string]any{"x": "1!", "y": "2!", "z": "3!"},
			op:       mapTo(addDrama),
		},
		opCase{it: "should propagate errors from map function",
			rxgo:    rxgoErrorKeepsSource + " Here e1 ends with its own | at frame 5 (rxjs: ^-!).",
			cold:    " --x--|",
			values:  map[string]any{"x": 42},
			subs:    []string{"  ^----!"},
			want:    "--#   ",
			wantErr: errTooBad,
			op: func(_ *Scheduler, e1 rxgo.Observable) rxgo.Observable {
				return e1.Map(func(context.Context, any) (any, error) { return nil, errTooBad })
			},
		},
		opCase{it: "should propagate errors from observable that emits only errors",
			cold: " #   ",
			subs: []string{"  (^!)"},
			want: "#   ",
			op:   mapTo(func(x any) any { return x }),
		},
		opCase{it: "should propagate errors from observable that emit values",
			cold:     " --a--b--#",
			values:   map[string]any{"a": 1, "b": 2},
			srcErr:   errTooBad,
			subs:     []string{"  ^-------!"},
			want:     "--x--y--#",
			wantVals: map[string]any{"x": "1!", "y": "2!"},
			wantErr:  errTooBad,
			op:       mapTo(addDrama),
		},
		opCase{it: "should not map an empty observable",
			cold: " |   ",
			subs: []string{"  (^!)"},
			want: "|   ",
			op: func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
				invoked := 0
				counted(s, 0, &invoked)
				return mapTo(func(x any) any { invoked++; return x })(s, e1)
			},
		},
		opCase{it: "should allow unsubscribing explicitly and early",
			cold:     " --1--2--3--|",
			subs:     []string{"  ^-----!     "},
			want:     "--x--y-     ",
			unsub:    "   ------!     ",
			wantVals: map[string]any{"x": "1!", "y": "2!"},
			op:       mapTo(addDrama),
		},
		opCase{it: "should map with index",
			hot:      "-5-^-4--3---2----1--|",
			subs:     []string{"   ^----------------!"},
			want:     " --a--b---c----d--|",
			wantVals: indexValues,
			op:       withIndex(func(x any, index int) any { return num(x) + 1 + index*10 }),
		},
		opCase{it: "should map with index until completed",
			hot:      "-5-^-4--3---2----1--|",
			subs:     []string{"   ^----------------!"},
			want:     " --a--b---c----d--|",
			wantVals: indexValues,
			op: func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
				invoked := 0
				counted(s, 4, &invoked)
				return withIndex(func(x any, index int) any { invoked++; return num(x) + 1 + index*10 })(s, e1)
			},
		},
		opCase{it: "should map with index until an error occurs",
			hot:      "-5-^-4--3---2----1--#",
			srcErr:   errTooBad,
			subs:     []string{"   ^----------------!"},
			want:     " --a--b---c----d--#",
			wantVals: indexValues,
			wantErr:  errTooBad,
			op: func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
				invoked := 0
				counted(s, 4, &invoked)
				return withIndex(func(x any, index int) any { invoked++; return num(x) + 1 + index*10 })(s, e1)
			},
		},
		// thisArg: a closure over foo.
		opCase{it: "should map using a custom thisArg",
			hot:      "-5-^-4--3---2----1--|",
			subs:     []string{"   ^----------------!"},
			want:     " --a--b---c----d--|",
			wantVals: map[string]any{"a": 46, "b": 55, "c": 64, "d": 73},
			op: func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
				foo := struct{ value int }{42}
				return withIndex(func(x any, index int) any { return num(x) + foo.value + index*10 })(s, e1)
			},
		},
		opCase{it: "should map twice",
			hot:      "-0----1-^-2---3--4-5--6--7-8-|",
			subs:     []string{"        ^--------------------!"},
			want:     "      --a---b--c-d--e--f-g-|",
			wantVals: map[string]any{"a": 2, "b": 3, "c": 4, "d": 5, "e": 6, "f": 7, "g": 8},
			op: func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
				invoked1, invoked2 := 0, 0
				counted(s, 7, &invoked1)
				counted(s, 7, &invoked2)
				doubled := mapTo(func(x any) any { invoked1++; return num(x) * 2 })(s, e1)
				return mapTo(func(x any) any { invoked2++; return x.(int) / 2 })(s, doubled)
			},
		},
		opCase{it: "should do multiple maps using a custom thisArg",
			hot:      "  --1--2--3--4--|",
			subs:     []string{"  ^-------------!"},
			want:     "--a--b--c--d--|",
			wantVals: map[string]any{"a": 11, "b": 14, "c": 17, "d": 20},
			op: func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
				selector1 := mapTo(func(x any) any { return num(x) + 2 })
				selector2 := mapTo(func(x any) any { return num(x) * 3 })
				return selector1(s, selector2(s, selector1(s, e1)))
			},
		},
		opCase{it: "should not break unsubscription chain when unsubscribed explicitly",
			cold:     " --1--2--3--|",
			subs:     []string{"  ^-----!     "},
			want:     "--x--y-     ",
			unsub:    "   ------!     ",
			wantVals: map[string]any{"x": "1!", "y": "2!"},
			op: func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
				return mergeMapOf(mapTo(addDrama)(s, mergeMapOf(e1)))
			},
		},
	))
	// Not ported: "should stop listening to a synchronous observable when
	// unsubscribed" (synchronous, no marbles).
}

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

func TestConformanceScan(t *testing.T) {
	// rxgo's Scan has no seed: its accumulator starts at nil, so a seed
	// is what the accumulator makes of nil.
	scan := func(f func(acc, x any) (any, error)) func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
		return func(_ *Scheduler, e1 rxgo.Observable) rxgo.Observable {
			return e1.Scan(func(_ context.Context, acc, x any) (any, error) { return f(acc, x) })
		}
	}
	// acc.concat(x) with the seed [].
	concat := func(acc, x any) (any, error) {
		list, _ := acc.([]any)
		return append(append([]any(nil), list...), x), nil
	}
	lists := map[string]any{
		"u": []any{"b"},
		"v": []any{"b", "c"},
		"w": []any{"b", "c", "d"},
		"x": []any{"b", "c", "d", "e"},
		"y": []any{"b", "c", "d", "e", "f"},
		"z": []any{"b", "c", "d", "e", "f", "g"},
	}
	sums := map[string]any{"a": 1, "b": 3, "c": 5, "x": 1, "y": 4, "z": 9}
	sum := func(acc, x any) (any, error) {
		o, _ := acc.(int) // the seed 0
		return o + x.(int), nil
	}
	runRxjsSpec(t, "spec/operators/scan-spec.ts", opCases(
		opCase{it: "should scan",
			hot: "  --a--b--c--|", values: sums, subs: []string{"  ^----------!"},
			want: "--x--y--z--|", wantVals: sums, op: scan(sum)},
		opCase{it: "should scan things",
			hot: "--a--^--b--c--d--e--f--g--|", subs: []string{"     ^--------------------!"},
			want: "   ---u--v--w--x--y--z--|", wantVals: lists, op: scan(concat)},
		// undefined is Go's nil.
		opCase{it: "should scan with a seed of undefined",
			hot: "--a--^--b--c--d--e--f--g--|", subs: []string{"     ^--------------------!"},
			want: "   ---u--v--w--x--y--z--|",
			wantVals: map[string]any{
				"u": "<nil> b",
				"v": "<nil> b c",
				"w": "<nil> b c d",
				"x": "<nil> b c d e",
				"y": "<nil> b c d e f",
				"z": "<nil> b c d e f g",
			},
			op: scan(func(acc, x any) (any, error) {
				if acc == nil {
					return fmt.Sprintf("%v %v", acc, x), nil
				}
				return fmt.Sprintf("%s %v", acc, x), nil
			})},
		// Without a seed, rxjs emits the first value as the accumulator;
		// rxgo calls the accumulator with nil, which does the same here.
		opCase{it: "should scan without seed",
			hot: "--a--^--b--c--d--|", subs: []string{"     ^-----------!"},
			want:     "   ---x--y--z--|",
			wantVals: map[string]any{"x": "b", "y": "bc", "z": "bcd"},
			op: scan(func(acc, x any) (any, error) {
				if acc == nil {
					return x, nil
				}
				return acc.(string) + x.(string), nil
			})},
		opCase{it: "should handle errors",
			hot: "--a--^--b--c--d--#", subs: []string{"     ^-----------!"},
			want: "   ---u--v--w--#", wantVals: lists, op: scan(concat)},
		opCase{it: "should handle errors in the projection function",
			rxgo: rxgoErrorKeepsSource + " (rxjs: ^--------!)",
			hot:  "--a--^--b--c--d--e--f--g--|", subs: []string{"     ^"},
			want: "   ---u--v--#            ", wantVals: lists, wantErr: errBad,
			op: scan(func(acc, x any) (any, error) {
				if x == "d" {
					return nil, errBad
				}
				return concat(acc, x)
			})},
		opCase{it: "handle empty",
			cold: " |   ", subs: []string{"  (^!)"}, want: "|   ", op: scan(concat)},
		opCase{it: "handle never",
			cold: " -", subs: []string{"  ^"}, want: "-", op: scan(concat)},
		opCase{it: "handle throw",
			cold: " #   ", subs: []string{"  (^!)"}, want: "#   ", op: scan(concat)},
		opCase{it: "should allow unsubscribing explicitly and early",
			hot:   "--a--^--b--c--d--e--f--g--|",
			unsub: "      --------------!       ",
			subs:  []string{"     ^-------------!       "},
			want:  "   ---u--v--w--x--       ", wantVals: lists, op: scan(concat)},
		opCase{it: "should not break unsubscription chains when result is unsubscribed explicitly",
			hot:      "--a--^--b--c--d--e--f--g--|",
			subs:     []string{"     ^-------------!       "},
			want:     "   ---u--v--w--x--       ",
			unsub:    "      --------------!       ",
			wantVals: lists,
			op: func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
				return mergeMapOf(scan(concat)(s, mergeMapOf(e1)))
			}},
		// rxgo passes no index; a counter gives it.
		opCase{it: "should pass current index to accumulator",
			hot: "  --a--b--c--|", values: sums, subs: []string{"  ^----------!"},
			want: "--x--y--z--|", wantVals: sums,
			op: func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
				var indexes []int
				index := 0
				s.T().Cleanup(func() { assert.Equal(s.T(), []int{0, 1, 2}, indexes) })
				return scan(func(acc, x any) (any, error) {
					indexes = append(indexes, index)
					index++
					return sum(acc, x)
				})(s, e1)
			}},
	))
	// Not ported: "should provide the proper index if seed is skipped"
	// and "should stop listening to a synchronous observable when
	// unsubscribed" (synchronous, no marbles).
}

func TestConformanceDistinct(t *testing.T) {
	distinct := func(key func(x any) (any, error)) func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
		return func(_ *Scheduler, e1 rxgo.Observable) rxgo.Observable {
			return e1.Distinct(func(_ context.Context, x any) (any, error) { return key(x) })
		}
	}
	// distinct() with no key selector: rxgo's Distinct needs one.
	identity := distinct(func(x any) (any, error) { return x, nil })
	errDumb := fmt.Errorf("d is for dumb")
	runRxjsSpec(t, "spec/operators/distinct-spec.ts", opCases(
		opCase{it: "should distinguish between values",
			hot: "  --a--a--a--b--b--a--|", subs: []string{"  ^-------------------!"},
			want: "--a--------b--------|", op: identity},
		opCase{it: "should distinguish between values and does not complete",
			hot: "  --a--a--a--b--b--a-", subs: []string{"  ^------------------"},
			want: "--a--------b-------", op: identity},
		opCase{it: "should not complete if source never completes",
			cold: " -", subs: []string{"  ^"}, want: "-", op: identity},
		opCase{it: "should not complete if source does not complete",
			hot: "  -", subs: []string{"  ^"}, want: "-", op: identity},
		opCase{it: "should complete if source is empty",
			cold: " |", subs: []string{"  (^!)"}, want: "|", op: identity},
		opCase{it: "should complete if source does not emit",
			hot: "  ------|", subs: []string{"  ^-----!"}, want: "------|", op: identity},
		opCase{it: "should emit if source emits single element only",
			hot: "  --a--|", subs: []string{"  ^----!"}, want: "--a--|", op: identity},
		// of('a') is rxgo's Just("a").
		opCase{it: "should emit if source is scalar",
			run: func(s *Scheduler) {
				s.ExpectObservable(identity(s, rxgo.Just("a")())).ToBe("(a|)", nil)
			}},
		opCase{it: "should raises error if source raises error",
			hot: "  --a--a--#", subs: []string{"  ^-------!"}, want: "--a-----#", op: identity},
		opCase{it: "should raises error if source throws",
			cold: " #   ", subs: []string{"  (^!)"}, want: "#   ", op: identity},
		opCase{it: "should not omit if source elements are all different",
			hot: "  --a--b--c--d--e--f--|", subs: []string{"  ^-------------------!"},
			want: "--a--b--c--d--e--f--|", op: identity},
		opCase{it: "should allow unsubscribing early and explicitly",
			hot:   "  --a--b--b--d--a--f--|",
			subs:  []string{"  ^---------!          "},
			want:  "--a--b-----          ",
			unsub: "   ----------!          ",
			op:    identity},
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
		opCase{it: "should distinguish values by key",
			hot:    "  --a--b--c--d--e--f--|",
			values: map[string]any{"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6},
			subs:   []string{"  ^-------------------!"},
			want:   "--a--b--c-----------|", wantVals: map[string]any{"a": 1, "b": 2, "c": 3},
			op: distinct(func(x any) (any, error) { return x.(int) % 3, nil })},
		opCase{it: "should raises error when selector throws",
			rxgo: rxgoErrorKeepsSource + " (rxjs: ^----------!)",
			hot:  "  --a--b--c--d--e--f--|", subs: []string{"  ^"},
			want: "--a--b--c--#         ", wantErr: errDumb,
			op: distinct(func(x any) (any, error) {
				if x == "d" {
					return nil, errDumb
				}
				return x, nil
			})},
	))
	// Not ported: "should support a flushing stream", "should raise error
	// if flush raises error", "should unsubscribe from the flushing stream
	// when the main stream is unsubbed", "should allow opting in to
	// default comparator with flush" (rxgo's Distinct has no flushes
	// argument), "should stop listening to a synchronous observable when
	// unsubscribed" (synchronous, no marbles).
}

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
