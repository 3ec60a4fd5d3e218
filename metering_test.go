package rxthrottle

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

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
	tok := NewToken(r, 7)
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
