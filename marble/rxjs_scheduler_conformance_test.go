package marble

import (
	"sync"
	"testing"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rxjs's TestScheduler outside run mode counts frameTimeFactor = 10 time
// units per frame, and a time progression ("10ms") in units: Parse with
// 10ms frames gives the same numbers, read as milliseconds.
const rxjsFrame = 10 * time.Millisecond

// notification is one element of what rxjs's parseMarbles returns.
type notification struct {
	at    time.Duration
	kind  Kind
	value any
}

// parseMarbles is rxjs's TestScheduler.parseMarbles on Parse: the time of
// each event from the marble's ^ (or its first column), with its value
// looked up as Cold does and errValue for #.
func parseMarbles(t *testing.T, marble string, values map[string]any, errValue any, frame time.Duration) []notification {
	t.Helper()
	tl, cols, err := parse(marble, frame)
	require.NoError(t, err)
	origin := time.Duration(0)
	if tl.Subscribe != NoFrame {
		origin = time.Duration(tl.Subscribe)*frame + tl.SubscribeOffset
	}
	var out []notification
	for i, e := range tl.Events {
		n := notification{at: e.Time(frame) - origin, kind: e.Kind}
		switch e.Kind {
		case Next:
			n.value, err = lookup(marble, cols[i], e.Symbol, values)
			require.NoError(t, err)
		case Error:
			n.value = errValue
		}
		out = append(out, n)
	}
	return out
}

// parseSubscription is rxjs's parseMarblesAsSubscriptions on Parse: the
// times of ^ and !, -1 for Infinity (no !).
func parseSubscription(t *testing.T, marble string, frame time.Duration) (sub, unsub time.Duration) {
	t.Helper()
	tl, err := Parse(marble, frame)
	require.NoError(t, err)
	sub, unsub = -1, -1
	if tl.Subscribe != NoFrame {
		sub = time.Duration(tl.Subscribe)*frame + tl.SubscribeOffset
	}
	if tl.Unsubscribe != NoFrame {
		unsub = time.Duration(tl.Unsubscribe)*frame + tl.UnsubscribeOffset
	}
	return sub, unsub
}

// createTime is rxjs's TestScheduler.createTime (time() in run mode): the
// time of the marble's |, an error without one.
func createTime(marble string, frame time.Duration) (time.Duration, error) {
	tl, err := Parse(marble, frame)
	if err != nil {
		return 0, err
	}
	for _, e := range tl.Events {
		if e.Kind == Complete {
			return e.Time(frame), nil
		}
	}
	return 0, &SyntaxError{Marble: marble, Column: 1, Msg: "marble diagram for time should have a completion marker \"|\""}
}

func ms(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }

// observeAll subscribes to obs from fn, as rxjs's source.subscribe() in a
// spec, and returns what it received once Run has ended.
func observeAll(s *Scheduler, obs rxgo.Observable) func() []any {
	var mu sync.Mutex
	var got []any
	done := make(chan struct{})
	go func() {
		defer close(done)
		for item := range obs.Observe() {
			mu.Lock()
			got = append(got, item.V)
			mu.Unlock()
		}
	}()
	s.T().Cleanup(func() { <-done })
	return func() []any {
		<-done
		mu.Lock()
		defer mu.Unlock()
		return got
	}
}

func TestConformanceTestScheduler(t *testing.T) {
	next := func(at time.Duration, v any) notification { return notification{at: at, kind: Next, value: v} }
	complete := func(at time.Duration) notification { return notification{at: at, kind: Complete} }
	AB := map[string]any{"a": "A", "b": "B"}
	ABC := map[string]any{"a": "A", "b": "B", "c": "C"}

	parseCases := []rxjsCase{
		// describe('parseMarbles()')
		{it: "parseMarbles(): should parse a marble string into a series of notifications and types", test: func(t *testing.T) {
			assert.Equal(t, []notification{next(ms(70), "A"), next(ms(110), "B"), complete(ms(150))},
				parseMarbles(t, "-------a---b---|", AB, nil, rxjsFrame))
		}},
		// Outside run mode rxjs counts a space as a frame; trailing ones
		// make no difference.
		{it: "parseMarbles(): should parse a marble string, allowing spaces too", test: func(t *testing.T) {
			assert.Equal(t, []notification{next(ms(20), "A"), next(ms(50), "B"), complete(ms(80))},
				parseMarbles(t, "--a--b--|   ", AB, nil, rxjsFrame))
		}},
		{it: "parseMarbles(): should parse a marble string with a subscription point", test: func(t *testing.T) {
			assert.Equal(t, []notification{next(ms(40), "A"), next(ms(80), "B"), complete(ms(120))},
				parseMarbles(t, "---^---a---b---|", AB, nil, rxjsFrame))
		}},
		{it: "parseMarbles(): should parse a marble string with an error", test: func(t *testing.T) {
			assert.Equal(t, []notification{next(ms(70), "A"), next(ms(110), "B"), {at: ms(150), kind: Error, value: "omg error!"}},
				parseMarbles(t, "-------a---b---#", AB, "omg error!", rxjsFrame))
		}},
		{it: "parseMarbles(): should default in the letter for the value if no value hash was passed", test: func(t *testing.T) {
			assert.Equal(t, []notification{next(ms(20), "a"), next(ms(50), "b"), next(ms(80), "c")},
				parseMarbles(t, "--a--b--c--", nil, nil, rxjsFrame))
		}},
		{it: "parseMarbles(): should handle grouped values", test: func(t *testing.T) {
			assert.Equal(t, []notification{next(ms(30), "a"), next(ms(30), "b"), next(ms(30), "c")},
				parseMarbles(t, "---(abc)---", nil, nil, rxjsFrame))
		}},
		{it: "parseMarbles(): should ignore whitespace when runMode=true", test: func(t *testing.T) {
			assert.Equal(t, []notification{next(ms(10), "A"), next(ms(30), "B"), next(ms(50), "C"), complete(ms(60))},
				parseMarbles(t, "  -a - b -    c |       ", ABC, nil, rxjsFrame))
		}},
		{it: "parseMarbles(): should support time progression syntax when runMode=true", test: func(t *testing.T) {
			assert.Equal(t, []notification{
				next(ms(10.2), "A"),
				next(ms(10.2+10+1.2*1000), "B"),
				next(ms(10.2+10+1.2*1000+10+1000*60), "C"),
				complete(ms(10.2 + 10 + 1.2*1000 + 10 + 1000*60 + 10)),
			}, parseMarbles(t, "10.2ms a 1.2s b 1m c|", ABC, nil, rxjsFrame))
		}},
		{it: "parseMarbles(): should support emoji characters", test: func(t *testing.T) {
			assert.Equal(t, []notification{next(ms(20), "🙈"), next(ms(50), "🙉"), next(ms(80), "🙊"), complete(ms(110))},
				parseMarbles(t, "--🙈--🙉--🙊--|", nil, nil, rxjsFrame))
		}},

		// describe('parseMarblesAsSubscriptions()')
		{it: "parseMarblesAsSubscriptions(): should parse a subscription marble string into a subscriptionLog", test: func(t *testing.T) {
			sub, unsub := parseSubscription(t, "---^---!-", rxjsFrame)
			assert.Equal(t, ms(30), sub)
			assert.Equal(t, ms(70), unsub)
		}},
		{it: "parseMarblesAsSubscriptions(): should parse a subscription marble string with an unsubscription", test: func(t *testing.T) {
			sub, unsub := parseSubscription(t, "---^-", rxjsFrame)
			assert.Equal(t, ms(30), sub)
			assert.Equal(t, time.Duration(-1), unsub, "Infinity: no !")
		}},
		{it: "parseMarblesAsSubscriptions(): should parse a subscription marble string with a synchronous unsubscription", test: func(t *testing.T) {
			sub, unsub := parseSubscription(t, "---(^!)-", rxjsFrame)
			assert.Equal(t, ms(30), sub)
			assert.Equal(t, ms(30), unsub)
		}},
		{it: "parseMarblesAsSubscriptions(): should ignore whitespace when runMode=true", test: func(t *testing.T) {
			sub, unsub := parseSubscription(t, "  - -  - -  ^ -   - !  -- -      ", rxjsFrame)
			assert.Equal(t, ms(40), sub)
			assert.Equal(t, ms(70), unsub)
		}},
		{it: "parseMarblesAsSubscriptions(): should support time progression syntax when runMode=true", test: func(t *testing.T) {
			sub, unsub := parseSubscription(t, "10.2ms ^ 1.2s - 1m !", rxjsFrame)
			assert.Equal(t, ms(10.2), sub)
			assert.Equal(t, ms(10.2+10+1.2*1000+10+1000*60), unsub)
		}},
		{it: "parseMarblesAsSubscriptions(): should throw if found more than one subscription point", test: func(t *testing.T) {
			_, err := Parse("---^-^-!-", rxjsFrame)
			assert.Error(t, err)
		}},
		{it: "parseMarblesAsSubscriptions(): should throw if found more than one unsubscription point", test: func(t *testing.T) {
			_, err := Parse("---^---!-!", rxjsFrame)
			assert.Error(t, err)
		}},

		// describe('createTime()'). Its two cases with spaces ("     |" is
		// 50, "  --|" is 40) count spaces as frames, which rxjs does
		// outside run mode only; this harness is run mode, where spaces
		// take no time (see "time: should ignore whitespace" below).
		{it: "createTime(): should parse a simple time marble string to a number", test: func(t *testing.T) {
			d, err := createTime("-----|", rxjsFrame)
			require.NoError(t, err)
			assert.Equal(t, ms(50), d)
		}},
		{it: "createTime(): should throw if not given good marble input", test: func(t *testing.T) {
			_, err := createTime("-a-b-#", rxjsFrame)
			assert.Error(t, err)
		}},
	}

	runCases := []rxjsCase{
		// describe('createColdObservable()'), describe('createHotObservable()')
		{it: "createColdObservable(): should create a cold observable", run: func(s *Scheduler) {
			source := s.Cold("--a---b--|", AB)
			got := observeAll(s, source)
			s.T().Cleanup(func() { assert.Equal(s.T(), []any{"A", "B"}, got()) })
		}},
		{it: "createHotObservable(): should create a hot observable", run: func(s *Scheduler) {
			source := s.Hot("--a---b--|", AB)
			got := observeAll(s, source)
			s.T().Cleanup(func() { assert.Equal(s.T(), []any{"A", "B"}, got()) })
		}},

		// describe('jasmine helpers')
		{it: "cold(): should create a cold observable", run: func(s *Scheduler) {
			values := map[string]any{"a": 1, "b": 2}
			source := s.Cold("-a-b-|", values)
			got := observeAll(s, source)
			s.ExpectObservable(source).ToBe("-a-b-|", values)
			s.T().Cleanup(func() { assert.Equal(s.T(), []any{1, 2}, got()) })
		}},
		{it: "hot(): should create a hot observable", run: func(s *Scheduler) {
			source := s.Hot("---^-a-b-|", map[string]any{"a": 1, "b": 2})
			s.ExpectObservable(source).ToBe("--a-b-|", map[string]any{"a": 1, "b": 2})
		}},
		{it: "time(): should parse a simple time marble string to a number", test: func(t *testing.T) {
			d, err := createTime("-----|", rxjsFrame)
			require.NoError(t, err)
			assert.Equal(t, ms(50), d)
		}},
		{it: "expectObservable(): should handle empty", run: func(s *Scheduler) {
			s.ExpectObservable(rxgo.Empty()).ToBe("|", map[string]any{})
		}},
		// rxgo's Never ignores its context: Run waits an hour of virtual
		// time for it at the end, then logs that it never closed.
		{it: "expectObservable(): should handle never", run: func(s *Scheduler) {
			s.ExpectObservable(rxgo.Never()).ToBe("-", map[string]any{})
			s.ExpectObservable(rxgo.Never()).ToBe("---", map[string]any{})
		}},
		{it: "expectObservable(): should accept an unsubscription marble diagram", run: func(s *Scheduler) {
			source := s.Hot("---^-a-b-|", nil)
			unsubscribe := "   ---!"
			expected := "      --a"
			s.ExpectObservable(source, unsubscribe).ToBe(expected, nil)
		}},
		{it: "expectObservable(): should accept a subscription marble diagram", run: func(s *Scheduler) {
			source := s.Hot("-a-b-c|", nil)
			subscribe := "  ---^"
			expected := "   ---b-c|"
			s.ExpectObservable(source, subscribe).ToBe(expected, nil)
		}},
		{it: "expectSubscriptions(): should assert subscriptions of a cold observable", run: func(s *Scheduler) {
			source := s.Cold("---a---b-|", nil)
			subs := "         ^--------!"
			s.ExpectSubscriptions(source).ToBe(subs)
			observeAll(s, source)
		}},
		{it: "expectSubscriptions(): should support empty subscription marbles", run: func(s *Scheduler) {
			source := s.Cold("---a---b-|", nil)
			subs := "         ----------"
			s.ExpectSubscriptions(source).ToBe(subs)
		}},
		{it: "expectSubscriptions(): should support empty subscription marbles within arrays", run: func(s *Scheduler) {
			source := s.Cold("---a---b-|", nil)
			subs := []string{"----------"}
			s.ExpectSubscriptions(source).ToBe(subs...)
		}},
		{it: "end-to-end helper tests: should be awesome", run: func(s *Scheduler) {
			values := map[string]any{"a": 1, "b": 2}
			myObservable := s.Cold("---a---b--|", values)
			subs := "               ^---------!"
			s.ExpectObservable(myObservable).ToBe("---a---b--|", values)
			s.ExpectSubscriptions(myObservable).ToBe(subs)
		}},
		{it: "end-to-end helper tests: should support testing metastreams", run: func(s *Scheduler) {
			x := s.Cold("-a-b|", nil)
			y := s.Cold("-c-d|", nil)
			myObservable := s.Hot("---x---y----|", map[string]any{"x": x, "y": y})
			expected := "          ---x---y----|"
			expectedx := s.Cold("-a-b|", nil)
			expectedy := s.Cold("-c-d|", nil)
			s.ExpectObservable(myObservable).ToBe(expected, map[string]any{"x": expectedx, "y": expectedy})
		}},

		// describe('TestScheduler.run()')
		{it: "marble diagrams: should ignore whitespace", run: func(s *Scheduler) {
			input := s.Cold("  -a - b -    c |       ", nil)
			output := concatDelay(10 * time.Millisecond)(input)
			expected := "     -- 9ms a 9ms b 9ms (c|) "
			s.ExpectObservable(output).ToBe(expected, nil)
			s.ExpectSubscriptions(input).ToBe("  ^- - - - - !")
		}},
		{it: "marble diagrams: should support time progression syntax", run: func(s *Scheduler) {
			output := s.Cold("10.2ms a 1.2s b 1m c|", nil)
			expected := "   10.2ms a 1.2s b 1m c|"
			s.ExpectObservable(output).ToBe(expected, nil)
		}},
		{it: "should provide the correct helpers",
			rxgo: "rxjs subscribes to obs1 and obs2 once per subscriber of merge: twice, " +
				"for expectObservable's toBe and its toEqual (which this harness does not have). " +
				"rxgo's Merge is eager: it subscribes to its sources once, when it is built, and " +
				"its output is one channel that a second subscriber would share, so the case " +
				"expects once and each source has one subscription.",
			run: func(s *Scheduler) {
				obs1 := s.Cold("-a-c-e|", nil)
				obs2 := s.Hot(" ^-b-d-f|", nil)
				output := rxgo.Merge([]rxgo.Observable{obs1, obs2})
				expected := " -abcdef|"
				s.ExpectObservable(output).ToBe(expected, nil)
				s.ExpectSubscriptions(obs1).ToBe("^-----!")
				s.ExpectSubscriptions(obs2).ToBe("^------!")
			}},
		{it: "should have each frame represent a single virtual millisecond", run: func(s *Scheduler) {
			output := s.Cold("-a-b-c--------|", nil).Debounce(rxgo.WithDuration(5 * time.Millisecond))
			expected := "   ------ 4ms c---|"
			s.ExpectObservable(output).ToBe(expected, nil)
		}},
		// rxgo has no delay operator; for a single value, concatMap with
		// a delayed inner observable is delay.
		{it: "should have no maximum frame count", run: func(s *Scheduler) {
			output := concatDelay(10 * time.Second)(s.Cold("-a|", nil))
			expected := "   - 10s (a|)"
			s.ExpectObservable(output).ToBe(expected, nil)
		}},
		{it: "should make operators that use AsyncScheduler automatically use TestScheduler for actual scheduling", run: func(s *Scheduler) {
			output := s.Cold("-a-b-c--------|", nil).Debounce(rxgo.WithDuration(5 * time.Millisecond))
			expected := "   ----------c---|"
			s.ExpectObservable(output).ToBe(expected, nil)
		}},
		// The flushTests and actions internals the case also checks have
		// no counterpart: Run flushes once fn returns.
		{it: "should flush automatically", run: func(s *Scheduler) {
			output := concatDelay(10 * time.Millisecond)(s.Cold("-a-b-c|", nil))
			expected := "   -- 9ms a 9ms b 9ms (c|)"
			s.ExpectObservable(output).ToBe(expected, nil)
		}},
		{it: "time: should parse a simple time marble string to a number", test: func(t *testing.T) {
			d, err := createTime("--|", time.Millisecond)
			require.NoError(t, err)
			assert.Equal(t, 2*time.Millisecond, d)
		}},
		{it: "time: should ignore whitespace", test: func(t *testing.T) {
			d, err := createTime("  --|", time.Millisecond)
			require.NoError(t, err)
			assert.Equal(t, 2*time.Millisecond, d)
		}},
		{it: "time: should throw if not given good marble input", test: func(t *testing.T) {
			_, err := createTime("-a-b-#", time.Millisecond)
			assert.Error(t, err)
		}},
	}
	runRxjsSpec(t, "spec/schedulers/TestScheduler-spec.ts", append(parseCases, runCases...))

	// Not ported, with no counterpart here: "should exist", "should have
	// frameTimeFactor set initially", the jasmine helpers' "should exist",
	// "should return an object with a toBe function" and "should append
	// to flushTests array" (JavaScript API shape); createTime's "should
	// progress time with whitespace" and "...with mix of whitespace and
	// dashes" (spaces as frames, outside run mode only); "should support
	// explicit flushing", "should flush expectations correctly" (there is
	// no flush(): Run flushes when fn returns); "should pass-through
	// return values, e.g. Promises", "should restore changes upon thrown
	// errors"; animate (5 cases), immediate and interval (6 cases) and
	// schedulers (3 cases): JavaScript's animation-frame, asap and timer
	// providers.
}
