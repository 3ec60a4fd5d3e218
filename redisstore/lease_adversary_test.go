package redisstore

import (
	"bytes"
	"context"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
)

// leaseGate holds every lease request (an EVALSHA whose arguments hold
// "lease") while armed, until the gate is opened; entered is told of each.
type leaseGate struct {
	Client
	armed   atomic.Bool
	gate    chan struct{}
	entered chan struct{}
}

func (g *leaseGate) EvalSha(ctx context.Context, sha string, keys []string, args ...any) *redis.Cmd {
	if g.armed.Load() && slices.Contains(args, any(opLease)) {
		g.entered <- struct{}{}
		<-g.gate
	}
	return g.Client.EvalSha(ctx, sha, keys, args...)
}

// requireNothingHeld fails unless b's held ZSET is empty (its sentinel
// aside).
func requireNothingHeld(t *testing.T, srv *redistest.Server, b *Bucket) {
	t.Helper()
	require.Empty(t, scores(t, srv, b.keys[1]), "tokens still held in Redis")
	e, err := srv.Do("HGET", b.keys[2], "e")
	if err != redis.Nil {
		require.NoError(t, err)
		require.Equal(t, "0", e, "held tokens counted in the state")
	}
}

// TestLeaseContextEndsDuringLease: a caller whose context ends while it
// waits for a lease gets its error at once; the lease, when it comes, is
// in the pool (nothing lost): the next caller takes it without a round
// trip, and Close gives the rest back.
func TestLeaseContextEndsDuringLease(t *testing.T) {
	srv := redistest.Start(t)
	g := &leaseGate{Client: srv.Client(t), gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	b, err := NewBucket(g, "gated", rxthrottle.Per(100, time.Minute), WithLease(0), WithTimeout(30*time.Second))
	require.NoError(t, err)
	require.NoError(t, b.Wait(context.Background())) // the configuration is read, a first lease used
	require.NoError(t, b.Close())
	b, err = NewBucket(g, "gated", rxthrottle.Per(100, time.Minute), WithLease(0), WithTimeout(30*time.Second))
	require.NoError(t, err)
	g.armed.Store(true)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- b.Wait(ctx) }()
	<-g.entered // the lease is in flight
	cancel()
	require.ErrorIs(t, recv(t, errc), context.Canceled)
	g.armed.Store(false)
	close(g.gate)
	require.Eventually(t, func() bool {
		b.pool.mu.Lock()
		defer b.pool.mu.Unlock()
		return !b.pool.busy
	}, 30*time.Second, time.Millisecond)
	b.pool.mu.Lock()
	got := len(b.pool.avail)
	b.pool.mu.Unlock()
	require.Equal(t, 1, got, "the lease of the caller that gave up is in the pool")
	require.NoError(t, b.Wait(context.Background()))
	require.EqualValues(t, 1, b.Leased())
	require.EqualValues(t, 1, b.Stats().Cancelled)
	require.NoError(t, b.Close())
	requireNothingHeld(t, srv, b)
	require.Len(t, emissions(t, srv, b), 2, "two admissions, two completions")
}

// TestLeaseCloseWithTokensOut: Close gives back what the pool holds, and a
// token Acquire took from a lease stays held until its release, which is
// reported after Close too.
func TestLeaseCloseWithTokensOut(t *testing.T) {
	b, srv := newTestBucket(t, rxthrottle.Per(1000, time.Minute), WithLease(0), WithTimeout(suiteTimeout))
	ctx := context.Background()
	for range 20 {
		require.NoError(t, b.Wait(ctx)) // the block grows
	}
	tok, err := b.Acquire(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 21, b.Leased())
	require.NoError(t, b.Close())
	require.Len(t, scores(t, srv, b.keys[1]), 1, "the Acquire's token is still held")
	tok.Release()
	require.Eventually(t, func() bool { return len(scores(t, srv, b.keys[1])) == 0 }, 30*time.Second, time.Millisecond)
	require.Len(t, emissions(t, srv, b), 21)
	require.NoError(t, b.Wait(ctx), "the Bucket works on after Close, unleased")
	require.EqualValues(t, 21, b.Leased())
}

// TestLeaseDeadlinePassesWhileAcquired: a token Acquire took from a lease
// and held past the lease deadline completed at the deadline in Redis;
// ReleaseN says so, and a release then records nothing more.
func TestLeaseDeadlinePassesWhileAcquired(t *testing.T) {
	b, srv := newTestBucket(t, rxthrottle.Per(10, time.Minute), WithLease(0), WithHoldTimeout(300*time.Millisecond), WithTimeout(suiteTimeout))
	ctx := context.Background()
	tok, err := b.Acquire(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 1, b.Leased())
	deadline := scores(t, srv, b.keys[1])
	require.Len(t, deadline, 1)
	time.Sleep(400 * time.Millisecond)
	require.NoError(t, b.Wait(ctx)) // its script completes the expired lease
	require.ErrorIs(t, tok.ReleaseN(1), rxthrottle.ErrTokenEnded)
	require.NoError(t, b.Close())
	requireNothingHeld(t, srv, b)
	done := emissions(t, srv, b)
	require.Contains(t, done, deadline[0], "the held token completed at its lease deadline")
	require.Len(t, done, 2)
}

// TestLeaseAcquireReleaseN: ReleaseN on a token from a lease: 0 gives it
// back, 1 completes it, 3 completes it with a debt of 2 at the release.
func TestLeaseAcquireReleaseN(t *testing.T) {
	b, srv := newTestBucket(t, rxthrottle.Per(10, time.Minute), WithLease(0), WithTimeout(suiteTimeout))
	ctx := context.Background()
	for _, used := range []int{0, 1, 3} {
		tok, err := b.Acquire(ctx)
		require.NoError(t, err)
		require.NoError(t, tok.ReleaseN(used))
		require.ErrorIs(t, tok.ReleaseN(used), rxthrottle.ErrTokenEnded)
	}
	require.EqualValues(t, 3, b.Leased())
	require.NoError(t, b.Close())
	requireNothingHeld(t, srv, b)
	require.Len(t, emissions(t, srv, b), 0+1+3)
}

// TestLeaseLostHeld: the held ZSET lost while leases are out (a DEL, an
// eviction of that one key) never lets the window bend: the next script
// pauses the schedule until every token it may have held has renewed.
func TestLeaseLostHeld(t *testing.T) {
	srv := redistest.Start(t)
	limit := rxthrottle.Per(20, 200*time.Millisecond)
	spans := runLeased(t, srv, "lost", limit, 6, func(bs []*Bucket) {
		for range 3 {
			time.Sleep(300 * time.Millisecond)
			_, err := srv.Do("DEL", bs[0].keys[1])
			require.NoError(t, err)
		}
	})
	requireSpansFit(t, spans, []rxthrottle.Limit{limit}, "held lost three times")
}

// runLeased runs g goroutines calling Wait for 1.5s, and until during
// has returned, on two leased Buckets named name (hold timeout 1s) on
// srv, and during on the caller's goroutine meanwhile; it closes them and
// returns what their admission log says Redis recorded.
func runLeased(t *testing.T, srv *redistest.Server, name string, limit rxthrottle.Limit, g int, during func([]*Bucket)) []heldSpan {
	t.Helper()
	var buf bytes.Buffer
	log := &admissionLog{w: &buf}
	var bs []*Bucket
	for range 2 {
		b, err := NewBucket(srv.Client(t), name, limit, WithLease(0), WithHoldTimeout(time.Second), WithTimeout(suiteTimeout))
		require.NoError(t, err)
		log.attach(b)
		bs = append(bs, b)
	}
	stop := time.Now().Add(1500 * time.Millisecond)
	ended := make(chan struct{})
	var wg sync.WaitGroup
	for i := range g {
		wg.Go(func() {
			for time.Now().Before(stop) || !isClosed(ended) {
				require.NoError(t, bs[i%2].Wait(context.Background()))
			}
		})
	}
	during(bs)
	close(ended)
	wg.Wait()
	for _, b := range bs {
		require.NoError(t, b.Close())
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	return spansOf(t, &buf, micros(time.Second))
}

// TestLeaseFlushAll: Redis loses everything mid-lease (FLUSHALL, a restart
// without persistence): the limiters carry on, and the window around the
// loss holds at most what the package doc says: twice N plus the tokens
// leased out at the loss (at most N).
func TestLeaseFlushAll(t *testing.T) {
	srv := redistest.Start(t)
	limit := rxthrottle.Per(20, 200*time.Millisecond)
	var buf bytes.Buffer
	log := &admissionLog{w: &buf}
	b, err := NewBucket(srv.Client(t), "flushed", limit, WithLease(0), WithHoldTimeout(time.Second), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	log.attach(b)
	stop := time.Now().Add(time.Second)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for time.Now().Before(stop) {
				require.NoError(t, b.Wait(context.Background()))
			}
		})
	}
	time.Sleep(400 * time.Millisecond)
	_, err = srv.Do("FLUSHALL")
	require.NoError(t, err)
	wg.Wait()
	require.NoError(t, b.Close())
	log.mu.Lock()
	defer log.mu.Unlock()
	requireSpansFit(t, spansOf(t, &buf, micros(time.Second)), []rxthrottle.Limit{rxthrottle.Per(3*limit.N, limit.Window)}, "FLUSHALL mid-run")
}

// TestLeaseOutage: Redis down while leases are out: callers get the
// failure policy's answer (FailClosed: a *StoreError) once the pool is
// empty, nobody hangs, and the limiter is back on Redis when Redis is.
func TestLeaseOutage(t *testing.T) {
	b, srv := newTestBucket(t, rxthrottle.Per(1000, time.Minute), WithLease(0), WithTimeout(200*time.Millisecond))
	ctx := context.Background()
	require.NoError(t, b.Wait(ctx))
	srv.Stop()
	var failed int
	for range 50 {
		if err := b.Wait(ctx); err != nil {
			var serr *StoreError
			require.ErrorAs(t, err, &serr)
			failed++
		}
	}
	require.Positive(t, failed)
	srv.Start()
	require.Eventually(t, func() bool { return b.Wait(ctx) == nil }, 30*time.Second, 10*time.Millisecond)
	require.NoError(t, b.Close())
}

// TestLeaseRefusedOptions: the options leases cannot keep are refused at
// construction, and NewKeyed does not take WithLease.
func TestLeaseRefusedOptions(t *testing.T) {
	c := nopClient(t)
	l := rxthrottle.Per(5, time.Second)
	_, err := NewBucket(c, "x", l, WithLease(-1))
	require.ErrorContains(t, err, "WithLease(-1)")
	_, err = NewBucket(c, "x", l, WithLease(0), WithSpacing(time.Millisecond))
	require.ErrorContains(t, err, "WithSpacing")
	_, err = NewBucket(c, "x", l, WithLease(0), rxthrottle.WithConcurrency(2))
	require.ErrorContains(t, err, "WithConcurrency")
	_, err = NewKeyed(c, "x", l, WithLease(0))
	require.ErrorContains(t, err, "WithLease")
}

// TestLeaseSetLimit: SetLimit lowers N while leases are out: no window
// that starts confBound after it holds more than the new N (a lease
// granted under the old limits admits nobody leaseAge after it was asked
// for, and every later lease runs under the new ones). The callers go on
// until Redis's clock is a window past that bound, and a Wait then
// completes after it (its span does: c is never before the use), so the
// windows checked are never empty: the run ended at a fixed instant, and
// on a loaded machine (load 20) SetLimit came late enough once that no
// admission completed after the bound (with the SetLimit 1.2 s into the
// 1.5 s run, none ever did).
func TestLeaseSetLimit(t *testing.T) {
	srv := redistest.Start(t)
	old, lower := rxthrottle.Per(200, 200*time.Millisecond), rxthrottle.Per(20, 200*time.Millisecond)
	var set int64
	spans := runLeased(t, srv, "setlimit", old, 8, func(bs []*Bucket) {
		time.Sleep(500 * time.Millisecond)
		require.NoError(t, bs[1].SetLimit(lower))
		v, err := srv.Do("HGET", "rxthrottle:{setlimit}:conf", "v")
		require.NoError(t, err)
		set, err = strconv.ParseInt(v.(string), 10, 64)
		require.NoError(t, err)
		for redisNow(t, srv) < set+micros(confBound+lower.Window) {
			time.Sleep(10 * time.Millisecond)
		}
		require.NoError(t, bs[0].Wait(context.Background()))
	})
	var after []heldSpan
	for _, s := range spans {
		if s.c >= set+micros(confBound) {
			after = append(after, s)
		}
	}
	require.NotEmpty(t, after, "the Wait after the bound")
	// Every window that starts after the bound: those spans (and the
	// earlier ones cannot reach it) fit the new limit.
	requireSpansFit(t, after, []rxthrottle.Limit{lower}, "after SetLimit + the bound")
	requireSpansFit(t, spans, []rxthrottle.Limit{old}, "the whole run, under the old limit")
}

// TestLeaseSlowProcessNotStarved: one process leases all it can (8
// callers in a loop), another needs a token now and then: the slow one
// gets every token it asks for (the time it waited is logged; the share
// cap and FIFO across processes bound it, see the package doc).
func TestLeaseSlowProcessNotStarved(t *testing.T) {
	srv := redistest.Start(t)
	limit := rxthrottle.Per(50, 200*time.Millisecond)
	busy, err := NewBucket(srv.Client(t), "starve", limit, WithLease(0), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	slow, err := NewBucket(srv.Client(t), "starve", limit, WithLease(0), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				require.NoError(t, busy.Wait(context.Background()))
			}
		})
	}
	var waits []time.Duration
	for range 8 {
		time.Sleep(100 * time.Millisecond)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		start := time.Now()
		require.NoError(t, slow.Wait(ctx), "the slow process starved")
		cancel()
		waits = append(waits, time.Since(start))
	}
	close(stop)
	wg.Wait()
	require.NoError(t, busy.Close())
	require.NoError(t, slow.Close())
	t.Logf("the slow process waited %v (the window is %v); the busy one was admitted %d times", waits, limit.Window, busy.Stats().Admitted)
}

// TestLeaseLostHeldPauses: a leased token out (Acquire) when held is lost:
// the next script pauses the schedule until it has renewed, so another
// process cannot take the N-1 left and N more besides.
func TestLeaseLostHeldPauses(t *testing.T) {
	srv := redistest.Start(t)
	limit := rxthrottle.Per(5, time.Minute)
	a, err := NewBucket(srv.Client(t), "lostpause", limit, WithLease(0), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	b, err := NewBucket(srv.Client(t), "lostpause", limit, WithTimeout(suiteTimeout))
	require.NoError(t, err)
	tok, err := a.Acquire(context.Background())
	require.NoError(t, err)
	require.EqualValues(t, 1, a.Leased())
	_, err = srv.Do("DEL", a.keys[1])
	require.NoError(t, err)
	ok, err := b.AllowN(context.Background(), limit.N)
	require.NoError(t, err)
	require.False(t, ok, "N more admitted while a leased token was out")
	tok.Release()
	require.NoError(t, a.Close())
}
