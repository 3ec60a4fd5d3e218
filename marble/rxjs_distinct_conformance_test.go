package marble

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/reactivex/rxgo/v2"
)

// The marble cases of rxjs's distinct and distinctUntilChanged specs.

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
