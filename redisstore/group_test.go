package redisstore

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rxthrottle/rxthrottle"
	"github.com/stretchr/testify/require"
)

// queued returns how many admissions wait for the next call of keys.
func queued(b *Bucket) int {
	b.s.group.mu.Lock()
	defer b.s.group.mu.Unlock()
	if f := flightLocked(&b.s.group, b.keys[0]); f != nil {
		return b.s.group.windows[b.keys[0]].queuedLocked()
	}
	return 0
}

// flightLocked returns the call in flight on the schedule stored under
// key, or nil; requires g.mu.
func flightLocked(g *group, key string) *flight {
	if win := g.windows[key]; win != nil {
		return win.flight
	}
	return nil
}

// flyingLocked reports whether a call of g is in flight; requires g.mu.
func flyingLocked(g *group) bool {
	for _, win := range g.windows {
		if win.flight != nil {
			return true
		}
	}
	return false
}

// TestGroupCommit: a caller alone goes at once, in a call of its own; the
// callers that arrive while it is in flight go together in the next call,
// one script run, and each gets its own answer.
func TestGroupCommit(t *testing.T) {
	f := &fakeRedis{block: make(chan struct{})}
	b, err := NewBucket(f, "api", rxthrottle.Per(100, time.Hour))
	require.NoError(t, err)
	ctx := context.Background()
	var wg sync.WaitGroup
	wg.Go(func() { require.NoError(t, b.Wait(ctx)) })
	require.Eventually(t, func() bool { return f.count() == 1 }, 30*time.Second, time.Millisecond, "the first caller goes at once")
	for range 3 {
		wg.Go(func() { require.NoError(t, b.Wait(ctx)) })
	}
	wg.Go(func() {
		ok, err := b.Allow(ctx)
		require.NoError(t, err)
		require.True(t, ok)
	})
	require.Eventually(t, func() bool { return queued(b) == 4 }, 30*time.Second, time.Millisecond)

	// A caller that gives up while queued is taken out: nothing is sent.
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- b.Wait(cctx) }()
	require.Eventually(t, func() bool { return queued(b) == 5 }, 30*time.Second, time.Millisecond)
	cancel()
	require.ErrorIs(t, recv(t, done), context.Canceled)
	require.Equal(t, 4, queued(b))

	close(f.block)
	wg.Wait()
	drained(t, b.s) // the leader ends its flight after its callers have their answers
	f.mu.Lock()
	defer f.mu.Unlock()
	require.Equal(t, []int{1, 4}, f.batches, "one call for the first caller, one for the four that queued")
	require.Equal(t, uint64(5), b.Stats().Admitted)
}

// TestGroupCommitPerKey: a Keyed limiter batches per key: the callers of
// one key never ride in another key's script run (its keys are another
// hash slot).
func TestGroupCommitPerKey(t *testing.T) {
	f := &fakeRedis{block: make(chan struct{})}
	k, err := NewKeyed(f, "users", rxthrottle.Per(100, time.Hour))
	require.NoError(t, err)
	ctx := context.Background()
	var wg sync.WaitGroup
	inFlight := func(key string) int {
		k.s.group.mu.Lock()
		defer k.s.group.mu.Unlock()
		if fl := flightLocked(&k.s.group, k.Keys(key)[0]); fl != nil {
			return 1 + k.s.group.windows[k.Keys(key)[0]].queuedLocked()
		}
		return 0
	}
	wg.Go(func() { require.NoError(t, k.Wait(ctx, "a")) })
	wg.Go(func() { require.NoError(t, k.Wait(ctx, "b")) })
	require.Eventually(t, func() bool { return f.count() == 2 }, 30*time.Second, time.Millisecond, "each key's first caller goes at once")
	for range 2 {
		wg.Go(func() { require.NoError(t, k.Wait(ctx, "a")) })
	}
	wg.Go(func() { require.NoError(t, k.Wait(ctx, "b")) })
	require.Eventually(t, func() bool { return inFlight("a") == 3 && inFlight("b") == 2 }, 30*time.Second, time.Millisecond)
	close(f.block)
	wg.Wait()
	drained(t, k.s) // the leader ends its flight after its callers have their answers
	f.mu.Lock()
	defer f.mu.Unlock()
	require.ElementsMatch(t, []int{1, 1, 2, 1}, f.batches, "a's two queued callers go together, b's one alone")
}

// TestGroupCommitCarriesEnds: a Release (or any end of an admission) that
// comes while a call is in flight queues like an admission and rides in
// the next script run, in its arrival order; it returns when that run has
// answered.
func TestGroupCommitCarriesEnds(t *testing.T) {
	f := &fakeRedis{block: make(chan struct{})}
	b, err := NewBucket(f, "api", rxthrottle.Per(100, time.Hour))
	require.NoError(t, err)
	ctx := context.Background()
	var wg sync.WaitGroup
	wg.Go(func() { require.NoError(t, b.Wait(ctx)) })
	require.Eventually(t, func() bool { return f.count() == 1 }, 30*time.Second, time.Millisecond)
	released := make(chan struct{})
	go func() {
		(&heldToken{s: b.s, keys: b.keys, id: 7, n: 1, d: 1000}).ReleaseToken(7)
		close(released)
	}()
	require.Eventually(t, func() bool { return queued(b) == 1 }, 30*time.Second, time.Millisecond)
	wg.Go(func() { require.NoError(t, b.Wait(ctx)) })
	require.Eventually(t, func() bool { return queued(b) == 2 }, 30*time.Second, time.Millisecond)
	select {
	case <-released:
		t.Fatal("Release returned before its script run")
	default:
	}
	close(f.block)
	wg.Wait()
	<-released
	f.mu.Lock()
	defer f.mu.Unlock()
	require.Equal(t, []int{1, 2}, f.batches, "the Release and the Wait behind it went in one call")
}

// waitHandOver starts a caller of b.Wait with ctx in the background and
// waits until it is queued behind the call in flight (n queued in all).
func waitHandOver(t *testing.T, b *Bucket, ctx context.Context, n int) chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- b.Wait(ctx) }()
	require.Eventually(t, func() bool { return queued(b) == n }, 30*time.Second, time.Millisecond)
	return done
}

// cancelAtHandOver makes the hth hand-over of b's group (h from 1) end a
// caller's context with cancel, then give the caller, whose answer comes
// on caller, up to 200 ms to see it before the hand-over goes on (the
// answer is put back for the test to read).
func cancelAtHandOver(b *Bucket, h int32, cancel context.CancelFunc, caller chan error) {
	var count atomic.Int32
	b.s.group.handedOver = func() {
		if count.Add(1) != h {
			return
		}
		cancel()
		select {
		case err := <-caller:
			caller <- err
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// bucketInFlight returns a Bucket over a fakeRedis that holds every call
// until its block is closed, with a first caller's call in flight; its
// answer comes on first.
func bucketInFlight(t *testing.T) (f *fakeRedis, b *Bucket, first chan error) {
	t.Helper()
	f = &fakeRedis{block: make(chan struct{})}
	b, err := NewBucket(f, "api", rxthrottle.Per(100, time.Hour))
	require.NoError(t, err)
	first = make(chan error, 1)
	go func() { first <- b.Wait(context.Background()) }()
	require.Eventually(t, func() bool { return f.count() == 1 }, 30*time.Second, time.Millisecond)
	return f, b, first
}

// TestGroupCommitLeadTakenAsContextEnds: the caller made the next leader
// takes the lead even if its context ends as the lead is handed over, so
// the callers queued behind it get their answers (and its own admission
// is withdrawn). (The lead was handed
// over after the group's lock was released: a caller whose context ended
// in between gave it up unseen, and every later caller of the schedule
// queued forever behind a call that was never made.)
func TestGroupCommitLeadTakenAsContextEnds(t *testing.T) {
	f, b, first := bucketInFlight(t)
	ctx := context.Background()
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	lead := waitHandOver(t, b, lctx, 1)
	behind := waitHandOver(t, b, ctx, 2)
	cancelAtHandOver(b, 1, cancel, lead)
	close(f.block)
	require.NoError(t, recv(t, first))
	require.NoError(t, recv(t, behind), "the caller behind the leader got its answer")
	// The leader's context ended as its call went: it either took the
	// answer (its context and the answer were both ready, and the answer
	// won) or gave up, and then its admission was withdrawn when the
	// answer came. Either way it returned.
	if err := recv(t, lead); err != nil {
		require.ErrorIs(t, err, context.Canceled)
	}
	require.Eventually(t, func() bool {
		b.s.group.mu.Lock()
		defer b.s.group.mu.Unlock()
		return !flyingLocked(&b.s.group)
	}, 30*time.Second, time.Millisecond, "nothing left in flight")
}

// TestGroupCommitAnswerTakenAsContextEnds: a caller whose admission rode
// in another caller's call and whose context ends as the answers are
// handed over takes its answer (before, it could return its context's
// error while its token, admitted, was neither used nor withdrawn).
func TestGroupCommitAnswerTakenAsContextEnds(t *testing.T) {
	f, b, first := bucketInFlight(t)
	ctx := context.Background()
	lead := waitHandOver(t, b, ctx, 1)
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rider := waitHandOver(t, b, rctx, 2)
	// The second hand-over is the answer of the leader's call, which
	// carried the rider's admission.
	cancelAtHandOver(b, 2, cancel, rider)
	close(f.block)
	require.NoError(t, recv(t, first))
	require.NoError(t, recv(t, lead))
	require.NoError(t, recv(t, rider), "the rider takes the admission made for it")
	f.mu.Lock()
	defer f.mu.Unlock()
	require.Equal(t, []int{1, 2}, f.batches, "no withdrawal was needed")
}
