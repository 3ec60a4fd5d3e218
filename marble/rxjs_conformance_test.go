package marble

// The rxjs conformance suite: the marble cases of rxjs 7.8.2's own specs
// (spec/schedulers/TestScheduler-spec.ts, spec/operators/*-spec.ts,
// spec/observables/*-spec.ts), ported one it(...) per subtest, named by
// that it(...)'s text, under a test named by the spec file. Marbles are
// copied as rxjs writes them, alignment spaces included.
//
// Where rxgo's operator behaves differently from rxjs's, the case keeps
// rxgo's behaviour and its rxgo field says how rxjs differs: a reader
// learns what to expect from rxgo. The harness itself must behave as
// rxjs's TestScheduler does; a case it fails is a harness bug. The one
// exception is by design: at one instant, the pipeline's own timers fire
// before the sources emit (doc.go), where rxjs lets the sources go first;
// a case that shows it says so in its harness field.
//
// Where no marble can say what rxgo does (some rxgo operators emit after
// an error), the case lists the notifications with recordAll.
//
// Cases that cannot be ported are listed, with the reason, in a comment
// at the end of each spec's table: rxjs features with no rxgo counterpart
// (an index argument rxgo does not pass is emulated with a counter, but a
// predicate cannot throw in rxgo), synchronous cases without marbles, and
// scheduler internals (animation frames, asap, setImmediate).

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"
)

// rxjsCase is one it(...) of an rxjs spec.
type rxjsCase struct {
	// it is the text of the it(...), verbatim.
	it string
	// rxgo, when set, says how rxjs differs: rxgo's operator behaves
	// otherwise and the case expects rxgo's behaviour.
	rxgo string
	// harness, when set, says how this harness orders events otherwise
	// than rxjs's TestScheduler, by design (see doc.go), and what rxjs
	// expects: the case expects the harness's order.
	harness string
	// run is a run-mode case, run by Run; test a case without a
	// scheduler (parse-level). One of the two is set.
	run  func(s *Scheduler)
	test func(t *testing.T)
}

// runRxjsSpec runs the cases of one rxjs spec file as subtests.
func runRxjsSpec(t *testing.T, spec string, cases []rxjsCase) {
	t.Helper()
	annotated, harness := 0, 0
	for _, c := range cases {
		if c.rxgo != "" {
			annotated++
		}
		if c.harness != "" {
			harness++
		}
		t.Run(c.it, func(t *testing.T) {
			if c.test != nil {
				c.test(t)
				return
			}
			Run(t, c.run)
		})
	}
	t.Logf("%s: %d cases ported, %d annotated as rxgo-specific, %d as the harness's order", spec, len(cases), annotated, harness)
}

// opCase is the usual shape of an operator spec's it(...): a source e1
// (hot or cold), the pipeline under test, what it must emit, and e1's
// subscriptions.
type opCase struct {
	it      string
	rxgo    string
	harness string

	hot, cold string // e1's marble: one of the two
	values    map[string]any
	srcErr    error // what e1's # stands for, if not ErrMarble
	unsub     string
	op        func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable
	want      string
	wantVals  map[string]any
	wantErr   error // what want's # stands for, if not ErrMarble
	subs      []string
	// run, when set, replaces all of the above but it and rxgo: for a
	// case without e1.
	run func(s *Scheduler)
}

func (c opCase) rxjsCase() rxjsCase {
	if c.run != nil {
		return rxjsCase{it: c.it, rxgo: c.rxgo, harness: c.harness, run: c.run}
	}
	return rxjsCase{it: c.it, rxgo: c.rxgo, harness: c.harness, run: func(s *Scheduler) {
		var e1 rxgo.Observable
		if c.hot != "" {
			e1 = s.Hot(c.hot, c.values, errOpt(c.srcErr)...)
		} else {
			e1 = s.Cold(c.cold, c.values, errOpt(c.srcErr)...)
		}
		var unsub []string
		if c.unsub != "" {
			unsub = []string{c.unsub}
		}
		s.ExpectObservable(c.op(s, e1), unsub...).ToBe(c.want, c.wantVals, errOpt(c.wantErr)...)
		if c.subs != nil {
			s.ExpectSubscriptions(e1).ToBe(c.subs...)
		}
	}}
}

func opCases(cs ...opCase) []rxjsCase {
	out := make([]rxjsCase, len(cs))
	for i, c := range cs {
		out[i] = c.rxjsCase()
	}
	return out
}

func errOpt(err error) []MarbleOption {
	if err == nil {
		return nil
	}
	return []MarbleOption{WithError(err)}
}

// The errors rxjs's specs throw, as strings ('bad!' loses its !, which
// Go's error strings do without).
var (
	errTooBad = errors.New("too bad")
	errBad    = errors.New("bad")
)

// num is JavaScript's unary +: a marble's default value is its letter
// or digit as a string.
func num(v any) int {
	switch v := v.(type) {
	case int:
		return v
	case string:
		n, err := strconv.Atoi(v)
		if err != nil {
			panic(err)
		}
		return n
	}
	panic("num: not a number")
}

// mapTo is rxgo's Map with a function that cannot fail.
func mapTo(f func(v any) any) func(s *Scheduler, e1 rxgo.Observable) rxgo.Observable {
	return func(_ *Scheduler, e1 rxgo.Observable) rxgo.Observable {
		return e1.Map(func(_ context.Context, v any) (any, error) { return f(v), nil })
	}
}

// concatDelay is rxgo's concatMap(d => of(d).pipe(delay(after))): rxgo's
// FlatMap observes one inner observable at a time, and Concat of a Timer
// and Just delays the value.
func concatDelay(after time.Duration) func(rxgo.Observable) rxgo.Observable {
	return func(o rxgo.Observable) rxgo.Observable {
		return o.FlatMap(func(item rxgo.Item) rxgo.Observable {
			if item.Error() {
				return rxgo.Thrown(item.E)
			}
			return rxgo.Concat([]rxgo.Observable{rxgo.Timer(rxgo.WithDuration(after)), rxgo.Just(item.V)()})
		})
	}
}

// recordAll subscribes to obs at frame 0 and returns, once Run has ended,
// what it emitted: "frame:value", "frame:#" for an error and "frame:close"
// when it closed its channel. It is for rxgo behaviours no marble can
// express: a marble has nothing after its # (nor does an rxjs observable),
// but some rxgo operators emit after an error.
func recordAll(s *Scheduler, obs rxgo.Observable) func() []string {
	var mu sync.Mutex
	var got []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for item := range obs.Observe() {
			mu.Lock()
			if item.Error() {
				got = append(got, fmt.Sprintf("%d:#", s.Now()))
			} else {
				got = append(got, fmt.Sprintf("%d:%v", s.Now(), item.V))
			}
			mu.Unlock()
		}
		mu.Lock()
		got = append(got, fmt.Sprintf("%d:close", s.Now()))
		mu.Unlock()
	}()
	return func() []string {
		<-done
		mu.Lock()
		defer mu.Unlock()
		return got
	}
}

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

// rxgoStopKeepsSource is the note of cases where an rxgo operator ends
// before its source: it stops reading the source but does not cancel it.
const rxgoStopKeepsSource = "rxjs unsubscribes from the source when the operator completes early. " +
	"rxgo's operator completes but does not cancel its source, which stays subscribed " +
	"until the end of Run (its next value finds nobody reading)."

// rxgoEndAfterError is the note of operators whose end step runs after an
// error too: rxgo calls it whenever its loop stops.
const rxgoEndAfterError = "rxjs emits nothing after an error. rxgo's operator emits what its end " +
	"step holds after the error too, then closes"
