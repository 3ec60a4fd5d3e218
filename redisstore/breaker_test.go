package redisstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/redis/go-redis/v9"
	"github.com/rxthrottle/rxthrottle"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeRedis is a redis.Scripter that answers every script with a free slot
// (admitted, no delay) or fails with down, and counts the calls it gets.
// block, if set, holds each call until it is closed.
type fakeRedis struct {
	mu      sync.Mutex
	calls   int
	down    error
	block   chan struct{}
	batches []int // the number of admissions of each call
}

func (f *fakeRedis) setDown(err error) {
	f.mu.Lock()
	f.down = err
	f.mu.Unlock()
}

func (f *fakeRedis) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

func (f *fakeRedis) run(ctx context.Context, args []any) *redis.Cmd {
	if len(args) == 5 && (args[0] == "join" || args[0] == "set") {
		// confScript: the configuration sent is the stored one, read
		// now (not counted, never down nor blocked: the tests count
		// admissions).
		cmd := redis.NewCmd(ctx)
		cmd.SetVal([]any{int64(1), args[1], fmt.Sprint(args[2]), fmt.Sprint(args[3]), fmt.Sprint(args[4]), time.Now().UnixMicro()})
		return cmd
	}
	k := 1
	if len(args) > 0 {
		if n, ok := args[0].(int); ok {
			k = n
		}
	}
	f.mu.Lock()
	f.calls++
	f.batches = append(f.batches, k)
	block := f.block
	f.mu.Unlock()
	if block != nil {
		<-block
	}
	f.mu.Lock()
	down := f.down
	f.mu.Unlock()
	cmd := redis.NewCmd(ctx)
	if down != nil {
		cmd.SetErr(down)
	} else {
		var v []any
		for i := range k {
			v = append(v, int64(1), int64(1000), int64(0), int64(i+1))
		}
		cmd.SetVal(v)
	}
	return cmd
}

func (f *fakeRedis) Eval(ctx context.Context, _ string, _ []string, args ...any) *redis.Cmd {
	return f.run(ctx, args)
}

func (f *fakeRedis) EvalSha(ctx context.Context, _ string, _ []string, args ...any) *redis.Cmd {
	return f.run(ctx, args)
}

func (f *fakeRedis) EvalRO(ctx context.Context, _ string, _ []string, args ...any) *redis.Cmd {
	return f.run(ctx, args)
}

func (f *fakeRedis) EvalShaRO(ctx context.Context, _ string, _ []string, args ...any) *redis.Cmd {
	return f.run(ctx, args)
}

func (f *fakeRedis) ScriptExists(ctx context.Context, _ ...string) *redis.BoolSliceCmd {
	return redis.NewBoolSliceCmd(ctx)
}

func (f *fakeRedis) ScriptLoad(ctx context.Context, _ string) *redis.StringCmd {
	return redis.NewStringCmd(ctx)
}

var errRefused = errors.New("dial tcp 127.0.0.1:6379: connect: connection refused")

// TestBreakerPolicies: after a failed call, no call goes to Redis for the
// back-off; every policy answers at once as its doc says (FailOpen lets the
// caller go, FallbackLocal waits on the local bucket, FailClosed returns an
// error wrapping ErrCircuitOpen); OnError hears only of the call that
// failed. Then one probe; a failed probe doubles the back-off; a successful
// one puts every caller back on Redis.
func TestBreakerPolicies(t *testing.T) {
	for _, policy := range []FailurePolicy{FailClosed, FailOpen, FallbackLocal} {
		t.Run(policy.String(), func(t *testing.T) {
			clk := clock.NewMock()
			f := &fakeRedis{down: errRefused}
			var log errorLog
			b, err := NewBucket(f, "api", rxthrottle.Per(100, time.Hour), WithClock(clk),
				WithFailurePolicy(policy), OnError(log.hook), WithRetryBackoff(time.Second, 3*time.Second))
			require.NoError(t, err)
			ctx := context.Background()

			check := func(step string, wantCalls, wantErrors int) {
				t.Helper()
				err := b.Wait(ctx)
				switch policy {
				case FailClosed:
					require.ErrorIs(t, err, ErrStoreUnavailable, step)
				default:
					require.NoError(t, err, step)
				}
				require.Equal(t, wantCalls, f.count(), "%s: calls to Redis", step)
				require.Equal(t, wantErrors, log.len(), "%s: errors reported", step)
			}
			check("the first failure", 1, 1)
			for i := range 2 {
				err := b.Wait(ctx)
				if policy == FailClosed {
					require.ErrorIs(t, err, ErrCircuitOpen, "call %d of the back-off", i)
					require.ErrorIs(t, err, ErrStoreUnavailable)
					require.ErrorIs(t, err, errRefused, "the error names the failure that opened the breaker")
					require.Contains(t, err.Error(), `redisstore: admit on key "rxthrottle:{api}:done": redis store unavailable: not called: Redis failed recently`)
				} else {
					require.NoError(t, err, "call %d of the back-off", i)
				}
				ok, err := b.Allow(ctx)
				require.Equal(t, policy != FailClosed, ok, "Allow %d of the back-off", i)
				require.Equal(t, policy == FailClosed, err != nil)
			}
			require.Equal(t, 1, f.count(), "no call to Redis during the back-off")
			require.Equal(t, 1, log.len(), "calls kept back are not failures of Redis")
			if policy == FallbackLocal {
				require.Equal(t, uint64(5), b.local.Stats().Admitted, "every caller went through the local bucket")
			}

			clk.Add(time.Second - 1)
			_, _ = b.Allow(ctx)
			require.Equal(t, 1, f.count(), "still in the back-off")
			clk.Add(1)
			ok, _ := b.Allow(ctx)
			require.Equal(t, 2, f.count(), "the probe")
			require.Equal(t, 2, log.len(), "the failed probe is reported")
			require.Equal(t, policy != FailClosed, ok)

			clk.Add(time.Second)
			_, _ = b.Allow(ctx)
			require.Equal(t, 2, f.count(), "a failed probe doubles the back-off")
			clk.Add(time.Second)
			_, _ = b.Allow(ctx)
			require.Equal(t, 3, f.count(), "the second probe")
			clk.Add(3*time.Second - 1)
			_, _ = b.Allow(ctx)
			require.Equal(t, 3, f.count(), "the back-off stops growing at max")
			clk.Add(1)

			f.setDown(nil)
			ok, err = b.Allow(ctx)
			require.NoError(t, err)
			require.True(t, ok, "the probe goes through Redis")
			require.Equal(t, 4, f.count())
			for i := range 3 {
				require.NoError(t, b.Wait(ctx))
				require.Equal(t, 5+i, f.count(), "back on Redis: every call goes to it")
			}
			require.Equal(t, 3, log.len())

			f.setDown(errRefused)
			_, _ = b.Allow(ctx)
			_, _ = b.Allow(ctx)
			require.Equal(t, 8, f.count(), "a new outage opens the breaker again")
			clk.Add(time.Second)
			_, _ = b.Allow(ctx)
			require.Equal(t, 9, f.count(), "with the first back-off again")
		})
	}
}

// TestBreakerOneProbe: while the probe is in flight, the other callers keep
// the fallback; pause and release are kept back too (and reported, since
// they are lost).
func TestBreakerOneProbe(t *testing.T) {
	clk := clock.NewMock()
	f := &fakeRedis{down: errRefused}
	var log errorLog
	b, err := NewBucket(f, "api", rxthrottle.Per(2, time.Hour), WithClock(clk),
		WithFailurePolicy(FailOpen), OnError(log.hook))
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, b.Wait(ctx))
	b.Pause(clk.Now().Add(time.Minute))
	require.Equal(t, 1, f.count())
	require.Equal(t, 2, log.len(), "the lost pause is reported")
	var serr *StoreError
	require.ErrorAs(t, log.errs[1], &serr)
	assert.Equal(t, "pause", serr.Op)
	require.ErrorIs(t, serr, ErrCircuitOpen)

	clk.Add(DefaultRetryFirst)
	f.mu.Lock()
	f.block = make(chan struct{})
	f.mu.Unlock()
	done := make(chan error, 1)
	go func() { done <- b.Wait(ctx) }()
	require.Eventually(t, func() bool { return f.count() == 2 }, 30*time.Second, time.Millisecond, "the probe is in flight")
	for range 3 {
		require.NoError(t, b.Wait(ctx))
	}
	require.Equal(t, 2, f.count(), "one probe at a time")
	f.setDown(nil)
	close(f.block)
	require.NoError(t, recv(t, done))
	require.NoError(t, b.Wait(ctx))
	require.Equal(t, 3, f.count(), "back on Redis")
}

// TestBreakerAbandonedProbe: a probe whose caller gives up reaches no
// verdict; the next caller probes.
func TestBreakerAbandonedProbe(t *testing.T) {
	clk := clock.NewMock()
	f := &fakeRedis{down: context.Canceled}
	b, err := NewBucket(f, "api", rxthrottle.Per(2, time.Hour), WithClock(clk), WithFailurePolicy(FailOpen))
	require.NoError(t, err)
	require.NoError(t, b.Wait(context.Background()), "the first failure")
	clk.Add(DefaultRetryFirst)
	ctx, cancel := context.WithCancel(context.Background())
	f.mu.Lock()
	f.block = make(chan struct{})
	f.mu.Unlock()
	done := make(chan error, 1)
	go func() { done <- b.Wait(ctx) }()
	require.Eventually(t, func() bool { return f.count() == 2 }, 30*time.Second, time.Millisecond, "the probe is in flight")
	cancel()
	close(f.block)
	require.ErrorIs(t, recv(t, done), context.Canceled)
	// The Wait returns when its context ends, before the probe's call
	// does: let that call end (failed) before Redis is back, or it may
	// succeed and its admission, its caller gone, be withdrawn by one
	// more call (which a loaded machine made happen once in 50).
	drained(t, b.s)
	f.mu.Lock()
	f.block = nil
	f.mu.Unlock()
	f.setDown(nil)
	require.NoError(t, b.Wait(context.Background()))
	require.Equal(t, 3, f.count(), "the next caller probes, and is back on Redis")
}

// TestBreakerOff: WithRetryBackoff(0, 0) sends every call to Redis.
func TestBreakerOff(t *testing.T) {
	f := &fakeRedis{down: errRefused}
	b, err := NewBucket(f, "api", rxthrottle.Per(2, time.Hour), WithFailurePolicy(FailOpen), WithRetryBackoff(0, 0))
	require.NoError(t, err)
	for i := range 3 {
		require.NoError(t, b.Wait(context.Background()))
		require.Equal(t, i+1, f.count())
	}
	for _, bad := range [][2]time.Duration{{-1, time.Second}, {time.Second, time.Millisecond}, {0, time.Second}, {time.Second, 0}} {
		_, err := NewBucket(f, "api", rxthrottle.Per(2, time.Hour), WithRetryBackoff(bad[0], bad[1]))
		require.ErrorContains(t, err, "redisstore: WithRetryBackoff(", "%v", bad)
	}
}

// TestTimeoutWithAnyClient: WithTimeout works with any client, since a
// limiter never waits for a call longer than its bound (a client without
// ContextTimeoutEnabled ignores the deadline on the socket: the call then
// goes on in the background); the GuardStore, whose calls run on the
// caller's goroutine, still refuses such a client.
func TestTimeoutWithAnyClient(t *testing.T) {
	plain := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	t.Cleanup(func() { _ = plain.Close() })
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": "127.0.0.1:1"}})
	t.Cleanup(func() { _ = ring.Close() })
	cluster := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}})
	t.Cleanup(func() { _ = cluster.Close() })
	for _, c := range []redis.Scripter{plain, ring, cluster} {
		_, err := NewBucket(c, "a", rxthrottle.Per(1, time.Second), WithTimeout(200*time.Millisecond))
		require.NoError(t, err, "%T", c)
		_, err = NewKeyed(c, "a", rxthrottle.Per(1, time.Second), WithTimeout(200*time.Millisecond))
		require.NoError(t, err, "%T", c)
		_, err = NewGuardStore(c, "a", WithTimeout(200*time.Millisecond))
		require.ErrorContains(t, err, "redisstore: WithTimeout(200ms) needs a client built with ContextTimeoutEnabled: true", "%T", c)
		_, err = NewGuardStore(c, "a")
		require.NoError(t, err, "no timeout of our own: nothing to honour")
	}
	_, err := NewGuardStore(&fakeRedis{}, "a", WithTimeout(time.Second))
	require.NoError(t, err, "another Scripter is taken on trust")
}
