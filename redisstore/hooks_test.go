package redisstore

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
)

// hookLog records the events of rxthrottle.OnWait and OnAdmit.
type hookLog struct {
	mu            sync.Mutex
	waits, admits []rxthrottle.Event
}

func (h *hookLog) options() []Option {
	return []Option{
		rxthrottle.OnWait(func(ev rxthrottle.Event) { h.mu.Lock(); h.waits = append(h.waits, ev); h.mu.Unlock() }),
		rxthrottle.OnAdmit(func(ev rxthrottle.Event) { h.mu.Lock(); h.admits = append(h.admits, ev); h.mu.Unlock() }),
	}
}

func (h *hookLog) get() (waits, admits []rxthrottle.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]rxthrottle.Event(nil), h.waits...), append([]rxthrottle.Event(nil), h.admits...)
}

// TestHooks: OnWait and OnAdmit hear of a shared Bucket's callers as of
// the in-memory Bucket's: Allow's admissions (wait 0), a refused Allow
// (nothing), a Wait that waits (OnWait at arrival, then OnAdmit with the
// wait on the local clock), and an Acquire blocked by a held token, which
// asks Redis several times but starts to wait once.
func TestHooks(t *testing.T) {
	clk := newSignalClock()
	var h hookLog
	opts := append(h.options(), rxthrottle.WithClock(clk))
	b, srv := newTestBucket(t, rxthrottle.Per(1, time.Hour), opts...)
	clk.watch(b.s)
	ctx := context.Background()
	t0 := clk.Now()

	ok, err := b.Allow(ctx)
	require.True(t, ok)
	require.NoError(t, err)
	ok, err = b.Allow(ctx)
	require.False(t, ok)
	require.NoError(t, err)
	waits, admits := h.get()
	require.Empty(t, waits, "Allow never waits")
	require.Equal(t, []rxthrottle.Event{{Arrived: t0, N: 1}}, admits)

	done := make(chan error, 1)
	go func() { done <- b.Wait(ctx) }()
	d := clk.nextTimer(t)
	waits, _ = h.get()
	require.Equal(t, []rxthrottle.Event{{Arrived: t0, N: 1}}, waits, "OnWait before the wait")
	clk.Add(d)
	require.NoError(t, recv(t, done))
	_, admits = h.get()
	require.Equal(t, rxthrottle.Event{Arrived: t0, Wait: d, N: 1}, admits[1])

	// A held token blocks the next caller, which sleeps (at most the poll
	// interval), asks again, and is woken by the release. (A bucket of its
	// own: Redis's clock has not moved an hour.)
	b, err = NewBucket(srv.Client(t), "held", rxthrottle.Per(1, time.Hour), append(opts, WithTimeout(suiteTimeout))...)
	require.NoError(t, err)
	clk.watch(b.s)
	tok, err := b.Acquire(ctx)
	require.NoError(t, err)
	t1 := clk.Now()
	got := make(chan error, 1)
	go func() {
		tk, err := b.Acquire(ctx)
		tk.Release()
		got <- err
	}()
	poll := clk.nextTimer(t) // blocked: it sleeps until it asks again
	clk.Add(poll)
	clk.nextTimer(t) // asked again, still blocked
	tok.Release()
	d = clk.nextTimer(t) // woken: its departure is W after the release
	clk.Add(d)
	require.NoError(t, recv(t, got))
	waits, admits = h.get()
	require.Len(t, waits, 2, "one OnWait per caller, however often it asks")
	assert.Equal(t, rxthrottle.Event{Arrived: t1, N: 1}, waits[1])
	require.Len(t, admits, 4)
	assert.Equal(t, rxthrottle.Event{Arrived: t1, Wait: poll + d, N: 1}, admits[3])
}

// TestHooksKeyed: a Keyed limiter's events carry the caller's key.
func TestHooksKeyed(t *testing.T) {
	var h hookLog
	srv := redistest.Start(t)
	k, err := NewKeyed(srv.Client(t), "hooks", rxthrottle.Per(1, time.Hour), append(h.options(), WithTimeout(suiteTimeout))...)
	require.NoError(t, err)
	require.NoError(t, k.Wait(context.Background(), "alice"))
	ok, err := k.Allow(context.Background(), "bob")
	require.True(t, ok)
	require.NoError(t, err)
	_, admits := h.get()
	require.Len(t, admits, 2)
	assert.Equal(t, "alice", admits[0].Key)
	assert.Equal(t, "bob", admits[1].Key)
}

// TestHooksPanicAndReenter: a hook that panics is recovered and the caller
// goes on; a hook may call back into the limiter (no lock is held).
func TestHooksPanicAndReenter(t *testing.T) {
	var b *Bucket
	var inner []bool
	entered := false
	b, _ = newTestBucket(t, rxthrottle.Per(2, time.Hour),
		rxthrottle.OnWait(func(rxthrottle.Event) { panic("OnWait") }),
		rxthrottle.OnAdmit(func(ev rxthrottle.Event) {
			if !entered {
				entered = true
				ok, err := b.Allow(context.Background()) // re-enters: its own OnAdmit runs too
				require.NoError(t, err)
				inner = append(inner, ok)
				return
			}
			panic("OnAdmit")
		}))
	require.NoError(t, b.Wait(context.Background()))
	assert.Equal(t, []bool{true}, inner)
	ok, err := b.Allow(context.Background())
	require.NoError(t, err)
	require.False(t, ok, "two admitted: the Wait and the hook's Allow")
	assert.Equal(t, uint64(2), b.Stats().Admitted)
}

// TestHooksFailOpen: an admission by the failure policy is an admission.
func TestHooksFailOpen(t *testing.T) {
	var h hookLog
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialerRetries: 1})
	t.Cleanup(func() { _ = rdb.Close() })
	b, err := NewBucket(rdb, "down", rxthrottle.Per(1, time.Hour),
		append(h.options(), WithFailurePolicy(FailOpen), WithRetryBackoff(0, 0))...)
	require.NoError(t, err)
	require.NoError(t, b.Wait(context.Background()))
	ok, err := b.Allow(context.Background())
	require.NoError(t, err)
	require.True(t, ok)
	waits, admits := h.get()
	assert.Empty(t, waits)
	assert.Len(t, admits, 2)
}
