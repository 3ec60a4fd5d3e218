package redisstore

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/redis/go-redis/v9"
	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/limiterkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestScheduleOneClient reserves a run of admissions back to back and checks
// each emission time, on Redis's clock, against SPEC.md's formula computed
// from the arrivals (Redis's now) in script order.
func TestScheduleOneClient(t *testing.T) {
	cases := []struct {
		name   string
		limits []rxthrottle.Limit
		n      int
	}{
		{"one limit", []rxthrottle.Limit{rxthrottle.Per(3, 200*time.Millisecond)}, 12},
		{"N=1", []rxthrottle.Limit{rxthrottle.Per(1, 10*time.Millisecond)}, 8},
		{"two limits", []rxthrottle.Limit{rxthrottle.Per(2, 100*time.Millisecond), rxthrottle.Per(5, time.Second)}, 14},
		{"sub-microsecond window rounds up", []rxthrottle.Limit{rxthrottle.Per(1, 1)}, 10},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var opts []Option
			for _, l := range c.limits[1:] {
				opts = append(opts, WithLimit(l))
			}
			b, srv := newTestBucket(t, c.limits[0], opts...)
			var arrivals, got []int64
			for range c.n {
				a := reserve(t, b)
				arrivals = append(arrivals, a.now)
				got = append(got, a.e)
			}
			want := spec(arrivals, 0, c.limits)
			for i := range want {
				require.Equal(t, want[i], got[i], "step %d: e = %d, want %d (arrivals %v)", i, got[i], want[i], arrivals)
			}
			stored := emissions(t, srv, b)
			require.Equal(t, got[len(got)-len(stored):], stored, "the stored emissions are the newest ones, once each")
			for _, l := range c.limits {
				require.LessOrEqual(t, maxInWindow(got, micros(l.Window)), l.N, "window of %v", l)
			}
		})
	}
}

// TestScheduleAfterIdleGap: after the newest emission leaves its window the
// script skips the e_(i-N) lookups; the schedule must not change.
func TestScheduleAfterIdleGap(t *testing.T) {
	limits := []rxthrottle.Limit{rxthrottle.Per(2, 5*time.Millisecond), rxthrottle.Per(3, 8*time.Millisecond)}
	b, _ := newTestBucket(t, limits[0], WithLimit(limits[1]))
	var arrivals, got []int64
	for round := range 3 {
		for range 4 {
			a := reserve(t, b)
			arrivals = append(arrivals, a.now)
			got = append(got, a.e)
		}
		if round < 2 {
			// Real time, so that Redis's clock passes the windows
			// (the key itself lives on: it expires later).
			time.Sleep(time.Duration(6+3*round) * time.Millisecond)
		}
	}
	require.Equal(t, spec(arrivals, 0, limits), got, "arrivals %v", arrivals)
}

// TestBurstGoesTogether: up to N callers arriving together go at once.
func TestBurstGoesTogether(t *testing.T) {
	b, _ := newTestBucket(t, rxthrottle.Per(4, time.Hour))
	first := reserve(t, b)
	require.Equal(t, first.now, first.e, "the first caller waits")
	for i := 1; i < 4; i++ {
		a := reserve(t, b)
		require.Equal(t, a.now, a.e, "caller %d of the burst waits", i)
	}
	a := reserve(t, b)
	require.Equal(t, time.Hour, time.Duration(a.e-first.e)*time.Microsecond, "the fifth goes a window after the first")
}

// TestWaitOnVirtualClock: Wait waits e-now on the injected clock, no more and
// no less, and honours its context.
func TestWaitOnVirtualClock(t *testing.T) {
	clk := newSignalClock()
	b, _ := newTestBucket(t, rxthrottle.Per(1, time.Hour), WithClock(clk))
	clk.watch(b.s)
	ctx := context.Background()
	require.NoError(t, b.Wait(ctx), "the first caller goes at once")

	done := make(chan error, 1)
	go func() { done <- b.Wait(ctx) }()
	d := clk.nextTimer(t) // the second caller has its reply and waits on the clock
	require.Greater(t, d, time.Hour-time.Minute)
	require.LessOrEqual(t, d, time.Hour)
	clk.Add(d - time.Microsecond)
	select {
	case err := <-done:
		t.Fatalf("second caller went before its slot: %v", err)
	default:
	}
	clk.Add(time.Microsecond)
	require.NoError(t, recv(t, done))
	st := b.Stats()
	assert.Equal(t, uint64(2), st.Admitted)
	assert.Equal(t, uint64(1), st.Waited)
	assert.Equal(t, d, st.TotalWait, "on the virtual clock the round trip takes no time")
	assert.Equal(t, 0, st.Queued)
}

// signalClock is a clock.Mock that reports each Timer it makes, so a test
// knows a caller is blocked on virtual time before it moves the clock.
type signalClock struct {
	*clock.Mock
	timers chan time.Duration
}

func newSignalClock() *signalClock {
	return &signalClock{Mock: clock.NewMock(), timers: make(chan time.Duration, 16)}
}

// watch makes c report, as a Timer, each caller of s that starts to wait
// for its departure: its window's front wakes it, on one timer however
// many wait (group_planner.go).
func (c *signalClock) watch(s *schedule) { s.sleeping = func(d time.Duration) { c.timers <- d } }

func (c *signalClock) Timer(d time.Duration) *clock.Timer {
	t := c.Mock.Timer(d)
	c.timers <- d
	return t
}

// TestAllow admits only free slots and records nothing for a refusal.
func TestAllow(t *testing.T) {
	b, srv := newTestBucket(t, rxthrottle.Per(2, time.Hour))
	ctx := context.Background()
	for i, want := range []bool{true, true, false, false} {
		ok, err := b.Allow(ctx)
		require.NoError(t, err)
		require.Equal(t, want, ok, "step %d", i)
	}
	require.Len(t, emissions(t, srv, b), 2, "a refused Allow records nothing")
	assert.Equal(t, uint64(2), b.Stats().Admitted)
}

// TestPause: no admission before the pause ends; a shorter pause does not
// shorten it; the state lives until the pause ends (plus a window).
func TestPause(t *testing.T) {
	mock := clock.NewMock()
	b, srv := newTestBucket(t, rxthrottle.Per(10, time.Second), WithClock(mock))
	b.Pause(mock.Now().Add(time.Hour))
	b.Pause(mock.Now().Add(time.Minute)) // shorter: ignored
	b.Pause(mock.Now().Add(-time.Minute))
	ttl := pttl(t, srv, b.keys[2])
	require.Greater(t, ttl, time.Hour-time.Minute, "state TTL %v", ttl)
	require.LessOrEqual(t, ttl, time.Hour+time.Second+time.Millisecond)

	ok, err := b.Allow(context.Background())
	require.NoError(t, err)
	require.False(t, ok, "Allow during a pause")
	a := reserve(t, b)
	d := a.delay()
	require.Greater(t, d, time.Hour-time.Minute)
	require.LessOrEqual(t, d, time.Hour)
	a2 := reserve(t, b)
	require.Equal(t, a.e, a2.e, "a burst after the pause goes together")
}

// TestKeysExpire: the three keys share one expiry, set when the state can
// no longer matter (between one largest window after the newest completion
// and one more window, or one second if that is longer), so idle limiters
// vanish.
func TestKeysExpire(t *testing.T) {
	const maxW = 50 * time.Millisecond
	b, srv := newTestBucket(t, rxthrottle.Per(1, 30*time.Millisecond), WithLimit(rxthrottle.Per(5, maxW)))
	checkExpiry := func(newest int64) {
		t.Helper()
		var at int64
		for i, key := range b.keys[:3] { // runs: made by leases only
			v, err := srv.Do("PEXPIRETIME", key)
			require.NoError(t, err)
			if i > 0 {
				require.Equal(t, at, v.(int64)*1000, "the keys expire together")
			}
			at = v.(int64) * 1000 // µs on Redis's clock, like the emissions
		}
		require.GreaterOrEqual(t, at, newest+micros(maxW), "the state outlives the newest completion's window")
		require.LessOrEqual(t, at, newest+micros(maxW)+micros(time.Second)+1000, "the state vanishes within a window and a second")
	}
	checkExpiry(reserve(t, b).e)
	a := reserve(t, b) // waits about 30ms (unless the machine stalled that long)
	checkExpiry(a.e)
	require.Eventually(t, func() bool {
		v, err := srv.Do("EXISTS", b.keys[0], b.keys[1], b.keys[2])
		return err == nil && v == int64(0)
	}, 30*time.Second, 5*time.Millisecond, "the keys vanish")
}

// TestStaleEmissionsAreTrimmed: the list keeps only what a window can reach,
// give or take the entries of one lazy trim (when the id counter passes a
// multiple of 16).
func TestStaleEmissionsAreTrimmed(t *testing.T) {
	clk := clock.NewMock()
	b, srv := newTestBucket(t, rxthrottle.Per(1000, 5*time.Millisecond), WithClock(clk))
	for range 3 {
		reserve(t, b)
	}
	// A pause puts the next emissions an hour ahead: they keep the key
	// alive while the first three go stale.
	b.Pause(clk.Now().Add(time.Hour))
	var live []int64
	live = append(live, reserve(t, b).e)
	time.Sleep(6 * time.Millisecond) // real time: Redis's clock must pass the window
	for range 11 {
		live = append(live, reserve(t, b).e)
	}
	require.Len(t, emissions(t, srv, b), 15, "no trim below a length of 16")
	live = append(live, reserve(t, b).e)
	require.Equal(t, live, emissions(t, srv, b), "at length 16 the stale emissions go")
}

// TestScriptNotLoaded: after SCRIPT FLUSH (or a restart, or a replica that
// never saw the script) EVALSHA fails with NOSCRIPT and the call goes on with
// EVAL, which loads the script again.
func TestScriptNotLoaded(t *testing.T) {
	b, srv := newTestBucket(t, rxthrottle.Per(10, time.Second))
	require.NoError(t, b.Wait(context.Background()))
	_, err := srv.Do("SCRIPT", "FLUSH")
	require.NoError(t, err)
	exists, err := srv.Do("SCRIPT", "EXISTS", batchScript.Hash())
	require.NoError(t, err)
	require.Equal(t, []any{int64(0)}, exists)
	require.NoError(t, b.Wait(context.Background()))
	exists, err = srv.Do("SCRIPT", "EXISTS", batchScript.Hash())
	require.NoError(t, err)
	require.Equal(t, []any{int64(1)}, exists, "EVAL loaded the script again")
	require.Len(t, emissions(t, srv, b), 2)
}

// TestNilContext and friends: bad input is an error, not a panic.
func TestBadInput(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	t.Cleanup(func() { _ = c.Close() })
	ok := rxthrottle.Per(1, time.Second)
	cases := []struct {
		name   string
		client redis.Scripter
		bucket string
		limit  rxthrottle.Limit
		opts   []Option
		want   string
		is     error
	}{
		{"nil client", nil, "a", ok, nil, "redisstore: nil Redis client", nil},
		{"typed nil client", (*redis.Client)(nil), "a", ok, nil, "redisstore: nil Redis client", nil},
		{"empty name", c, "", ok, nil, "redisstore: empty bucket name", nil},
		{"brace in name", c, "a{b", ok, nil, `redisstore: bucket name "a{b" contains '{' or '}'`, nil},
		{"zero limit", c, "a", rxthrottle.Limit{}, nil, "redisstore: limit #1 (0 per 0s): N must be at least 1: invalid limit", rxthrottle.ErrInvalidLimit},
		{"bad extra limit", c, "a", ok, []Option{WithLimit(rxthrottle.Per(1, 0))}, "redisstore: limit #2 (1 per 0s): Window must be positive: invalid limit", rxthrottle.ErrInvalidLimit},
		{"nil option", c, "a", ok, []Option{nil}, "redisstore: NewBucket: rxthrottle: nil Option", nil},
		{"nil clock", c, "a", ok, []Option{rxthrottle.WithClock(nil)}, "redisstore: NewBucket: rxthrottle: WithClock(nil)", nil},
		{"zero hold timeout", c, "a", ok, []Option{rxthrottle.WithHoldTimeout(0)}, "redisstore: NewBucket: rxthrottle: WithHoldTimeout(0s): the timeout must be positive", nil},
		{"huge hold timeout", c, "a", ok, []Option{rxthrottle.WithHoldTimeout(math.MaxInt64)}, "redisstore: WithHoldTimeout(2562047h47m16.854775807s): want a positive timeout of at most 2^53 µs", nil},
		{"negative spacing", c, "a", ok, []Option{rxthrottle.WithSpacing(-1)}, "redisstore: NewBucket: rxthrottle: WithSpacing(-1ns)", nil},
		{"in-memory only option", c, "a", ok, []Option{rxthrottle.WithMaxKeys(3)}, "redisstore: NewBucket does not read rxthrottle.WithMaxKeys", nil},
		{"another store's option", c, "a", ok, []Option{limiterkit.NewOption("otherstore.WithShards", 4)}, "redisstore: NewBucket does not read otherstore.WithShards", nil},
		{"a forged option", c, "a", ok, []Option{limiterkit.NewOption("redisstore.WithTimeout", 4)}, "redisstore: NewBucket: redisstore.WithTimeout is not this package's option (it was made with limiterkit.NewOption)", nil},
		{"a forged rxthrottle option", c, "a", ok, []Option{limiterkit.NewOption("rxthrottle.WithLimit", 4)}, "redisstore: NewBucket does not read limiterkit.NewOption(rxthrottle.WithLimit)", nil},
		{"negative timeout", c, "a", ok, []Option{WithTimeout(-time.Second)}, "redisstore: WithTimeout(-1s)", nil},
		{"unknown policy", c, "a", ok, []Option{WithFailurePolicy(7)}, "redisstore: WithFailurePolicy(FailurePolicy(7))", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := NewBucket(tc.client, tc.bucket, tc.limit, tc.opts...)
			require.Error(t, err)
			require.Nil(t, b)
			require.Contains(t, err.Error(), tc.want)
			if tc.is != nil {
				require.ErrorIs(t, err, tc.is)
			}
		})
	}
	t.Run("nil context", func(t *testing.T) {
		b, err := NewBucket(c, "a", ok)
		require.NoError(t, err)
		//lint:ignore SA1012 a nil context is the bad input under test
		require.EqualError(t, b.Wait(nil), "redisstore: nil context") //nolint:staticcheck
		//lint:ignore SA1012 a nil context is the bad input under test
		_, err = b.Allow(nil) //nolint:staticcheck
		require.EqualError(t, err, "redisstore: nil context")
	})
	t.Run("done context", func(t *testing.T) {
		b, err := NewBucket(c, "a", ok)
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		require.ErrorIs(t, b.Wait(ctx), context.Canceled, "no round trip for a caller who already left")
		require.Equal(t, uint64(1), b.Stats().Cancelled)
	})
}

// TestStoreErrorMessage: the error says which key and what happened, and
// wraps both the sentinel and the cause.
func TestStoreErrorMessage(t *testing.T) {
	cause := errors.New("dial tcp 127.0.0.1:1: connect: connection refused")
	err := error(&StoreError{Op: "admit", Key: "rxthrottle:{api}:done", Err: cause})
	require.EqualError(t, err, `redisstore: admit on key "rxthrottle:{api}:done": redis store unavailable: dial tcp 127.0.0.1:1: connect: connection refused`)
	require.ErrorIs(t, err, ErrStoreUnavailable)
	require.ErrorIs(t, err, cause)
}
