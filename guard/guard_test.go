package guard_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/guard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// policy30 is the seed use case: 30 requests per 60 s, cool-down 300 s.
var policy30 = guard.Policy{Limit: rxthrottle.Per(30, time.Minute), Block: 5 * time.Minute}

func newMock() *clock.Mock {
	m := clock.NewMock()
	m.Set(t0)
	return m
}

// discard is a logger for tests that do not look at the log.
var discard = slog.New(slog.DiscardHandler)

func newGuard(t *testing.T, p guard.Policy, opts ...guard.Option) (*guard.Guard, *clock.Mock) {
	t.Helper()
	mock := newMock()
	g, err := guard.New(p, append([]guard.Option{guard.WithClock(mock), guard.WithLogger(discard)}, opts...)...)
	require.NoError(t, err)
	return g, mock
}

// step is one Check at an offset from t0 and the decision it must return.
type step struct {
	at      time.Duration
	key     string
	allowed bool
	remain  int
	retry   time.Duration
	reset   time.Duration // ResetAt - t0
}

func runSteps(t *testing.T, g *guard.Guard, mock *clock.Mock, steps []step) {
	t.Helper()
	for i, st := range steps {
		mock.Set(t0.Add(st.at))
		d, err := g.Check(context.Background(), st.key)
		want := guard.Decision{
			Allowed: st.allowed, Limit: g.Policy().Limit, Remaining: st.remain,
			RetryAfter: st.retry, Reset: st.reset - st.at, ResetAt: t0.Add(st.reset),
		}
		require.Equal(t, want, d, "step %d: Check(%q) at %v = %+v, want %+v", i, st.key, st.at, d, want)
		if st.allowed {
			require.NoError(t, err, "step %d: Check(%q) at %v", i, st.key, st.at)
			continue
		}
		require.ErrorIs(t, err, guard.ErrLimited, "step %d: Check(%q) at %v", i, st.key, st.at)
		var le *guard.LimitedError
		require.ErrorAs(t, err, &le, "step %d", i)
		require.Equal(t, guard.LimitedError{Key: st.key, RetryAfter: st.retry, Until: t0.Add(st.reset)}, *le, "step %d: error = %+v", i, *le)
	}
}

func TestCheckSeedPolicy(t *testing.T) {
	g, mock := newGuard(t, policy30)
	var steps []step
	// 30 requests, one a second from 0 s: all allowed, quota counts down.
	for i := range 30 {
		at := time.Duration(i) * time.Second
		steps = append(steps, step{at, "alice", true, 29 - i, 0, time.Minute})
	}
	steps = append(steps,
		step{30 * time.Second, "alice", false, 0, 300 * time.Second, 330 * time.Second}, // blocks
		step{30 * time.Second, "bob", true, 29, 0, 90 * time.Second},                    // other keys go on
		step{59 * time.Second, "alice", false, 0, 271 * time.Second, 330 * time.Second},
		step{60 * time.Second, "alice", false, 0, 270 * time.Second, 330 * time.Second}, // window over, block not
		step{330*time.Second - time.Nanosecond, "alice", false, 0, time.Nanosecond, 330 * time.Second},
		step{330 * time.Second, "alice", true, 29, 0, 390 * time.Second}, // fresh at exactly until
		step{331 * time.Second, "alice", true, 28, 0, 390 * time.Second},
	)
	runSteps(t, g, mock, steps)
}

func TestCheckSteps(t *testing.T) {
	tests := []struct {
		name   string
		policy guard.Policy
		steps  []step
	}{
		{"burst then block", guard.Policy{Limit: rxthrottle.Per(2, 10*time.Second), Block: 20 * time.Second}, []step{
			{0, "k", true, 1, 0, 10 * time.Second},
			{0, "k", true, 0, 0, 10 * time.Second},
			{0, "k", false, 0, 20 * time.Second, 20 * time.Second},
			{0, "k", false, 0, 20 * time.Second, 20 * time.Second},
			{20 * time.Second, "k", true, 1, 0, 30 * time.Second},
		}},
		{"refused requests do not extend the block", guard.Policy{Limit: rxthrottle.Per(1, time.Second), Block: 3 * time.Second}, []step{
			{0, "k", true, 0, 0, time.Second},
			{500 * time.Millisecond, "k", false, 0, 3 * time.Second, 3500 * time.Millisecond},
			{1 * time.Second, "k", false, 0, 2500 * time.Millisecond, 3500 * time.Millisecond},
			{3 * time.Second, "k", false, 0, 500 * time.Millisecond, 3500 * time.Millisecond},
			{3500 * time.Millisecond, "k", true, 0, 0, 4500 * time.Millisecond},
		}},
		{"no block: refused to the window's end", guard.Policy{Limit: rxthrottle.Per(1, 10*time.Second)}, []step{
			{0, "k", true, 0, 0, 10 * time.Second},
			{3 * time.Second, "k", false, 0, 7 * time.Second, 10 * time.Second},
			{10 * time.Second, "k", true, 0, 0, 20 * time.Second},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, mock := newGuard(t, tt.policy)
			runSteps(t, g, mock, tt.steps)
		})
	}
}

func TestLimitedErrorMessage(t *testing.T) {
	tests := []struct {
		retry time.Duration
		want  string
	}{
		{300 * time.Second, `guard: key "alice" is over the usage limit: retry in 5m0s`},
		{299*time.Second + 1, `guard: key "alice" is over the usage limit: retry in 5m0s`},
		{time.Nanosecond, `guard: key "alice" is over the usage limit: retry in 1s`},
		{1500 * time.Millisecond, `guard: key "alice" is over the usage limit: retry in 2s`},
	}
	for i, tt := range tests {
		err := &guard.LimitedError{Key: "alice", RetryAfter: tt.retry}
		assert.Equal(t, tt.want, err.Error(), "step %d: RetryAfter %v", i, tt.retry)
		assert.ErrorIs(t, err, guard.ErrLimited)
	}
}

func TestNewBadInput(t *testing.T) {
	tests := []struct {
		name string
		p    guard.Policy
		opts []guard.Option
		want string
	}{
		{"limit 0", guard.Policy{Limit: rxthrottle.Per(0, time.Second)}, nil,
			"guard: policy 0 per 1s, block 0s: Limit.N must be at least 1, got 0: invalid policy"},
		{"negative limit", guard.Policy{Limit: rxthrottle.Per(-3, time.Second)}, nil,
			"guard: policy -3 per 1s, block 0s: Limit.N must be at least 1, got -3: invalid policy"},
		{"zero window", guard.Policy{Limit: rxthrottle.Limit{N: 1}}, nil,
			"guard: policy 1 per 0s, block 0s: Limit.Window must be positive, got 0s: invalid policy"},
		{"negative window", guard.Policy{Limit: rxthrottle.Per(1, -time.Second)}, nil,
			"guard: policy 1 per -1s, block 0s: Limit.Window must be positive, got -1s: invalid policy"},
		{"negative block", guard.Policy{Limit: rxthrottle.Per(1, time.Second), Block: -1}, nil,
			"guard: policy 1 per 1s, block -1ns: Block must not be negative, got -1ns: invalid policy"},
		{"nil option", policy30, []guard.Option{nil}, "guard: nil Option"},
		{"nil clock", policy30, []guard.Option{guard.WithClock(nil)},
			"guard: WithClock(nil): a clock is required"},
		{"nil logger", policy30, []guard.Option{guard.WithLogger(nil)},
			"guard: WithLogger(nil): a logger is required (use slog.New(slog.DiscardHandler) to log nothing)"},
		{"nil store", policy30, []guard.Option{guard.WithStore(nil)},
			"guard: WithStore(nil): a store is required"},
		{"negative max keys", policy30, []guard.Option{guard.WithMaxKeys(-1)},
			"guard: WithMaxKeys: the maximum number of keys must not be negative"},
		{"max keys with a store", policy30, []guard.Option{guard.WithMaxKeys(5), guard.WithStore(&failingStore{})},
			"guard: WithMaxKeys sets up the default memory store; it cannot be combined with WithStore (give NewMemoryStore the maximum instead)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := guard.New(tt.p, tt.opts...)
			require.EqualError(t, err, tt.want)
			require.Nil(t, g)
			if strings.Contains(tt.want, "invalid policy") {
				require.ErrorIs(t, err, guard.ErrInvalidPolicy)
			}
			// A bad Limit is a bad rxthrottle.Limit too.
			assert.Equal(t, strings.Contains(tt.want, ": Limit."), errors.Is(err, rxthrottle.ErrInvalidLimit),
				"errors.Is(%q, rxthrottle.ErrInvalidLimit)", err)
		})
	}
}

func TestCheckEmptyKey(t *testing.T) {
	g, _ := newGuard(t, policy30)
	d, err := g.Check(context.Background(), "")
	require.EqualError(t, err, "guard: Check: empty key")
	require.NotErrorIs(t, err, guard.ErrLimited)
	require.Equal(t, guard.Decision{}, d)
	require.Equal(t, guard.Stats{}, g.Stats(), "an empty key is not a check")
}

// failingStore is a Store whose every Hit fails.
type failingStore struct{ calls int }

var errStoreDown = errors.New("store is down")

func (s *failingStore) Hit(context.Context, string, guard.Policy, time.Time) (guard.Result, error) {
	s.calls++
	return guard.Result{}, errStoreDown
}

func TestCheckStoreError(t *testing.T) {
	st := &failingStore{}
	g, _ := newGuard(t, policy30, guard.WithStore(st))
	d, err := g.Check(context.Background(), "alice")
	require.ErrorIs(t, err, errStoreDown)
	require.NotErrorIs(t, err, guard.ErrLimited)
	require.EqualError(t, err, `guard: Check("alice"): store is down`)
	require.Equal(t, guard.Decision{}, d)
	require.Equal(t, 1, st.calls)
	require.Equal(t, guard.Stats{Checks: 1, Errors: 1}, g.Stats(), "no KeyCounter: no key counts")
}

// recordStore records what the guard passes to Hit, and answers from a
// MemoryStore.
type recordStore struct {
	*guard.MemoryStore
	keys []string
	nows []time.Time
	ps   []guard.Policy
}

func (s *recordStore) Hit(ctx context.Context, key string, p guard.Policy, now time.Time) (guard.Result, error) {
	s.keys, s.nows, s.ps = append(s.keys, key), append(s.nows, now), append(s.ps, p)
	return s.MemoryStore.Hit(ctx, key, p, now)
}

func TestCheckPassesPolicyAndClockToStore(t *testing.T) {
	st := &recordStore{MemoryStore: newMemoryStore(t, 0)}
	g, mock := newGuard(t, policy30, guard.WithStore(st))
	_, err := g.Check(context.Background(), "a")
	require.NoError(t, err)
	mock.Add(time.Second)
	_, err = g.Check(context.Background(), "b")
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b"}, st.keys)
	require.Equal(t, []time.Time{t0, t0.Add(time.Second)}, st.nows)
	require.Equal(t, []guard.Policy{policy30, policy30}, st.ps)
	require.Equal(t, guard.Stats{Checks: 2, Allowed: 2, KeysLive: 2}, g.Stats(), "key counts through the embedded KeyCounter")
}

func TestHooks(t *testing.T) {
	var events []string
	g, mock := newGuard(t, guard.Policy{Limit: rxthrottle.Per(1, time.Minute), Block: time.Hour},
		guard.OnLimited(func(key string, d guard.Decision) {
			events = append(events, fmt.Sprintf("limited %s retry=%v", key, d.RetryAfter))
		}),
		guard.OnBlocked(func(key string, until time.Time) {
			events = append(events, fmt.Sprintf("blocked %s until=+%v", key, until.Sub(t0)))
		}),
	)
	check := func(key string) {
		_, _ = g.Check(context.Background(), key)
	}
	check("a")
	mock.Add(time.Second)
	check("a")
	mock.Add(time.Second)
	check("a")
	check("b")
	require.Equal(t, []string{
		"blocked a until=+1h0m1s",
		"limited a retry=1h0m0s",
		"limited a retry=59m59s",
	}, events)
}

func TestBlockLogLine(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey && len(groups) == 0 {
				return slog.Attr{} // the handler's own timestamp is real time
			}
			return a
		},
	}))
	g, mock := newGuard(t, guard.Policy{Limit: rxthrottle.Per(2, time.Minute), Block: 5 * time.Minute}, guard.WithLogger(logger))
	for range 2 {
		_, err := g.Check(context.Background(), "user 42")
		require.NoError(t, err)
	}
	require.Empty(t, buf.String(), "allowed requests log nothing")
	mock.Add(10 * time.Second)
	for range 3 {
		_, err := g.Check(context.Background(), "user 42")
		require.ErrorIs(t, err, guard.ErrLimited)
	}
	require.Equal(t,
		`level=WARN msg="key is over the usage limit" key="user 42" count=3 limit=2 window=1m0s until=2026-03-01T12:05:10.000Z`+"\n",
		buf.String(), "one line per block, not per refusal")
}

func TestDefaultLoggerIsSlogDefault(t *testing.T) {
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewJSONHandler(&buf, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })

	mock := newMock()
	g, err := guard.New(guard.Policy{Limit: rxthrottle.Per(1, time.Second)}, guard.WithClock(mock))
	require.NoError(t, err)
	_, _ = g.Check(context.Background(), "k")
	_, err = g.Check(context.Background(), "k")
	require.ErrorIs(t, err, guard.ErrLimited)
	require.Contains(t, buf.String(), `"msg":"key is over the usage limit","key":"k","count":2`)
}

func TestStats(t *testing.T) {
	g, mock := newGuard(t, guard.Policy{Limit: rxthrottle.Per(1, time.Minute), Block: time.Hour})
	ctx := context.Background()
	_, _ = g.Check(ctx, "a")
	_, _ = g.Check(ctx, "a") // blocks a
	_, _ = g.Check(ctx, "a")
	_, _ = g.Check(ctx, "b")
	require.Equal(t, guard.Stats{Checks: 4, Allowed: 2, Refused: 2, Blocks: 1, KeysLive: 2, KeysBlocked: 1}, g.Stats())
	mock.Add(time.Minute) // b's window ends
	require.Equal(t, guard.Stats{Checks: 4, Allowed: 2, Refused: 2, Blocks: 1, KeysLive: 1, KeysBlocked: 1}, g.Stats())
	mock.Add(time.Hour) // a's block ends
	require.Equal(t, guard.Stats{Checks: 4, Allowed: 2, Refused: 2, Blocks: 1}, g.Stats())
}

func TestStatsDoesNotAllocate(t *testing.T) {
	g, _ := newGuard(t, policy30)
	_, _ = g.Check(context.Background(), "a")
	allocs := testing.AllocsPerRun(100, func() { _ = g.Stats() })
	require.Zero(t, allocs)
}

func TestConcurrentChecks(t *testing.T) {
	// Many goroutines on few keys at one instant: each key admits exactly
	// Limit requests and is blocked exactly once; counters add up.
	const keys, goroutines, each = 4, 8, 50
	p := guard.Policy{Limit: rxthrottle.Per(30, time.Minute), Block: 5 * time.Minute}
	var (
		mu      sync.Mutex
		allowed = map[string]int{}
		blocked = map[string]int{}
	)
	g, _ := newGuard(t, p, guard.OnBlocked(func(key string, _ time.Time) {
		mu.Lock()
		blocked[key]++
		mu.Unlock()
	}))
	var wg sync.WaitGroup
	for i := range goroutines {
		wg.Go(func() {
			for j := range each {
				key := fmt.Sprint("k", (i+j)%keys)
				d, err := g.Check(context.Background(), key)
				if err != nil && !errors.Is(err, guard.ErrLimited) {
					t.Errorf("Check(%q): %v", key, err)
				}
				if d.Allowed {
					mu.Lock()
					allowed[key]++
					mu.Unlock()
				}
				_ = g.Stats() // concurrently with Check
			}
		})
	}
	wg.Wait()
	for k := range keys {
		key := fmt.Sprint("k", k)
		assert.Equal(t, p.Limit.N, allowed[key], "allowed[%s]", key)
		assert.Equal(t, 1, blocked[key], "blocked[%s]", key)
	}
	total := uint64(goroutines * each)
	require.Equal(t, guard.Stats{
		Checks: total, Allowed: keys * uint64(p.Limit.N), Refused: total - keys*uint64(p.Limit.N),
		Blocks: keys, KeysLive: keys, KeysBlocked: keys,
	}, g.Stats())
}
