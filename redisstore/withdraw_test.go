package redisstore

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
	"github.com/stretchr/testify/require"
)

// TestGhostDeparturesWithdrawn (issue 17, item 1): ten callers reserve in
// turn on Per(1, 200ms) and all give up, the oldest first; the next
// caller gets the first renewal, as if none of them had arrived. (The
// store kept one newest departure, stepped back once by a withdrawal of
// the newest only: the next caller waited 1.8 s for departures nobody
// held.)
func TestGhostDeparturesWithdrawn(t *testing.T) {
	clk := newSignalClock()
	b, srv := newTestBucket(t, rxthrottle.Per(1, 200*time.Millisecond), WithClock(clk))
	clk.watch(b.s)
	require.NoError(t, b.Wait(context.Background()))
	first := emissions(t, srv, b)
	cancels := make([]context.CancelFunc, 10)
	dones := make([]chan error, 10)
	for i := range cancels {
		ctx, cancel := context.WithCancel(context.Background())
		cancels[i], dones[i] = cancel, make(chan error, 1)
		go func() { dones[i] <- b.Wait(ctx) }()
		clk.nextTimer(t)
	}
	require.Len(t, emissions(t, srv, b), 11, "every caller holds a reservation")
	for i, cancel := range cancels {
		cancel()
		require.ErrorIs(t, recv(t, dones[i]), context.Canceled)
	}
	require.Equal(t, first, emissions(t, srv, b), "every reservation is gone")
	a := reserve(t, b)
	// At the first renewal, or at once if a loaded machine asked later
	// than that (the ghosts would put it 2 s after the first).
	renewal := first[0] + micros(200*time.Millisecond)
	if a.now > renewal {
		t.Logf("the next caller asked %v after the first renewal: it goes at once", time.Duration(a.now-renewal)*time.Microsecond)
	}
	require.Equal(t, max(renewal, a.now), a.e, "the next caller goes at the first renewal")
}

// TestWithdrawalInBatchFreesFIFO: a withdrawal that rides in a batch
// before admissions (as group commit sends the withdrawals it makes
// itself) frees the FIFO place of the withdrawn caller for them.
func TestWithdrawalInBatchFreesFIFO(t *testing.T) {
	b, _ := newTestBucket(t, rxthrottle.Per(1, time.Hour))
	a0 := reserve(t, b)
	a1 := reserve(t, b) // an hour later
	reqs := []request{{how: "withdraw", id: a1.id, n: 1, e: a1.e}, {n: 1}}
	out := make([]admission, 2)
	require.NoError(t, b.s.runBatch(context.Background(), b.keys, reqs, out))
	require.Equal(t, 1, out[0].ended)
	require.Equal(t, a1.e, out[1].e, "the admission behind the withdrawal takes its place")
	require.Equal(t, a0.e+micros(time.Hour), out[1].e)
}

// gatedScripter holds the first script call until gate is closed; if the
// caller's context ends first, it runs the script anyway and returns the
// context's error, as a call whose answer is lost after it was sent.
// Client is the client a test's wrapper embeds: a cluster client in
// cluster mode (redistest.ClusterEnv), a plain one otherwise.
type Client = redis.UniversalClient

type gatedScripter struct {
	Client
	gate    chan struct{}
	entered chan struct{}
	once    sync.Once
}

func (g *gatedScripter) EvalSha(ctx context.Context, sha string, keys []string, args ...any) *redis.Cmd {
	first := false
	g.once.Do(func() { first = true; close(g.entered) })
	if !first {
		return g.Client.EvalSha(ctx, sha, keys, args...)
	}
	select {
	case <-g.gate:
		return g.Client.EvalSha(ctx, sha, keys, args...)
	case <-ctx.Done():
		g.Client.EvalSha(context.WithoutCancel(ctx), sha, keys, args...)
		c := redis.NewCmd(ctx)
		c.SetErr(ctx.Err())
		return c
	}
}

// TestAcquireCancelledInFlightWithdrawn (issue 17, item 3): an Acquire
// whose context ends while its script is in flight returns at once, and
// the lease the script made is withdrawn when the answer comes. (It was
// kept for the whole hold timeout: Allow stayed false for a minute.)
func TestAcquireCancelledInFlightWithdrawn(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	for _, s := range []*redis.Script{batchScript, endScript} {
		require.NoError(t, s.Load(ctx, rdb).Err())
	}
	g := &gatedScripter{Client: rdb, gate: make(chan struct{}), entered: make(chan struct{})}
	b, err := NewBucket(g, "inflight", rxthrottle.Per(1, time.Second), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	actx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := b.Acquire(actx)
		done <- err
	}()
	<-g.entered
	cancel()
	require.ErrorIs(t, recv(t, done), context.Canceled)
	close(g.gate)
	require.Eventually(t, func() bool {
		ok, err := b.Allow(ctx)
		require.NoError(t, err)
		return ok
	}, 30*time.Second, 10*time.Millisecond, "the lease made for the cancelled Acquire is withdrawn")
	require.Equal(t, []int64{}, scores(t, srv, b.keys[1]), "nothing held")
}

// TestImpatientCallersKeepTheSchedule (issue 17, item 2): 30 goroutines
// with deadlines of 1-60 ms call Wait for 2 s on one Per(3, 100ms)
// quota. Whatever the load, the window holds on Redis's clock, no
// reservation outlives its caller (afterwards nothing in done is later
// than Redis's now), and a patient caller then goes within one window.
// (Reservations whose callers had given up stayed: after 10 s the newest
// completion was 41.7 s ahead, and a patient caller timed out.)
func TestImpatientCallersKeepTheSchedule(t *testing.T) {
	limit := rxthrottle.Per(3, 100*time.Millisecond)
	b, srv := newTestBucket(t, limit)
	var mu sync.Mutex
	var departures []int64
	b.s.trace = func(a admission) {
		mu.Lock()
		departures = append(departures, a.e)
		mu.Unlock()
	}
	var admitted atomic.Int64
	var wg sync.WaitGroup
	end := time.Now().Add(2 * time.Second)
	for g := range 30 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 17))
			for time.Now().Before(end) {
				ctx, cancel := context.WithTimeout(context.Background(), time.Duration(1+r.IntN(60))*time.Millisecond)
				if b.Wait(ctx) == nil {
					admitted.Add(1)
				}
				cancel()
			}
		})
	}
	wg.Wait()
	require.Eventually(t, func() bool {
		b.s.group.mu.Lock()
		defer b.s.group.mu.Unlock()
		return !flyingLocked(&b.s.group)
	}, 30*time.Second, time.Millisecond, "every withdrawal made")
	now := redisNow(t, srv)
	done := scores(t, srv, b.keys[0])
	if len(done) > 0 {
		require.LessOrEqual(t, done[len(done)-1], now, "no reservation outlives its caller")
	}
	slices.Sort(done)
	require.LessOrEqual(t, maxInWindow(done, micros(limit.Window)), limit.N, "the window on Redis's clock")
	a := reserve(t, b)
	require.LessOrEqual(t, a.e-a.now, micros(limit.Window), "a patient caller goes within one window")
	t.Logf("redisstore admitted %d in 2 s (the quota allows at most %d)", admitted.Load(), 3*20+3)
}

// redisNow returns Redis's clock, in µs.
func redisNow(t *testing.T, srv *redistest.Server) int64 {
	t.Helper()
	v, err := srv.Do("TIME")
	require.NoError(t, err)
	var out [2]int64
	for i, p := range v.([]any) {
		for _, c := range p.(string) {
			out[i] = 10*out[i] + int64(c-'0')
		}
	}
	return out[0]*1_000_000 + out[1]
}

// slowScripter holds its first script call until gate is closed, and
// answers every later one late (after running it).
type slowScripter struct {
	gatedScripter
	late time.Duration
}

func (s *slowScripter) EvalSha(ctx context.Context, sha string, keys []string, args ...any) *redis.Cmd {
	select {
	case <-s.entered:
		cmd := s.Client.EvalSha(ctx, sha, keys, args...)
		time.Sleep(s.late)
		return cmd
	default:
	}
	return s.gatedScripter.EvalSha(ctx, sha, keys, args...)
}

// TestLateAnswerFreesItsBatch: a caller whose answer comes too late for
// its deadline has its admission withdrawn, and the callers scheduled
// behind it in the same script run ask again, as if it had never
// arrived: here the one behind gets the token it would have had, at once,
// instead of an hour later.
func TestLateAnswerFreesItsBatch(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	for _, s := range []*redis.Script{batchScript, endScript} {
		require.NoError(t, s.Load(ctx, rdb).Err())
	}
	g := &slowScripter{gatedScripter: gatedScripter{Client: rdb, gate: make(chan struct{}), entered: make(chan struct{})}, late: 300 * time.Millisecond}
	b, err := NewBucket(g, "late", rxthrottle.Per(2, time.Hour), WithTimeout(10*time.Second))
	require.NoError(t, err)
	first := make(chan error, 1)
	go func() { first <- b.Wait(ctx) }()
	<-g.entered
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	impatient := waitHandOver(t, b, short, 1)
	patient := waitHandOver(t, b, ctx, 2)
	close(g.gate)
	require.NoError(t, recv(t, first))
	require.ErrorIs(t, recv(t, impatient), context.DeadlineExceeded)
	require.NoError(t, recv(t, patient), "the caller behind the late one gets its token")
	drained(t, b.s)
	require.Len(t, emissions(t, srv, b), 2, "the first caller's and the patient one's")
}
