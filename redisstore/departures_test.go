package redisstore

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
	"github.com/stretchr/testify/require"
)

// keepAll is a limit that never binds in these tests and keeps every
// completion in Redis for an hour, for emissions to count.
var keepAll = rxthrottle.Per(10, time.Hour)

// departing returns the callers of b given a departure they have not
// reached.
func departing(b *Bucket) int {
	g := &b.s.group
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(departuresLocked(g, b.keys[0]))
}

// departuresLocked returns the departures of key's window; requires
// group.mu.
func departuresLocked(g *group, key string) []*departure {
	if win := g.windows[key]; win != nil {
		return win.departing
	}
	return nil
}

// TestPriorityTakesDeparture: a caller of higher priority goes before the
// callers of lower priority that the script has given a departure they
// have not reached (SPEC.md, "Priorities"), and they keep their order
// (priority, then arrival) behind it. Only the order of the departures is
// checked (they are a window apart), never a duration. Without
// departures.go the caller of priority 1 goes last.
func TestPriorityTakesDeparture(t *testing.T) {
	b, srv := newTestBucket(t, rxthrottle.Per(1, 300*time.Millisecond), WithTimeout(10*time.Second), rxthrottle.WithLimit(keepAll))
	ctx := context.Background()
	require.NoError(t, b.Wait(ctx))
	var (
		mu    sync.Mutex
		order []int
		wg    sync.WaitGroup
	)
	for i, p := range []int{-1, 0, 1} {
		wg.Go(func() {
			require.NoError(t, b.Wait(rxthrottle.WithPriority(ctx, p)))
			mu.Lock()
			order = append(order, p)
			mu.Unlock()
		})
		if i < 2 {
			require.Eventually(t, func() bool { return departing(b) == i+1 }, 10*time.Second, time.Millisecond)
		}
	}
	wg.Wait()
	require.Equal(t, []int{1, 0, -1}, order, "the order of the departures by priority")
	st := b.Stats()
	require.EqualValues(t, 4, st.Admitted)
	require.EqualValues(t, 0, st.Cancelled)
	require.Len(t, emissions(t, srv, b), 4, "one token each, the withdrawn reservations gone")
	require.Zero(t, departing(b))
	requireNoWindow(t, b)
}

// TestBumpedCallerGivesUp: a caller whose departure a caller of higher
// priority took, and which gives up while it asks again, leaves nothing
// behind: no reservation in Redis, no place among the departures, and the
// callers after it go. Without the withdrawal of its admission asked
// again (settled as any caller's that gave up), its reservation stays.
func TestBumpedCallerGivesUp(t *testing.T) {
	b, srv := newTestBucket(t, rxthrottle.Per(1, 300*time.Millisecond), WithTimeout(10*time.Second), rxthrottle.WithLimit(keepAll))
	ctx := context.Background()
	require.NoError(t, b.Wait(ctx))
	lowCtx, cancel := context.WithCancel(rxthrottle.WithPriority(ctx, -1))
	low := make(chan error, 1)
	go func() { low <- b.Wait(lowCtx) }()
	require.Eventually(t, func() bool { return departing(b) == 1 }, 10*time.Second, time.Millisecond)
	b.s.group.mu.Lock()
	first := departuresLocked(&b.s.group, b.keys[0])[0]
	b.s.group.mu.Unlock()
	high := make(chan error, 1)
	go func() { high <- b.Wait(rxthrottle.WithPriority(ctx, 1)) }()
	// The low caller is bumped: it has its new departure (behind the high
	// one) or is asking for it; it gives up either way.
	require.Eventually(t, func() bool {
		g := &b.s.group
		g.mu.Lock()
		defer g.mu.Unlock()
		for _, d := range departuresLocked(g, b.keys[0]) {
			if d.p.prio == -1 && d != first {
				return true
			}
		}
		return false
	}, 10*time.Second, time.Millisecond)
	cancel()
	require.ErrorIs(t, recv(t, low), context.Canceled)
	require.NoError(t, recv(t, high))
	require.NoError(t, b.Wait(ctx))
	st := b.Stats()
	require.EqualValues(t, 3, st.Admitted)
	require.EqualValues(t, 1, st.Cancelled)
	require.Len(t, emissions(t, srv, b), 3, "the low caller's reservations withdrawn")
	require.Zero(t, departing(b))
	requireNoWindow(t, b)
}

// headSleeping returns the priority of the head of b's line if it sleeps
// between its asks, and whether it does.
func headSleeping(b *Bucket) (int, bool) {
	l := &b.s.lines
	l.mu.Lock()
	defer l.mu.Unlock()
	q := l.m[b.keys[0]]
	if q == nil || q.idle == nil {
		return 0, false
	}
	return q.head.Who.Prio, true
}

// TestPriorityTakesHeadOfLine: a caller of higher priority blocked by a
// held token takes the place of the head of the line while it sleeps
// between its asks, and the head goes first of its priority after it
// (SPEC.md, "Priorities"): the callers of priorities -1, 0, 1 and 2,
// arriving in that order, go in the reverse one. Without the head's
// demotion (lines.join) the caller of priority -1, the first head, takes
// the token given back and goes first.
func TestPriorityTakesHeadOfLine(t *testing.T) {
	b, _ := newTestBucket(t, rxthrottle.Per(1, 200*time.Millisecond), WithPollInterval(time.Hour))
	ctx := context.Background()
	tok, err := b.Acquire(ctx)
	require.NoError(t, err)
	order := make(chan int, 4)
	var wg sync.WaitGroup
	var heads []int
	for i, p := range []int{-1, 0, 1, 2} {
		wg.Go(func() {
			require.NoError(t, b.Wait(rxthrottle.WithPriority(ctx, p)))
			order <- p
		})
		require.Eventually(t, func() bool {
			_, ok := headSleeping(b)
			return lineLen(b) == i+1 && ok
		}, 30*time.Second, time.Millisecond, "caller %d is in line, its head asleep", i)
		head, _ := headSleeping(b)
		heads = append(heads, head)
	}
	t.Logf("the heads as each arrived: %v", heads)
	// Given back unused, the token is free at once: the head's next ask
	// takes it. (A release renews it a window later, a departure the
	// callers of higher priority would take: TestPriorityTakesDeparture.)
	tok.Cancel()
	wg.Wait()
	close(order)
	var got []int
	for p := range order {
		got = append(got, p)
	}
	require.Equal(t, []int{2, 1, 0, -1}, got)
	require.Zero(t, lineLen(b))
}

// holdScripter holds the next script call after arm until release is
// closed.
type holdScripter struct {
	Client
	armed   atomic.Bool
	entered chan struct{}
	release chan struct{}
}

func (h *holdScripter) arm() {
	h.entered, h.release = make(chan struct{}), make(chan struct{})
	h.armed.Store(true)
}

func (h *holdScripter) EvalSha(ctx context.Context, sha string, keys []string, args ...any) *redis.Cmd {
	if h.armed.CompareAndSwap(true, false) {
		close(h.entered)
		<-h.release
	}
	return h.Client.EvalSha(ctx, sha, keys, args...)
}

// TestPriorityAfterHeadsRoundTrip: a caller of higher priority blocked by a
// held token that arrives during the round trip of the head of the line
// (its ask again, answered blocked still) goes before it: the head yields
// as the answer comes. Without the yield (lines.sleeping) the head, of
// priority -1, takes the token given back and goes first.
func TestPriorityAfterHeadsRoundTrip(t *testing.T) {
	srv := redistest.Start(t)
	h := &holdScripter{Client: srv.Client(t)}
	b, err := NewBucket(h, "roundtrip", rxthrottle.Per(1, 200*time.Millisecond), WithPollInterval(time.Hour), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	ctx := context.Background()
	tok, err := b.Acquire(ctx)
	require.NoError(t, err)
	order := make(chan int, 2)
	var wg sync.WaitGroup
	wait := func(p int) {
		wg.Go(func() {
			require.NoError(t, b.Wait(rxthrottle.WithPriority(ctx, p)))
			order <- p
		})
	}
	wait(-1)
	require.Eventually(t, func() bool { _, ok := headSleeping(b); return ok }, 30*time.Second, time.Millisecond, "the head sleeps")
	h.arm()
	b.s.wake.notify() // the head asks again, and its call is held
	<-h.entered
	wait(1)
	require.Eventually(t, func() bool { return lineLen(b) == 2 }, 30*time.Second, time.Millisecond, "the caller of priority 1 is in line")
	close(h.release)
	require.Eventually(t, func() bool { _, ok := headSleeping(b); return ok }, 30*time.Second, time.Millisecond, "a head sleeps")
	tok.Cancel() // the token is free at once: the head's next ask takes it
	wg.Wait()
	close(order)
	require.Equal(t, []int{1, -1}, []int{<-order, <-order})
}
