package marble

import (
	"context"
	"fmt"
	"testing"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"
)

// The marble cases of rxjs's map and scan specs.

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
