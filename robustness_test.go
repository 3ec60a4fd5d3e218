package rxthrottle

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// captureSlog sends the default slog logger to a buffer for the test.
func captureSlog(t *testing.T) *lockedBuffer {
	var buf lockedBuffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })
	return &buf
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestPanickingHooksLeaveTheBucketUsable: before the fix, a panicking
// OnWait left the bucket's mutex held (the next Allow and Stats hung) and a
// panicking OnAdmit on the timer's goroutine killed the process.
func TestPanickingHooksLeaveTheBucketUsable(t *testing.T) {
	logs := captureSlog(t)
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		b, err := NewBucket(Per(1, time.Second),
			OnWait(func(Event) { panic("bad OnWait") }),
			OnAdmit(func(Event) { panic("bad OnAdmit") }))
		require.NoError(t, err)
		require.NoError(t, b.Wait(ctx))
		done := make(chan error)
		go func() { done <- b.Wait(ctx) }() // OnWait panics, then the timer's OnAdmit
		synctest.Wait()
		ok, err := b.Allow(ctx)
		require.NoError(t, err)
		require.False(t, ok, "the bucket answers: its lock is free")
		require.Equal(t, 1, b.Stats().Queued, "the waiter is queued and will be served")
		require.NoError(t, <-done)
		require.Equal(t, uint64(2), b.Stats().Admitted)
	})
	require.Contains(t, logs.String(), "bad OnWait")
	require.Contains(t, logs.String(), "bad OnAdmit")
}

// TestHooksMayCallBackIntoTheLimiter: hooks run with no lock held.
func TestHooksMayCallBackIntoTheLimiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var b *Bucket
		var seen []Stats
		var mu sync.Mutex
		var err error
		b, err = NewBucket(Per(1, time.Second), OnAdmit(func(Event) {
			st := b.Stats() // deadlocked before the fix
			mu.Lock()
			seen = append(seen, st)
			mu.Unlock()
		}))
		require.NoError(t, err)
		require.NoError(t, b.Wait(context.Background()))
		require.NoError(t, b.Wait(context.Background()))
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		require.Len(t, seen, 2)
	})
}

// TestNilAndZeroValuesFailClearly: before the fix, a nil or zero Bucket,
// a zero Keyed and a nil or zero Reservation were bare nil dereferences
// (maphash: use of uninitialized Seed for Keyed), and after a zero
// Bucket's Wait panicked its Allow hung.
func TestNilAndZeroValuesFailClearly(t *testing.T) {
	ctx := context.Background()
	for name, b := range map[string]*Bucket{"nil": nil, "zero": {}} {
		t.Run(name+" Bucket", func(t *testing.T) {
			require.ErrorIs(t, b.Wait(ctx), errNotBuilt)
			require.EqualError(t, b.Wait(ctx), "rxthrottle: Bucket is nil or was not made by NewBucket")
			_, err := b.Allow(ctx)
			require.ErrorIs(t, err, errNotBuilt)
			_, err = b.Allow(ctx) // no hang after the first call
			require.ErrorIs(t, err, errNotBuilt)
			_, err = b.Acquire(ctx)
			require.ErrorIs(t, err, errNotBuilt)
			require.ErrorIs(t, b.SetLimit(Per(1, time.Second)), errNotBuilt)
			b.Pause(time.Now().Add(time.Hour))
			require.Equal(t, Stats{}, b.Stats())
			require.Nil(t, b.Limits())
			r := b.Reserve()
			require.False(t, r.OK())
			require.False(t, r.Granted())
			<-r.Ready() // closed: nobody hangs on it
		})
	}
	for name, k := range map[string]*Keyed{"nil": nil, "zero": {}} {
		t.Run(name+" Keyed", func(t *testing.T) {
			require.ErrorIs(t, k.Wait(ctx, "a"), errKeyedNotBuilt)
			_, err := k.Allow(ctx, "a")
			require.ErrorIs(t, err, errKeyedNotBuilt)
			_, err = k.Acquire(ctx, "a")
			require.ErrorIs(t, err, errKeyedNotBuilt)
			require.ErrorIs(t, k.SetLimit(Per(1, time.Second)), errKeyedNotBuilt)
			k.Pause("a", time.Now().Add(time.Hour))
			require.Equal(t, Stats{}, k.Stats())
			require.Nil(t, k.Limits())
		})
	}
	for name, r := range map[string]*Reservation{"nil": nil, "zero": {}} {
		t.Run(name+" Reservation", func(t *testing.T) {
			require.False(t, r.OK())
			require.False(t, r.Granted())
			require.False(t, r.Cancel())
			require.True(t, r.Time().IsZero())
			require.Zero(t, r.Delay())
			<-r.Ready()
		})
	}
	b, err := NewBucket(Per(1, time.Second))
	require.NoError(t, err)
	//lint:ignore SA1012 a nil context is what this test is about
	require.ErrorIs(t, b.Wait(nil), errNilContext) //nolint:staticcheck
}
