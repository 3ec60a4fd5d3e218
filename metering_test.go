package rxthrottle

import (
	"context"
	"errors"
	"maps"
	"math"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Bad metering options are errors at construction, naming the option and
// its argument.
func TestMeteringOptionsValidated(t *testing.T) {
	for _, tc := range []struct {
		opt  Option
		want string
	}{
		{WithConcurrency(0), "rxthrottle: WithConcurrency(0): the cap must be at least 1"},
		{WithConcurrency(-3), "rxthrottle: WithConcurrency(-3): the cap must be at least 1"},
		{WithMaxQueue(-1), "rxthrottle: WithMaxQueue(-1): the bound must not be negative"},
	} {
		_, err := NewBucket(Per(1, time.Second), tc.opt)
		require.EqualError(t, err, tc.want)
		_, err = NewKeyed(Per(1, time.Second), tc.opt)
		require.EqualError(t, err, tc.want)
	}
	_, err := NewBucket(Per(1, time.Second), WithKeyLimits(func(string) []Limit { return nil }))
	require.ErrorContains(t, err, "WithKeyLimits is an option of NewKeyed and ThrottleBy")
}

func TestWithPriorityNilAndDefault(t *testing.T) {
	var nilCtx context.Context // a nil parent is what this checks
	require.Nil(t, WithPriority(nilCtx, 3))
	require.Zero(t, PriorityFrom(nilCtx))
	require.Zero(t, PriorityFrom(context.Background()))
	require.Equal(t, -2, PriorityFrom(WithPriority(context.Background(), -2)))
}

// A deadline before the earliest departure is refused at once, with an
// error both errors.Is checks find, and takes no token; one after it waits.
func TestDeadlineRefusedAtArrival(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, err := NewBucket(Per(1, time.Second))
		require.NoError(t, err)
		require.NoError(t, b.Wait(context.Background()))
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		start := time.Now()
		err = b.Wait(ctx)
		require.ErrorIs(t, err, ErrDeadline)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.Zero(t, time.Since(start), "refused at once, not after 200ms")
		require.Zero(t, b.Stats().Queued)
		require.EqualValues(t, 1, b.Stats().Cancelled)

		ctx2, cancel2 := context.WithTimeout(context.Background(), 1001*time.Millisecond)
		defer cancel2()
		require.NoError(t, b.Wait(ctx2))
		require.Equal(t, time.Second, time.Since(start))
	})
}

// A context cancelled without a deadline is never refused early.
func TestPlainCancelNotRefusedEarly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, err := NewBucket(Per(1, time.Second))
		require.NoError(t, err)
		require.NoError(t, b.Wait(context.Background()))
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(300*time.Millisecond, cancel)
		start := time.Now()
		require.ErrorIs(t, b.Wait(ctx), context.Canceled)
		require.Equal(t, 300*time.Millisecond, time.Since(start))
	})
}

func TestTokenReleaseNOnForeignReleaser(t *testing.T) {
	r := &plainReleaser{}
	tok := Token{r: r, id: 7}
	err := tok.ReleaseN(3)
	require.ErrorIs(t, err, errNoUsage)
	require.ErrorContains(t, err, "rxthrottle: Token.ReleaseN(3)")
	require.Equal(t, []uint64{7}, r.released, "released as Release, not left held")
	require.ErrorContains(t, tok.ReleaseN(-1), "used must not be negative")
}

type plainReleaser struct{ released []uint64 }

func (p *plainReleaser) ReleaseToken(id uint64) { p.released = append(p.released, id) }
func (p *plainReleaser) CancelToken(uint64)     {}

func TestUnlimited(t *testing.T) {
	l := Unlimited()
	ctx := context.Background()
	for range 1000 {
		require.NoError(t, l.Wait(ctx))
	}
	require.NoError(t, l.WaitN(ctx, 1<<40))
	tok, err := l.AcquireN(ctx, 5)
	require.NoError(t, err)
	require.NoError(t, tok.ReleaseN(9))
	ok, err := l.Allow(ctx)
	require.NoError(t, err)
	require.True(t, ok)
	require.ErrorIs(t, l.WaitN(ctx, 0), ErrInvalidCost)
	//lint:ignore SA1012 a nil context is what this checks
	require.Error(t, l.Wait(nil)) //nolint:staticcheck
	ended, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, l.Wait(ended), context.Canceled)
	require.Error(t, l.SetLimit(Per(1, time.Second)))
	require.Nil(t, l.Limits())
	l.Pause(time.Now().Add(time.Hour))
	require.NoError(t, l.Wait(ctx), "Pause does nothing")
	require.EqualValues(t, 1004, l.Stats().Admitted)
	require.True(t, errors.Is(l.WaitN(ctx, -1), ErrInvalidCost))
}

// A debt far larger than N costs no more than one of N: the release records
// it at once (no loop over the debt) and the window is full for exactly
// one window after it.
func TestReleaseNHugeDebt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, err := NewBucket(Per(3, time.Second), WithLimit(Per(10, time.Hour)))
		require.NoError(t, err)
		tok, err := b.Acquire(context.Background())
		require.NoError(t, err)
		time.Sleep(time.Millisecond)
		require.NoError(t, tok.ReleaseN(math.MaxInt))
		require.Zero(t, b.Stats().Free)
		start := time.Now()
		require.NoError(t, b.Wait(context.Background()))
		require.Equal(t, time.Hour, time.Since(start), "the debt fills the largest window once")
	})
}

// ReleaseN(0) is Cancel: the tokens come back at once, and the caller
// counts as cancelled, not admitted.
func TestReleaseNZeroIsCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, err := NewBucket(Per(2, time.Second))
		require.NoError(t, err)
		tok, err := b.AcquireN(context.Background(), 2)
		require.NoError(t, err)
		require.NoError(t, tok.ReleaseN(0))
		st := b.Stats()
		require.Equal(t, 2, st.Free)
		require.Zero(t, st.Admitted)
		require.EqualValues(t, 1, st.Cancelled)
		require.ErrorIs(t, tok.ReleaseN(0), ErrTokenEnded)
		tok.Cancel() // after ReleaseN: a no-op
		require.Equal(t, 2, b.Stats().Free)
	})
}

// A full queue refuses Reserve too (not OK), and counts it.
func TestMaxQueueRefusesReserve(t *testing.T) {
	b, err := NewBucket(Per(1, time.Hour), WithMaxQueue(1))
	require.NoError(t, err)
	require.True(t, b.Reserve().OK(), "granted at once")
	r := b.Reserve()
	require.True(t, r.OK(), "waits: one place")
	refused := b.Reserve()
	require.False(t, refused.OK())
	<-refused.Ready() // closed: nobody hangs on it
	require.EqualValues(t, 1, b.Stats().Refused)
	require.True(t, r.Cancel())
	require.True(t, b.Reserve().OK(), "a place again")
}

// WithMaxQueue(math.MaxInt) is no bound at all, not an overflow.
func TestMaxQueueHugeIsUnbounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, err := NewBucket(Per(1, time.Second), WithMaxQueue(math.MaxInt))
		require.NoError(t, err)
		for range 5 {
			go func() { _ = b.Wait(context.Background()) }()
		}
		synctest.Wait()
		require.Equal(t, 4, b.Stats().Queued)
		require.Zero(t, b.Stats().Refused)
		time.Sleep(10 * time.Second)
	})
}

// Under WithConcurrency, a higher-priority holder takes the first place
// freed, and a Wait behind a capped holder of its priority keeps its turn.
func TestConcurrencyWithPriorities(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, err := NewBucket(Per(100, time.Second), WithConcurrency(1))
		require.NoError(t, err)
		first, err := b.Acquire(context.Background())
		require.NoError(t, err)
		start := time.Now()
		went := map[string]time.Duration{}
		var mu sync.Mutex
		note := func(s string) { mu.Lock(); went[s] = time.Since(start); mu.Unlock() }
		go func() {
			tok, err := b.Acquire(context.Background())
			if assert.NoError(t, err) {
				note("low holder")
				tok.Release()
			}
		}()
		synctest.Wait()
		go func() {
			if assert.NoError(t, b.Wait(context.Background())) {
				note("wait behind it")
			}
		}()
		synctest.Wait()
		go func() {
			tok, err := b.Acquire(WithPriority(context.Background(), 1))
			if assert.NoError(t, err) {
				note("high holder")
				time.Sleep(time.Millisecond)
				tok.Release()
			}
		}()
		synctest.Wait()
		seen := func() map[string]time.Duration {
			mu.Lock()
			defer mu.Unlock()
			return maps.Clone(went)
		}
		require.Empty(t, seen(), "the cap holds everyone, the Wait behind a holder too")
		time.Sleep(time.Millisecond)
		first.Release()
		time.Sleep(time.Second)
		require.Equal(t, map[string]time.Duration{
			"high holder": time.Millisecond, "low holder": 2 * time.Millisecond, "wait behind it": 2 * time.Millisecond,
		}, seen())
	})
}
