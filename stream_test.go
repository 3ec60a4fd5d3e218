package rxthrottle_test

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/marble"
)

// seqOf ranges over ch: a channel source of the marble harness as an
// iterator.
func seqOf[T any](ch <-chan T) iter.Seq[T] {
	return func(yield func(T) bool) {
		for v := range ch {
			if !yield(v) {
				return
			}
		}
	}
}

func mustBucket(t testing.TB, limit rxthrottle.Limit, opts ...rxthrottle.Option) *rxthrottle.Bucket {
	t.Helper()
	b, err := rxthrottle.NewBucket(limit, opts...)
	require.NoError(t, err)
	return b
}

// TestMarbleThrottleChan: Per(2, 4). a and b go at 0; c, read at 0, waits
// for a's token, renewed at 4; d comes at 6 and finds b's token, renewed
// at 4; the input closes at 7, and the output right after d, at 7.
func TestMarbleThrottleChan(t *testing.T) {
	marble.Run(t, func(s *marble.Scheduler) {
		in := marble.ColdChan[string](s, "(abc)-d|", nil)
		out, errf := rxthrottle.ThrottleChan(s.Context(), mustBucket(t, rxthrottle.Per(2, 4*s.Frame())), in)
		marble.ExpectChan(s, out).ToBe("(ab)c-d|", nil)
		go func() {
			<-s.Context().Done() // the end of the run: out has closed
			if err := errf(); err != nil {
				t.Errorf("err() = %v", err)
			}
		}()
	})
}

// TestMarbleThrottleChanSlowReceiver: the receiver takes a at 0 and then
// reads again only at 6: b, granted at 0, is received at 6 and its token
// renews at 6+4=10, not 4, so c, which needs it (Per(1, 4)), goes at 10.
// Counting the receive as the emission keeps the window at the receiver.
func TestMarbleThrottleChanSlowReceiver(t *testing.T) {
	marble.Run(t, func(s *marble.Scheduler) {
		f := s.Frame()
		in := marble.ColdChan[string](s, "abc|", nil)
		b := mustBucket(t, rxthrottle.Per(2, 4*f))
		thr, _ := rxthrottle.ThrottleChan(s.Context(), b, in)
		out := make(chan string)
		go func() {
			defer close(out)
			first := true
			for v := range thr {
				out <- v
				if first {
					time.Sleep(6 * f)
					first = false
				}
			}
		}()
		// a at 0 renews at 4; b, granted at 0 and received at 6, renews
		// at 10; c waits for a's token: 4, but it is read only once b has
		// been received, at 6, when a's token is free.
		marble.ExpectChan(s, out).ToBe("a-----(bc|)", nil)
	})
}

// TestMarbleThrottleSeqHoldsTokens: Per(2, 4) and a loop body that takes
// 2 frames: each token renews 4 after its body ended. a's body runs 0-2
// (renews at 6), b's 2-4 (renews at 8); c, pulled at 4, waits for a's
// token: 6; d, pulled at 8, gets b's at 8. The body sends each value on
// out as it starts; the iteration ends after d's body, at 10.
func TestMarbleThrottleSeqHoldsTokens(t *testing.T) {
	marble.Run(t, func(s *marble.Scheduler) {
		f := s.Frame()
		in := marble.ColdChan[string](s, "(abc)-d|", nil)
		seq, errf := rxthrottle.ThrottleSeq(s.Context(), mustBucket(t, rxthrottle.Per(2, 4*f)), seqOf(in))
		out := make(chan string)
		go func() {
			defer close(out)
			for v := range seq {
				out <- v
				time.Sleep(2 * f)
			}
			if err := errf(); err != nil {
				t.Errorf("err() = %v", err)
			}
		}()
		marble.ExpectChan(s, out).ToBe("a-b---c-d-|", nil)
	})
}

// TestMarbleThrottleSeq2: Per(1, 3) over slices.All, each body taking one
// frame: each pair goes 3 after the body before it ended, and the
// iteration ends with the last body, at 9.
func TestMarbleThrottleSeq2(t *testing.T) {
	marble.Run(t, func(s *marble.Scheduler) {
		f := s.Frame()
		seq, _ := rxthrottle.ThrottleSeq2(s.Context(), mustBucket(t, rxthrottle.Per(1, 3*f)), slices.All([]string{"a", "b", "c"}))
		out := make(chan string)
		go func() {
			defer close(out)
			for i, v := range seq {
				out <- fmt.Sprint(i, v)
				time.Sleep(f)
			}
		}()
		marble.ExpectChan(s, out).ToBe("x---y---z|", map[string]string{"x": "0a", "y": "1b", "z": "2c"})
	})
}

// TestThrottleSeqEnds: a break and a panicking body release the token (it
// renews a window later, not at the hold timeout); a cancelled context
// ends the iteration with ctx.Err(), without yielding the value that
// waited.
func TestThrottleSeqEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := 100 * time.Millisecond
		b := mustBucket(t, rxthrottle.Per(1, w))
		seq, errf := rxthrottle.ThrottleSeq(context.Background(), b, slices.Values([]int{1, 2, 3}))
		for range seq {
			break
		}
		require.NoError(t, errf())
		time.Sleep(w)
		require.Equal(t, 1, b.Stats().Free, "the break released the token")

		require.PanicsWithValue(t, "body", func() {
			for range seq {
				panic("body")
			}
		})
		time.Sleep(w)
		require.Equal(t, 1, b.Stats().Free, "the panic released the token")

		ctx, cancel := context.WithCancel(context.Background())
		seq, errf = rxthrottle.ThrottleSeq(ctx, b, slices.Values([]int{1, 2, 3}))
		time.AfterFunc(w/2, cancel)
		var got []int
		for v := range seq {
			got = append(got, v)
		}
		require.Equal(t, []int{1}, got)
		require.ErrorIs(t, errf(), context.Canceled)
		require.Equal(t, context.Canceled, errf(), "ctx.Err() itself")
	})
}

// TestThrottleChanCancelGivesBack: a value received from in but never
// delivered (nobody reads) gives its token back when ctx ends.
func TestThrottleChanCancelGivesBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustBucket(t, rxthrottle.Per(1, time.Hour))
		ctx, cancel := context.WithCancel(context.Background())
		in := make(chan int, 1)
		in <- 1
		out, errf := rxthrottle.ThrottleChan(ctx, b, in)
		synctest.Wait() // the value waits to be received, its token held
		require.Equal(t, 0, b.Stats().Free)
		cancel()
		_, open := <-out
		require.False(t, open)
		require.Equal(t, context.Canceled, errf())
		require.Equal(t, 1, b.Stats().Free, "given back unused")
	})
}

// TestThrottleChanSlowerThanHoldTimeout: a *Bucket holds a delivered
// value's token until the receive, however late, without the hold timeout
// of Acquire: a receiver slower than it cannot get more than N in a window.
func TestThrottleChanSlowerThanHoldTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := time.Second
		b := mustBucket(t, rxthrottle.Per(1, w), rxthrottle.WithHoldTimeout(10*time.Millisecond))
		out, _ := rxthrottle.ThrottleChan(context.Background(), b, chanOf(1, 2))
		start := time.Now()
		<-out
		time.Sleep(5 * w) // 1's token renewed; 2 is granted and waits
		<-out
		second := time.Since(start)
		_, open := <-out
		require.False(t, open)
		require.Equal(t, 5*w, second)
		require.Equal(t, 0, b.Stats().Free, "2's token renews a window after its receive")
		time.Sleep(w)
		require.Equal(t, 1, b.Stats().Free)
	})
}

func chanOf[T any](vs ...T) <-chan T {
	ch := make(chan T, len(vs))
	for _, v := range vs {
		ch <- v
	}
	close(ch)
	return ch
}

// TestStreamLimiterFailure: a Limiter that fails ends the stream with an
// error that says which value got no token and wraps the cause; one that
// panics, with a *PanicError; the values before go through.
func TestStreamLimiterFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := &failingLimiter{ok: 1, err: errDown}
		out, errf := rxthrottle.ThrottleChan(context.Background(), l, chanOf("a", "b"))
		var got []string
		for v := range out {
			got = append(got, v)
		}
		require.Equal(t, []string{"a"}, got)
		require.ErrorIs(t, errf(), errDown)
		require.EqualError(t, errf(), "rxthrottle: ThrottleChan: value #2 got no token: store down")

		seq, errf2 := rxthrottle.ThrottleSeq2(context.Background(), &failingLimiter{panicWith: "limiter bug"}, slices.All([]int{1}))
		for range seq {
			t.Fatal("yielded a value without a token")
		}
		var perr *rxthrottle.PanicError
		require.ErrorAs(t, errf2(), &perr)
		require.EqualError(t, perr, "rxthrottle: ThrottleSeq2: the Limiter panicked on item #1: limiter bug")
	})
}

func TestStreamBadInput(t *testing.T) {
	b := mustBucket(t, rxthrottle.Per(1, time.Second))
	ctx := context.Background()
	var nilCtx context.Context
	values := slices.Values([]int{1})
	for _, tc := range []struct {
		name string
		run  func() (n int, err error)
		want string
	}{
		{"seq nil ctx", func() (int, error) { return countSeq(rxthrottle.ThrottleSeq(nilCtx, b, values)) },
			"rxthrottle: ThrottleSeq: nil context"},
		{"seq nil limiter", func() (int, error) { return countSeq(rxthrottle.ThrottleSeq(ctx, nil, values)) },
			"rxthrottle: ThrottleSeq(ctx, nil, ...): a Limiter is required"},
		{"seq typed nil bucket", func() (int, error) {
			return countSeq(rxthrottle.ThrottleSeq(ctx, (*rxthrottle.Bucket)(nil), values))
		}, "rxthrottle: ThrottleSeq(ctx, nil, ...): a Limiter is required"},
		{"seq zero bucket", func() (int, error) { return countSeq(rxthrottle.ThrottleSeq(ctx, &rxthrottle.Bucket{}, values)) },
			"rxthrottle: ThrottleSeq: the *Bucket was not made by NewBucket"},
		{"seq nil source", func() (int, error) { return countSeq(rxthrottle.ThrottleSeq[int](ctx, b, nil)) },
			"rxthrottle: ThrottleSeq: the source is nil"},
		{"seq2 nil source", func() (int, error) {
			seq, errf := rxthrottle.ThrottleSeq2[int, int](ctx, b, nil)
			n := 0
			for range seq {
				n++
			}
			return n, errf()
		}, "rxthrottle: ThrottleSeq2: the source is nil"},
		{"chan nil source", func() (int, error) { return countChan(rxthrottle.ThrottleChan[int](ctx, b, nil)) },
			"rxthrottle: ThrottleChan: the source is nil"},
		{"chan nil limiter", func() (int, error) { return countChan(rxthrottle.ThrottleChan(ctx, nil, chanOf(1))) },
			"rxthrottle: ThrottleChan(ctx, nil, ...): a Limiter is required"},
		{"chan nil ctx", func() (int, error) { return countChan(rxthrottle.ThrottleChan(nilCtx, b, chanOf(1))) },
			"rxthrottle: ThrottleChan: nil context"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := tc.run()
			require.Zero(t, n)
			require.EqualError(t, err, tc.want)
		})
	}
}

func countSeq[T any](seq iter.Seq[T], errf func() error) (int, error) {
	n := 0
	for range seq {
		n++
	}
	return n, errf()
}

func countChan[T any](ch <-chan T, errf func() error) (int, error) {
	n := 0
	for range ch {
		n++
	}
	return n, errf()
}

// TestStreamDeadlineRefused: a value whose deadline comes before its token
// could is refused at once, before ctx ends: the stream's error is not
// ctx.Err() (still nil) but says which value got no token and wraps both
// ErrDeadline and context.DeadlineExceeded, as the docs say; except for
// ThrottleChan over a *Bucket, whose values keep their place.
func TestStreamDeadlineRefused(t *testing.T) {
	check := func(t *testing.T, op string, start time.Time, ctx context.Context, got []int, err error) {
		t.Helper()
		require.Equal(t, []int{1}, got, op)
		require.Zero(t, time.Since(start), "%s: refused at once", op)
		require.NoError(t, ctx.Err(), op)
		require.ErrorIs(t, err, rxthrottle.ErrDeadline, op)
		require.ErrorIs(t, err, context.DeadlineExceeded, op)
		require.ErrorContains(t, err, "rxthrottle: "+op+": value #2 got no token: ", op)
	}
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		start := time.Now()
		seq, errf := rxthrottle.ThrottleSeq(ctx, mustBucket(t, rxthrottle.Per(1, time.Hour)), slices.Values([]int{1, 2}))
		var got []int
		for v := range seq {
			got = append(got, v)
		}
		check(t, "ThrottleSeq", start, ctx, got, errf())

		seq2, errf := rxthrottle.ThrottleSeq2(ctx, mustBucket(t, rxthrottle.Per(1, time.Hour)), slices.All([]int{1, 2}))
		got = nil
		for _, v := range seq2 {
			got = append(got, v)
		}
		check(t, "ThrottleSeq2", start, ctx, got, errf())

		kl, err := rxthrottle.NewKeyed(rxthrottle.Per(1, time.Hour))
		require.NoError(t, err)
		out, errf := rxthrottle.ThrottleChan(ctx, rxthrottle.ForKey(kl, "k"), chanOf(1, 2))
		got = nil
		for v := range out {
			got = append(got, v)
		}
		check(t, "ThrottleChan", start, ctx, got, errf())

		// A *Bucket keeps ThrottleChan's value in its place until ctx ends.
		out, errf = rxthrottle.ThrottleChan(ctx, mustBucket(t, rxthrottle.Per(1, time.Hour)), chanOf(1, 2))
		got = nil
		for v := range out {
			got = append(got, v)
		}
		require.Equal(t, []int{1}, got)
		require.Equal(t, time.Minute, time.Since(start), "ThrottleChan over a Bucket: 2 waited until the deadline")
		require.Equal(t, context.DeadlineExceeded, errf(), "ctx.Err() itself")
	})
}
