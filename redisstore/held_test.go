package redisstore

import (
	"context"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAcquireRenewsAfterRelease: a held token counts until Release; the
// caller blocked behind it sleeps (at most the poll interval), is woken at
// once by a Release in this process, and departs one window after the
// Release, on Redis's clock.
func TestAcquireRenewsAfterRelease(t *testing.T) {
	clk := newSignalClock()
	b, srv := newTestBucket(t, rxthrottle.Per(1, time.Hour), WithClock(clk), WithPollInterval(time.Second))
	clk.watch(b.s)
	ctx := context.Background()
	var got []admission
	var mu sync.Mutex
	b.s.trace = func(a admission) {
		mu.Lock()
		got = append(got, a)
		mu.Unlock()
	}
	tok, err := b.Acquire(ctx)
	require.NoError(t, err)
	require.Empty(t, emissions(t, srv, b), "a held token has no completion yet")
	require.Len(t, scores(t, srv, b.keys[1]), 1, "it is held, with a lease deadline")

	done := make(chan error, 1)
	go func() { done <- b.Wait(ctx) }()
	require.Equal(t, time.Second, clk.nextTimer(t), "blocked: it sleeps the poll interval (the lease ends in a minute)")
	tok.Release()
	tok.Release() // idempotent
	tok.Cancel()  // a no-op after Release
	d := clk.nextTimer(t)
	require.Greater(t, d, time.Hour-time.Minute, "the second caller waits a window after the release")
	c := emissions(t, srv, b)
	require.Len(t, c, 2, "the release's completion and the second caller's departure")
	mu.Lock()
	require.Len(t, got, 2)
	require.Equal(t, c[0]+micros(time.Hour), got[1].e, "it departs exactly W after the completion recorded by the release")
	mu.Unlock()
	clk.Add(d)
	require.NoError(t, recv(t, done))
	st := b.Stats()
	assert.Equal(t, uint64(2), st.Admitted)
	assert.Equal(t, uint64(1), st.Waited)
}

// TestCancelUnusedToken: a token given back unused consumes nothing: the
// next caller goes at once.
func TestCancelUnusedToken(t *testing.T) {
	b, srv := newTestBucket(t, rxthrottle.Per(1, time.Hour))
	ctx := context.Background()
	tok, err := b.Acquire(ctx)
	require.NoError(t, err)
	tok.Cancel()
	tok.Release() // a no-op after Cancel
	require.Empty(t, scores(t, srv, b.keys[1]))
	require.Empty(t, emissions(t, srv, b))
	ok, err := b.Allow(ctx)
	require.NoError(t, err)
	require.True(t, ok, "the cancelled token was never used")
	var zero rxthrottle.Token
	zero.Release()
}

// TestHoldLeaseDeadline: a token never released completes at its lease
// deadline (departure + hold timeout, on Redis's clock), so a process that
// dies holding it keeps it only that long; a Release after the deadline
// changes nothing.
func TestHoldLeaseDeadline(t *testing.T) {
	const hold = 30 * time.Millisecond
	b, srv := newTestBucket(t, rxthrottle.Per(1, 20*time.Millisecond), WithHoldTimeout(hold))
	ctx := context.Background()
	first := reserveN(t, b, 1, true)
	var second admission
	b.s.trace = func(a admission) { second = a }
	lost, err := b.Acquire(ctx) // blocked until the first lease ends, then W more
	require.NoError(t, err)
	require.Len(t, emissions(t, srv, b), 1, "the first token completed at its deadline")
	require.Equal(t, first.e+micros(hold), emissions(t, srv, b)[0])
	time.Sleep(hold + 5*time.Millisecond)
	lost.Release() // after its deadline: changes nothing
	c := emissions(t, srv, b)
	require.Len(t, c, 1, "a late Release records nothing")
	a := reserve(t, b)
	w := micros(20 * time.Millisecond)
	require.GreaterOrEqual(t, second.e, c[0]+w, "the second departed W after the first's deadline (or when it asked again)")
	require.Equal(t, max(a.now, second.e+micros(hold)+w), a.e, "the next departs W after the second's deadline")
}

// TestWeights: WaitN/AcquireN/AllowN take n tokens at once; n < 1 or above
// the smallest N is an error wrapping rxthrottle.ErrInvalidCost, at once
// (no round trip: the client here has no server).
func TestWeights(t *testing.T) {
	b, err := NewBucket(nopClient(t), "w", rxthrottle.Per(5, time.Second), WithLimit(rxthrottle.Per(3, time.Minute)))
	require.NoError(t, err)
	k, err := NewKeyed(nopClient(t), "w", rxthrottle.Per(5, time.Second), WithLimit(rxthrottle.Per(3, time.Minute)))
	require.NoError(t, err)
	ctx := context.Background()
	for _, n := range []int{0, -1, 4} {
		errs := []error{b.WaitN(ctx, n), k.WaitN(ctx, "x", n)}
		_, e := b.AcquireN(ctx, n)
		errs = append(errs, e)
		_, e = b.AllowN(ctx, n)
		errs = append(errs, e)
		_, e = k.AcquireN(ctx, "x", n)
		errs = append(errs, e)
		_, e = k.AllowN(ctx, "x", n)
		errs = append(errs, e)
		for _, err := range errs {
			require.ErrorIs(t, err, rxthrottle.ErrInvalidCost, "n=%d", n)
			require.Contains(t, err.Error(), "redisstore: ")
			require.Contains(t, err.Error(), "(n="+strconv.Itoa(n)+"): n must be from 1 to the smallest N of the limits, 3")
		}
	}

	srv := redistest.Start(t)
	b, err = NewBucket(srv.Client(t), "w", rxthrottle.Per(5, time.Hour), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	require.NoError(t, b.WaitN(ctx, 3))
	ok, err := b.AllowN(ctx, 3)
	require.NoError(t, err)
	require.False(t, ok, "3 of 5 are used")
	ok, err = b.AllowN(ctx, 2)
	require.NoError(t, err)
	require.True(t, ok)
	require.Len(t, emissions(t, srv, b), 5)
}

// TestSetLimit: SetLimit changes this process's limits for its next calls;
// a bad limit is refused and changes nothing.
func TestSetLimit(t *testing.T) {
	mock := clock.NewMock()
	b, _ := newTestBucket(t, rxthrottle.Per(1, time.Hour), WithClock(mock), WithFailurePolicy(FallbackLocal))
	ctx := context.Background()
	require.NoError(t, b.Wait(ctx))
	ok, err := b.Allow(ctx)
	require.NoError(t, err)
	require.False(t, ok)
	require.ErrorIs(t, b.SetLimit(rxthrottle.Per(0, time.Hour)), rxthrottle.ErrInvalidLimit)
	require.ErrorContains(t, b.SetLimit(rxthrottle.Per(1, time.Hour), rxthrottle.Per(1, 0)), "redisstore: limit #2 (1 per 0s): ")
	require.Equal(t, []rxthrottle.Limit{rxthrottle.Per(1, time.Hour)}, b.Limits())
	require.NoError(t, b.SetLimit(rxthrottle.Per(3, time.Hour), rxthrottle.Per(10, time.Minute)))
	require.Equal(t, []rxthrottle.Limit{rxthrottle.Per(3, time.Hour), rxthrottle.Per(10, time.Minute)}, b.Limits())
	require.Equal(t, b.Limits(), b.local.Limits(), "the local fallback follows")
	for want := range []bool{true, true} {
		ok, err := b.Allow(ctx)
		require.NoError(t, err)
		require.True(t, ok, "token %d of the raised limit", want+2)
	}
	ok, err = b.Allow(ctx)
	require.NoError(t, err)
	require.False(t, ok, "the history is kept: 3 in the hour")
}

// TestSpacing: consecutive departures are at least S apart, on Redis's
// clock, across callers.
func TestSpacing(t *testing.T) {
	const s = 10 * time.Millisecond
	b, _ := newTestBucket(t, rxthrottle.Per(100, time.Second), WithSpacing(s))
	var prev int64
	for i := range 5 {
		a := reserve(t, b)
		if i > 0 {
			require.Equal(t, max(a.now, prev+micros(s)), a.e, "departure %d", i)
		}
		prev = a.e
	}
}

// TestHeldWindowOnRedisClock: goroutines in several "processes" (a Bucket
// value and client each) Acquire, hold for a random time (some never
// release, some cancel), and Release. On Redis's clock, whatever instant
// in [departure, completion] each request reached a server, no window of
// any limit holds more than N of them: for every t, the tokens with
// d < t+W and c >= t are at most N.
func TestHeldWindowOnRedisClock(t *testing.T) {
	const (
		procs = 4
		run   = 500 * time.Millisecond
	)
	limits := []rxthrottle.Limit{rxthrottle.Per(3, 20*time.Millisecond), rxthrottle.Per(100000, 20*time.Second)}
	srv := redistest.Start(t)
	var (
		mu      sync.Mutex
		departs = map[string]int64{} // token id -> departure
		wg      sync.WaitGroup
	)
	stop := time.Now().Add(run)
	for p := range procs {
		b, err := NewBucket(srv.Client(t), "held", limits[0], WithLimit(limits[1]), WithHoldTimeout(15*time.Millisecond), WithTimeout(suiteTimeout))
		require.NoError(t, err)
		b.s.trace = func(a admission) {
			mu.Lock()
			departs[strconv.FormatInt(a.id, 10)] = a.e
			mu.Unlock()
		}
		for g := range 2 {
			rng := rand.New(rand.NewPCG(uint64(p), uint64(g)))
			wg.Go(func() {
				for time.Now().Before(stop) {
					tok, err := b.Acquire(context.Background())
					if err != nil {
						t.Errorf("Acquire: %v", err)
						return
					}
					time.Sleep(time.Duration(rng.IntN(8000)) * time.Microsecond)
					switch rng.IntN(10) {
					case 0: // lost: the lease ends it
					case 1:
						tok.Cancel()
					default:
						tok.Release()
					}
				}
			})
		}
	}
	wg.Wait()
	time.Sleep(20 * time.Millisecond) // every lease is over
	b, err := NewBucket(srv.Client(t), "held", limits[0], WithLimit(limits[1]), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	reserve(t, b) // moves the expired leases to their completions
	v, err := srv.Do("ZRANGE", b.keys[0], 0, -1, "WITHSCORES")
	require.NoError(t, err)
	var spans []heldSpan
	for _, pair := range v.([]any) {
		p := pair.([]any)
		id := strings.Split(p[0].(string), ".")[0]
		mu.Lock()
		d, ok := departs[id]
		mu.Unlock()
		if ok {
			spans = append(spans, heldSpan{d, int64(p[1].(float64))})
		}
	}
	require.Greater(t, len(spans), 20, "too few admissions to say anything")
	requireHeldSpansFit(t, spans, limits, "requests that may have arrived")
	slices.SortFunc(spans, func(a, b heldSpan) int { return int(a.d - b.d) })
	t.Logf("%d held tokens, the last departing %v after the first", len(spans), time.Duration(spans[len(spans)-1].d-spans[0].d)*time.Microsecond)
}

// TestBlockedCallerGivesUp: a caller blocked by a held token holds no
// reservation, so giving up leaves nothing behind.
func TestBlockedCallerGivesUp(t *testing.T) {
	b, srv := newTestBucket(t, rxthrottle.Per(1, time.Hour))
	tok, err := b.Acquire(context.Background())
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, b.Wait(ctx), context.DeadlineExceeded)
	require.Empty(t, emissions(t, srv, b))
	require.Len(t, scores(t, srv, b.keys[1]), 1, "only the held token")
	assert.Equal(t, uint64(1), b.Stats().Cancelled)
	tok.Release()
	require.Len(t, emissions(t, srv, b), 1)
}

// TestKeyedAcquire: holds are per key; a release wakes the caller of its
// key.
func TestKeyedAcquire(t *testing.T) {
	srv := redistest.Start(t)
	k, err := NewKeyed(srv.Client(t), "users", rxthrottle.Per(1, 50*time.Millisecond), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	ctx := context.Background()
	a, err := k.Acquire(ctx, "a")
	require.NoError(t, err)
	b, err := k.AcquireN(ctx, "b", 1)
	require.NoError(t, err, "b is not held back by a's hold")
	ok, err := k.Allow(ctx, "a")
	require.NoError(t, err)
	require.False(t, ok, "a's token is held")
	done := make(chan error, 1)
	go func() { done <- k.Wait(ctx, "a") }()
	time.Sleep(5 * time.Millisecond)
	a.Release()
	b.Cancel()
	require.NoError(t, recv(t, done))
	require.Len(t, scores(t, srv, k.Keys("a")[0]), 2, "a's release and the next departure")
	require.Empty(t, scores(t, srv, k.Keys("b")[0]), "b's token was given back unused")
	require.Empty(t, scores(t, srv, k.Keys("b")[1]))
}

// TestStaleReleaseAfterExpiry: ids restart when an idle schedule expires;
// a Token released long after its deadline must not end the later
// admission that got the same id.
func TestStaleReleaseAfterExpiry(t *testing.T) {
	b, srv := newTestBucket(t, rxthrottle.Per(1, 10*time.Millisecond), WithHoldTimeout(10*time.Millisecond))
	ctx := context.Background()
	old, err := b.Acquire(ctx)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		v, err := srv.Do("EXISTS", b.keys[0], b.keys[1], b.keys[2])
		return err == nil && v == int64(0)
	}, 30*time.Second, 5*time.Millisecond, "the idle schedule expires")
	a := reserveN(t, b, 1, true)
	require.Equal(t, int64(1), a.id, "the ids restarted")
	old.Release()
	require.Len(t, scores(t, srv, b.keys[1]), 1, "the new holder still holds its token")
	require.Empty(t, emissions(t, srv, b))
}

// lineLen returns how many callers of b wait for held tokens.
func lineLen(b *Bucket) int {
	return b.s.lines.len(b.keys[0])
}

// TestBlockedCallersInOrder: the callers of one process blocked by a held
// token go in their arrival order (only the head of the line asks Redis),
// and Allow refuses while they wait. The order is the script's: each
// caller's token carries the id of its admission, given in the order the
// admissions were made (the order the waits return in can be swapped by
// a loaded machine's stall, as a window of 10ms was once).
func TestBlockedCallersInOrder(t *testing.T) {
	b, _ := newTestBucket(t, rxthrottle.Per(1, 200*time.Millisecond), WithPollInterval(time.Hour))
	ctx := context.Background()
	tok, err := b.Acquire(ctx)
	require.NoError(t, err)
	ids := make([]string, 3)
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Go(func() {
			tok, err := b.Acquire(ctx)
			require.NoError(t, err)
			ids[i] = tok.String()
			tok.Release()
		})
		require.Eventually(t, func() bool { return lineLen(b) == i+1 }, 30*time.Second, time.Millisecond, "caller %d is in line", i)
	}
	ok, err := b.Allow(ctx)
	require.NoError(t, err)
	require.False(t, ok, "callers wait: Allow does not overtake them")
	tok.Release() // wakes the head at once, despite the hour-long poll interval
	wg.Wait()
	require.Equal(t, []string{"rxthrottle.Token(#2)", "rxthrottle.Token(#3)", "rxthrottle.Token(#4)"}, ids, "admitted in arrival order")
	require.Zero(t, lineLen(b))
}
