package rxthrottle_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/marble"
)

// Regression tests of issue 10 ("Nothing lost, nothing crashes"): a limiter
// that fails, error items in ThrottleBy, nil inputs and panicking user code.

var errDown = errors.New("store down")

// failingLimiter is a Limiter that is not a *Bucket: each Wait takes delay,
// and every Wait after the first ok ones fails with err (a Redis-backed
// limiter during an outage, FailClosed). It panics instead if panicWith is
// set. The methods it does not override panic (nil embedded interface):
// the operator must not need them.
type failingLimiter struct {
	rxthrottle.Limiter
	delay     time.Duration
	ok        int
	err       error
	panicWith any

	mu    sync.Mutex
	calls int
}

func (f *failingLimiter) Wait(ctx context.Context) error {
	f.mu.Lock()
	f.calls++
	n := f.calls
	f.mu.Unlock()
	select {
	case <-time.After(f.delay):
	case <-ctx.Done():
		return ctx.Err()
	}
	if n <= f.ok {
		return nil
	}
	if f.panicWith != nil {
		panic(f.panicWith)
	}
	return f.err
}

// Acquire is Wait with a no-op Token.
func (f *failingLimiter) Acquire(ctx context.Context) (rxthrottle.Token, error) {
	return rxthrottle.Token{}, f.Wait(ctx)
}

// countingSource emits values one by one, and records how many it sent and
// whether its subscription was cancelled.
type countingSource struct {
	mu        sync.Mutex
	sent      int
	cancelled bool
}

func (c *countingSource) of(values ...any) rxgo.Observable {
	return rxgo.Defer([]rxgo.Producer{func(ctx context.Context, next chan<- rxgo.Item) {
		for _, v := range values {
			item := rxgo.Of(v)
			if err, ok := v.(error); ok {
				item = rxgo.Error(err)
			}
			if !item.SendContext(ctx, next) {
				c.mu.Lock()
				c.cancelled = true
				c.mu.Unlock()
				return
			}
			c.mu.Lock()
			c.sent++
			c.mu.Unlock()
		}
	}})
}

func TestThrottleWithLimiterFailureIsAnErrorItem(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := time.Millisecond
		l := &failingLimiter{delay: 5 * ms, ok: 2, err: errDown}
		var src countingSource
		var items []rxgo.Item
		start := time.Now()
		var got []received
		for item := range rxthrottle.ThrottleWith(l)(src.of("a", "b", "c", "d", "e")).Observe() {
			items = append(items, item)
			got = append(got, received{time.Since(start), item.V})
		}
		// a and b after one wait each; c's wait fails at 15ms: the error
		// comes in c's place, and then the output completes.
		require.Len(t, items, 3, "got %v", got)
		require.Equal(t, []any{"a", "b"}, []any{items[0].V, items[1].V})
		require.Equal(t, []time.Duration{5 * ms, 10 * ms}, []time.Duration{got[0].at, got[1].at})
		require.True(t, items[2].Error())
		require.ErrorIs(t, items[2].E, errDown)
		require.EqualError(t, items[2].E, "rxthrottle: ThrottleWith: item #3 got no token, the limiter failed: store down")
		require.Equal(t, 15*ms, got[2].at)
		// The source was cancelled rather than left blocked (synctest would
		// report its goroutine), and no other Wait was made.
		synctest.Wait()
		src.mu.Lock()
		defer src.mu.Unlock()
		require.True(t, src.cancelled)
		require.Equal(t, 3, l.calls)
	})
}

func TestMarbleThrottleWithLimiterFailureStops(t *testing.T) {
	marble.Run(t, func(s *marble.Scheduler) {
		// Each Wait takes 2 frames; the third fails: a2 b4, the error in
		// c's place at 6, and the source is cancelled there.
		l := &failingLimiter{delay: 2 * s.Frame(), ok: 2, err: errDown}
		src := s.Cold("abcde|", nil)
		out := rxthrottle.ThrottleWith(l)(src)
		s.ExpectObservable(out).ToBe("--a-b-#", nil, marble.WithError(errDown))
		s.ExpectSubscriptions(src).ToBe("^-----!")
	})
}

func TestThrottleWithLimiterPanicIsAnErrorItem(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := &failingLimiter{ok: 1, panicWith: "boom"}
		var items []rxgo.Item
		for item := range rxthrottle.ThrottleWith(l)(rxgo.Just("a", "b", "c")()).Observe() {
			items = append(items, item)
		}
		require.Len(t, items, 2)
		require.Equal(t, "a", items[0].V)
		var perr *rxthrottle.PanicError
		require.ErrorAs(t, items[1].E, &perr)
		require.Equal(t, 2, perr.Item)
		require.Equal(t, "boom", perr.Value)
		require.NotEmpty(t, perr.Stack)
		require.EqualError(t, perr, "rxthrottle: ThrottleWith: the Limiter panicked on item #2: boom")
	})
}

// TestThrottleWithCancelIsNotAFailure: a Limiter whose Wait returns because
// the subscription's context ended stops the output quietly.
func TestThrottleWithCancelIsNotAFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := &failingLimiter{delay: time.Hour, ok: 1}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		out := rxthrottle.ThrottleWith(l)(rxgo.Just("a", "b")()).Observe(rxgo.WithContext(ctx))
		time.Sleep(time.Minute)
		cancel()
		for item := range out {
			t.Fatalf("got %v after the cancellation", item)
		}
	})
}

func TestThrottleByErrorItemsKeepTheirPlace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := time.Millisecond
		byLetter := func(v any) string { return v.(string)[:min(1, len(v.(string)))] }
		boom := errors.New("boom")
		// Per(1, 300ms) per key. a1 goes at 0 and a2 at 300; the source
		// error and the empty key come behind a2 and go right after it;
		// b1, which comes after them, does not wait for them.
		src := rxgo.Just("a1", "a2", boom, "", "b1")()
		out := rxthrottle.ThrottleBy(rxthrottle.Per(1, 300*ms), byLetter)(src)
		got := drain(time.Now(), out.Observe())
		require.Equal(t, []received{
			{0, "a1"},
			{0, "b1"},
			{300 * ms, "a2"},
			{300 * ms, "error: boom"},
			{300 * ms, `error: rxthrottle: ThrottleBy: empty key for item #4 ()`},
		}, got)
	})
}

// TestThrottleByTooManyKeysMessage: a key refused by WithMaxKeys is an error
// item that wraps ErrTooManyKeys and names the package once, at the start
// (it read "rxthrottle: ThrottleBy: item #2: rxthrottle: too many keys").
func TestThrottleByTooManyKeysMessage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		byLetter := func(v any) string { return v.(string)[:1] }
		src := rxgo.Just("a1", "b1", "a2")()
		out := rxthrottle.ThrottleBy(rxthrottle.Per(1, time.Hour), byLetter, rxthrottle.WithMaxKeys(1))(src)
		var errs []error
		for item := range out.Observe() {
			if item.Error() {
				errs = append(errs, item.E)
			}
		}
		require.Len(t, errs, 1)
		require.ErrorIs(t, errs[0], rxthrottle.ErrTooManyKeys)
		require.EqualError(t, errs[0], `rxthrottle: ThrottleBy: item #2: too many keys: key "b" would be number 2 of at most 1, and none is idle`)
	})
}

func TestMarbleThrottleByErrorKeepsItsPlace(t *testing.T) {
	marble.Run(t, func(s *marble.Scheduler) {
		// The case, Per(1, 3), one key: a0 b3, and the error,
		// which came at 2, right after b, as Throttle gives it.
		src := s.Cold("ab#", nil, marble.WithError(errDown))
		same := func(any) string { return "k" }
		out := rxthrottle.ThrottleBy(rxthrottle.Per(1, 3*s.Frame()), same)(src)
		s.ExpectObservable(out).ToBe("a--(b#)", nil, marble.WithError(errDown))
	})
}

func TestThrottleByKeyFunctionPanicIsAnErrorItem(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := time.Millisecond
		key := func(v any) string {
			if v == "bad" {
				panic(errDown)
			}
			return "k"
		}
		src := rxgo.Just("a", "b", "bad", "c")()
		var items []rxgo.Item
		var at []time.Duration
		start := time.Now()
		for item := range rxthrottle.ThrottleBy(rxthrottle.Per(1, 10*ms), key)(src).Observe() {
			items = append(items, item)
			at = append(at, time.Since(start))
		}
		require.Len(t, items, 4)
		require.Equal(t, []any{"a", "b"}, []any{items[0].V, items[1].V})
		var perr *rxthrottle.PanicError
		require.ErrorAs(t, items[2].E, &perr)
		require.ErrorIs(t, items[2].E, errDown, "the panic value is an error: it is wrapped")
		require.Equal(t, 3, perr.Item)
		require.EqualError(t, perr, "rxthrottle: ThrottleBy: the key function panicked on item #3: store down")
		require.Equal(t, "c", items[3].V)
		// In its place: right after b (10ms), before c (20ms).
		require.Equal(t, []time.Duration{0, 10 * ms, 10 * ms, 20 * ms}, at)
	})
}

// TestOperatorsOnNilInputs: a nil source, a nil or unmade limiter: one error
// item each, never a crash on an rxgo goroutine.
func TestOperatorsOnNilInputs(t *testing.T) {
	key := func(any) string { return "k" }
	bucket, err := rxthrottle.NewBucket(rxthrottle.Per(1, time.Second))
	require.NoError(t, err)
	keyed, err := rxthrottle.NewKeyed(rxthrottle.Per(1, time.Second))
	require.NoError(t, err)
	var nilSource rxgo.Observable
	var nilImpl *rxgo.ObservableImpl
	just := rxgo.Just("a")()
	for _, tc := range []struct {
		name string
		out  rxgo.Observable
		want string
	}{
		{"Throttle(nil source)", rxthrottle.Throttle(rxthrottle.Per(1, time.Second))(nilSource),
			"rxthrottle: Throttle: the source Observable is nil"},
		{"Throttle(typed nil source)", rxthrottle.Throttle(rxthrottle.Per(1, time.Second))(nilImpl),
			"rxthrottle: Throttle: the source Observable is nil"},
		{"ThrottleWith(bucket)(nil)", rxthrottle.ThrottleWith(bucket)(nilSource),
			"rxthrottle: ThrottleWith: the source Observable is nil"},
		{"ThrottleWith(limiter)(nil)", rxthrottle.ThrottleWith(&failingLimiter{})(nilSource),
			"rxthrottle: ThrottleWith: the source Observable is nil"},
		{"ThrottleBy(nil)", rxthrottle.ThrottleBy(rxthrottle.Per(1, time.Second), key)(nilSource),
			"rxthrottle: ThrottleBy: the source Observable is nil"},
		{"ThrottleByWith(nil)", rxthrottle.ThrottleByWith(keyed, key)(nilSource),
			"rxthrottle: ThrottleByWith: the source Observable is nil"},
		{"ThrottleWith((*Bucket)(nil))", rxthrottle.ThrottleWith((*rxthrottle.Bucket)(nil))(just),
			"rxthrottle: ThrottleWith(nil): a Limiter is required"},
		{"ThrottleWith(&Bucket{})", rxthrottle.ThrottleWith(&rxthrottle.Bucket{})(just),
			"rxthrottle: ThrottleWith: the *Bucket was not made by NewBucket"},
		{"ThrottleWith((*failingLimiter)(nil))", rxthrottle.ThrottleWith((*failingLimiter)(nil))(just),
			"rxthrottle: ThrottleWith(nil): a Limiter is required"},
		{"ThrottleByWith(&Keyed{})", rxthrottle.ThrottleByWith(&rxthrottle.Keyed{}, key)(just),
			"rxthrottle: ThrottleByWith: the *Keyed was not made by NewKeyed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []rxgo.Item
			for item := range tc.out.Observe() {
				got = append(got, item)
			}
			require.Len(t, got, 1)
			require.EqualError(t, got[0].E, tc.want)
		})
	}
}
