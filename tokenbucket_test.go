package rxthrottle

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewBucketRejectsBadInput(t *testing.T) {
	tests := []struct {
		name  string
		limit Limit
		opts  []Option
		want  string
	}{
		{"zero N", Per(0, time.Second), nil, "rxthrottle: limit 0 per 1s: N must be at least 1: invalid limit"},
		{"negative N", Per(-3, time.Second), nil, "rxthrottle: limit -3 per 1s: N must be at least 1: invalid limit"},
		{"zero window", Per(5, 0), nil, "rxthrottle: limit 5 per 0s: Window must be positive: invalid limit"},
		{"negative window", Per(5, -time.Second), nil, "rxthrottle: limit 5 per -1s: Window must be positive: invalid limit"},
		{"bad extra limit", Per(5, time.Second), []Option{WithLimit(Per(1, time.Minute)), WithLimit(Per(0, time.Minute))},
			"rxthrottle: limit #3 (0 per 1m0s): N must be at least 1: invalid limit"},
		{"nil clock", Per(5, time.Second), []Option{WithClock(nil)}, "rxthrottle: WithClock(nil): a clock is required"},
		{"nil option", Per(5, time.Second), []Option{nil}, "rxthrottle: nil Option"},
		{"keyed option", Per(5, time.Second), []Option{WithMaxKeys(10)}, "rxthrottle: WithMaxKeys is an option of NewKeyed and ThrottleBy: NewBucket, Throttle and ThrottleMap do not read it"},
		{"idle margin", Per(5, time.Second), []Option{WithIdleMargin(time.Second)}, "rxthrottle: WithIdleMargin is an option of NewKeyed and ThrottleBy: NewBucket, Throttle and ThrottleMap do not read it"},
		{"zero hold timeout", Per(5, time.Second), []Option{WithHoldTimeout(0)}, "rxthrottle: WithHoldTimeout(0s): the timeout must be positive"},
		{"negative spacing", Per(5, time.Second), []Option{WithSpacing(-1)}, "rxthrottle: WithSpacing(-1ns): the spacing must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := NewBucket(tt.limit, tt.opts...)
			require.Nil(t, b)
			require.EqualError(t, err, tt.want)
		})
	}
	_, err := NewBucket(Per(0, time.Second))
	require.ErrorIs(t, err, ErrInvalidLimit)
}

func TestWaitNilContext(t *testing.T) {
	b, err := NewBucket(Per(1, time.Second))
	require.NoError(t, err)
	//lint:ignore SA1012 the point is a nil context
	require.EqualError(t, b.Wait(nil), "rxthrottle: nil context") //nolint:staticcheck
}

// step is one action of a table-driven bucket test at a virtual instant.
type step struct {
	at   time.Duration // since the start of the test
	do   string        // "allow", "wait", "pause", "free"
	arg  time.Duration // pause: until (since start)
	want any           // allow: bool; wait: time it returned; free: int
}

// runSteps runs steps in order on b inside a synctest bubble started at
// start, reporting "step %d: ... = %v, want %v".
func runSteps(t *testing.T, start time.Time, b *Bucket, steps []step) {
	t.Helper()
	for i, s := range steps {
		sleepUntil(start.Add(s.at))
		switch s.do {
		case "allow":
			if got := AllowNow(b); got != s.want {
				t.Errorf("step %d: Allow() at %v = %v, want %v", i, s.at, got, s.want)
			}
		case "wait":
			require.NoError(t, b.Wait(context.Background()))
			want, ok := s.want.(time.Duration)
			if !ok { // an untyped 0 in the table
				want = time.Duration(s.want.(int))
			}
			if got := time.Since(start); got != want {
				t.Errorf("step %d: Wait() from %v returned at %v, want %v", i, s.at, got, want)
			}
		case "pause":
			b.Pause(start.Add(s.arg))
		case "free":
			if got := b.Stats().Free; got != s.want {
				t.Errorf("step %d: Stats().Free at %v = %v, want %v", i, s.at, got, s.want)
			}
		default:
			t.Fatalf("step %d: unknown action %q", i, s.do)
		}
	}
}

func TestBucketSteps(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name   string
		limits []Limit
		steps  []step
	}{
		{"burst then renewal at exactly W", []Limit{Per(3, 10*ms)}, []step{
			{0, "free", 0, 3},
			{0, "allow", 0, true}, {0, "allow", 0, true}, {2 * ms, "allow", 0, true},
			{2 * ms, "free", 0, 0},
			{9 * ms, "allow", 0, false},
			{10 * ms, "free", 0, 2},
			{10 * ms, "allow", 0, true}, {10 * ms, "allow", 0, true}, {10 * ms, "allow", 0, false},
			{11 * ms, "wait", 0, 12 * ms},
			{12 * ms, "allow", 0, false},
		}},
		{"wait goes at the renewal, not later", []Limit{Per(2, 5*ms)}, []step{
			{0, "wait", 0, 0}, {1 * ms, "wait", 0, 1 * ms}, {1 * ms, "wait", 0, 5 * ms},
			{5 * ms, "wait", 0, 6 * ms}, {6 * ms, "wait", 0, 10 * ms},
		}},
		{"two limits", []Limit{Per(2, 5*ms), Per(3, 20*ms)}, []step{
			{0, "wait", 0, 0}, {0, "wait", 0, 0}, {0, "wait", 0, 5 * ms}, {5 * ms, "wait", 0, 20 * ms},
			{20 * ms, "free", 0, 1}, {20 * ms, "wait", 0, 20 * ms}, {20 * ms, "free", 0, 0},
		}},
		{"pause is a floor and never shortens", []Limit{Per(5, 10*ms)}, []step{
			{0, "pause", 30 * ms, nil}, {1 * ms, "pause", 20 * ms, nil},
			{2 * ms, "allow", 0, false}, {2 * ms, "free", 0, 0},
			{2 * ms, "wait", 0, 30 * ms}, {30 * ms, "allow", 0, true}, {30 * ms, "free", 0, 3},
		}},
		{"pause in the past does nothing", []Limit{Per(1, 10*ms)}, []step{
			{5 * ms, "pause", 1 * ms, nil}, {5 * ms, "allow", 0, true},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b, err := NewBucket(tt.limits[0], withLimits(tt.limits[1:])...)
				require.NoError(t, err)
				runSteps(t, time.Now(), b, tt.steps)
			})
		})
	}
}

// TestBucketUsesInjectedClock proves the bucket reads the clock it is given:
// a clock.Mock that is not advanced holds a waiter back however much real
// (here: bubble) time passes.
func TestBucketUsesInjectedClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock := clock.NewMock()
		b, err := NewBucket(Per(1, time.Second), WithClock(mock))
		require.NoError(t, err)
		require.True(t, AllowNow(b))

		done := make(chan struct{})
		go func() {
			defer close(done)
			assert.NoError(t, b.Wait(context.Background()))
		}()
		time.Sleep(time.Hour) // bubble time moves; the mock does not
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("Wait returned although the injected clock did not move")
		default:
		}
		mock.Add(999 * time.Millisecond)
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("Wait returned 1ms early")
		default:
		}
		mock.Add(time.Millisecond)
		<-done
	})
}

func TestCancelledWaitConsumesNoToken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		b, err := NewBucket(Per(1, 10*time.Millisecond))
		require.NoError(t, err)
		require.True(t, AllowNow(b))

		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error)
		go func() { errc <- b.Wait(ctx) }() // first in line, for 10ms
		synctest.Wait()
		var second time.Duration
		var wg sync.WaitGroup
		wg.Go(func() {
			assert.NoError(t, b.Wait(context.Background()))
			second = time.Since(start)
		})
		synctest.Wait()
		time.Sleep(3 * time.Millisecond)
		cancel()
		require.ErrorIs(t, <-errc, context.Canceled)
		wg.Wait()
		// The second caller takes the token the first would have had.
		require.Equal(t, 10*time.Millisecond, second)
		require.EqualValues(t, 1, b.Stats().Cancelled)
	})
}

func TestWaitWithDoneContextReturnsAtOnce(t *testing.T) {
	b, err := NewBucket(Per(1, time.Hour))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, b.Wait(ctx), context.Canceled)
	require.True(t, AllowNow(b), "the cancelled Wait took a token")
}

func TestReservation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		ms := time.Millisecond
		b, err := NewBucket(Per(2, 10*ms))
		require.NoError(t, err)
		r1, r2, r3, r4 := b.Reserve(), b.Reserve(), b.Reserve(), b.Reserve()
		require.True(t, r1.Granted())
		require.True(t, r2.Granted())
		require.False(t, r3.Granted())
		require.Equal(t, start, r1.Time())
		require.Equal(t, start.Add(10*ms), r3.Time())
		require.Equal(t, 10*ms, r4.Delay())

		time.Sleep(4 * ms)
		require.True(t, r3.Cancel(), "cancel a waiting reservation")
		require.False(t, r3.Cancel(), "cancel twice")
		require.True(t, r3.Time().IsZero())
		require.Equal(t, start.Add(10*ms), r4.Time(), "r4 moves up into r3's place")
		r5 := b.Reserve()
		require.Equal(t, start.Add(10*ms), r5.Time())
		r6 := b.Reserve()
		require.Equal(t, start.Add(20*ms), r6.Time())

		<-r4.Ready()
		require.Equal(t, 10*ms, time.Since(start))
		require.False(t, r4.Cancel(), "a granted reservation cannot be cancelled")
		require.Zero(t, r4.Delay())
		<-r6.Ready()
		require.Equal(t, 20*ms, time.Since(start))
		require.True(t, r5.Granted())
	})
}

func TestSetLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		ms := time.Millisecond
		b, err := NewBucket(Per(2, 10*ms))
		require.NoError(t, err)
		require.True(t, AllowNow(b))
		require.True(t, AllowNow(b))
		got := make(chan time.Duration, 2)
		for range 2 {
			go func() {
				assert.NoError(t, b.Wait(context.Background()))
				got <- time.Since(start)
			}()
			synctest.Wait()
		}
		time.Sleep(2 * ms)
		// Raising N frees a token at once for the first waiter; the second
		// waits for the first token's renewal under the new window.
		require.NoError(t, b.SetLimit(Per(3, 20*ms)))
		require.Equal(t, 2*ms, <-got)
		require.Equal(t, 20*ms, <-got)
		require.Equal(t, []Limit{Per(3, 20*ms)}, b.Limits())

		err = b.SetLimit(Per(1, ms), Per(0, ms))
		require.ErrorIs(t, err, ErrInvalidLimit)
		require.Equal(t, []Limit{Per(3, 20*ms)}, b.Limits(), "a failed SetLimit changes nothing")

		// Lowering N keeps the history: with 1 per 20ms, the next token is
		// 20ms after the last emission.
		require.NoError(t, b.SetLimit(Per(1, 20*ms)))
		require.NoError(t, b.Wait(context.Background()))
		require.Equal(t, 40*ms, time.Since(start))
	})
}

func TestStatsAndHooks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := time.Millisecond
		var mu sync.Mutex // hooks may run on the timer's goroutines
		var waits, admits []Event
		b, err := NewBucket(Per(1, 10*ms),
			OnWait(func(e Event) { mu.Lock(); waits = append(waits, e); mu.Unlock() }),
			OnAdmit(func(e Event) { mu.Lock(); admits = append(admits, e); mu.Unlock() }))
		require.NoError(t, err)
		start := time.Now()
		for range 3 {
			require.NoError(t, b.Wait(context.Background()))
		}
		st := b.Stats()
		require.Equal(t, Stats{Admitted: 3, Waited: 2, TotalWait: 20 * ms, MaxWait: 10 * ms, Free: 0}, st)
		synctest.Wait()
		mu.Lock()
		require.Len(t, waits, 2)
		require.Equal(t, []Event{
			{Arrived: start, N: 1},
			{Arrived: start, Wait: 10 * ms, N: 1},
			{Arrived: start.Add(10 * ms), Wait: 10 * ms, N: 1},
		}, admits)
		mu.Unlock()
		allocs := testing.AllocsPerRun(100, func() { _ = b.Stats() })
		require.Zero(t, allocs, "Stats allocates")
	})
}

func TestConcurrentWaitersFIFOAndWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n, w, callers = 4, 10 * time.Millisecond, 200
		b, err := NewBucket(Per(n, w))
		require.NoError(t, err)
		start := time.Now()
		var mu sync.Mutex
		var times []time.Duration
		var wg sync.WaitGroup
		for range callers {
			wg.Go(func() {
				assert.NoError(t, b.Wait(context.Background()))
				mu.Lock()
				times = append(times, time.Since(start))
				mu.Unlock()
			})
		}
		wg.Wait()
		require.Len(t, times, callers)
		require.LessOrEqual(t, maxInWindow(times, w), n)
		// No needless waiting: 200 callers at once finish at (200/4 - 1) * W.
		require.Equal(t, time.Duration(callers/n-1)*w, slices.Max(times))
	})
}

func TestLimitString(t *testing.T) {
	require.Equal(t, "5 per 1s", Per(5, time.Second).String())
	require.True(t, errors.Is(Per(1, 0).Validate(), ErrInvalidLimit))
	require.NoError(t, Per(1, 1).Validate())
}
