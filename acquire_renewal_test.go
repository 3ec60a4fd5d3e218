package rxthrottle

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/require"
)

// An Acquire that arrives just before, at, or just after the instant a
// token renews goes at that instant or at its arrival, whichever is later,
// to the nanosecond: on the hot path's written-out grant (one limit, no
// spacing, no hold live, nobody waiting; wait_hotpath.go, acquireFree)
// as on the general path, which a second limit that never binds forces.
// The two must agree with the rule, not only with each other: a grant one
// nanosecond early fails here. Both clocks are covered: the real one
// (read in a synctest bubble) and an injected clock.Mock.
func TestAcquireAtTheRenewalInstant(t *testing.T) {
	const ms = time.Millisecond
	paths := map[string][]Option{
		"one limit (written-out grant)": nil,
		"two limits (general path)":     {WithLimit(Per(1000, time.Nanosecond))},
	}
	for name, opts := range paths {
		for _, offset := range []time.Duration{-time.Nanosecond, 0, time.Nanosecond} {
			t.Run(name+"/real/"+offset.String(), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					start := time.Now()
					b, err := NewBucket(Per(2, 10*ms), append(opts[:len(opts):len(opts)], WithHoldTimeout(5*ms))...)
					require.NoError(t, err)
					since := func() time.Duration { return time.Since(start) }
					acquireAtRenewals(t, b, offset, time.Sleep, since)
				})
			})
			t.Run(name+"/mock/"+offset.String(), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					mock := clock.NewMock()
					start := mock.Now()
					b, err := NewBucket(Per(2, 10*ms), append(opts[:len(opts):len(opts)], WithHoldTimeout(5*ms), WithClock(mock))...)
					require.NoError(t, err)
					// A sleep on the mock: a caller blocked in Acquire is
					// woken by the mock's timers as time is moved on.
					sleep := func(d time.Duration) { synctest.Wait(); mock.Add(d); synctest.Wait() }
					since := func() time.Duration { return mock.Since(start) }
					acquireAtRenewals(t, b, offset, sleep, since)
				})
			})
		}
	}
}

// acquireAtRenewals spends both tokens of b (Per(2, 10ms), a hold
// timeout of 5 ms) at 0 and 3 ms with Wait, then acquires at each token's
// renewal plus offset, releasing at once: each must go at max(renewal,
// arrival). Last, a hold never released: both tokens are free again once
// it times out and W more has passed, not a nanosecond sooner. sleep moves
// b's clock on, since reads it from the start.
func acquireAtRenewals(t *testing.T, b *Bucket, offset time.Duration, sleep func(time.Duration), since func() time.Duration) {
	const ms = time.Millisecond
	ctx := context.Background()
	require.NoError(t, b.Wait(ctx))
	sleep(3 * ms)
	require.NoError(t, b.Wait(ctx))
	// Renewals at 10 ms and 13 ms; a hold released at once renews W after
	// its release, so the third acquire, at 20 ms + offset, meets the
	// first hold's token again.
	for _, renewal := range []time.Duration{10 * ms, 13 * ms, 20*ms + max(offset, 0)} {
		sleep(renewal + offset - since())
		arrival := since()
		got := goTimed(since, func() error {
			tok, err := b.Acquire(ctx)
			tok.Release()
			return err
		})
		wantAt(t, got, max(renewal, arrival), sleep, since)
	}
	sleep(time.Hour) // every token free
	granted := since()
	_, err := b.Acquire(ctx) // never released: it times out 5 ms on
	require.NoError(t, err)
	require.Equal(t, granted, since())
	got := goTimed(since, func() error { return b.WaitN(ctx, 2) })
	wantAt(t, got, granted+15*ms, sleep, since)
}

// goTimed runs f on a goroutine of its own and sends when it returned,
// by since, or -1 if it failed.
func goTimed(since func() time.Duration, f func() error) <-chan time.Duration {
	got := make(chan time.Duration, 1)
	go func() {
		if err := f(); err != nil {
			got <- -1
			return
		}
		got <- since()
	}()
	return got
}

// wantAt moves the clock on to want, checking that got has not returned
// before it, then that it returns at want. Run in a synctest bubble.
func wantAt(t *testing.T, got <-chan time.Duration, want time.Duration, sleep func(time.Duration), since func() time.Duration) {
	t.Helper()
	if now := since(); now < want {
		synctest.Wait()
		select {
		case at := <-got:
			t.Fatalf("went at %v, before %v", at, want)
		default:
		}
		sleep(want - now)
	}
	require.Equal(t, want, <-got)
}
