package limitertest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/internal/specmodel"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// near fails unless got is want, exactly on virtual time. On the real clock
// it fails only for a departure earlier than want by more than Slack, and
// logs one later than that: a loaded machine delays goroutines (a caller
// that reads its answer late, a timer that fires late) but can never make
// a token renew early, so only earliness is a fault there; that nobody
// waits longer than the formula is checked on virtual time, where it is
// exact. A check measures from an instant taken before the call that
// started the schedule, so that a late reading can only make got larger.
func (c Config) near(t *testing.T, want, got time.Duration, msg string) {
	t.Helper()
	if c.Virtual {
		require.Equal(t, want, got, msg)
		return
	}
	slack := c.slack()
	if got < want-slack {
		require.Failf(t, "early departure", "%s: %v, want %v (at most %v early)", msg, got, want, slack)
	}
	if got > want+slack {
		t.Logf("late on the real clock: %s: %v, want %v", msg, got, want)
	}
}

// requireAllow fails unless l.Allow says want, without an error.
func requireAllow(t *testing.T, l rxthrottle.Limiter, want bool, msg string) {
	t.Helper()
	ok, err := l.Allow(context.Background())
	require.NoError(t, err, msg)
	require.Equal(t, want, ok, msg)
}

// slack is Slack, or its default.
func (c Config) slack() time.Duration {
	if c.Slack == 0 {
		return 100 * time.Millisecond
	}
	return c.Slack
}

// setup turns a model configuration into a Setup.
func setup(cfg specmodel.Config) Setup {
	s := Setup{HoldTimeout: cfg.HoldTimeout, Spacing: cfg.Spacing, Concurrency: cfg.Concurrency, MaxQueue: cfg.MaxQueue, QueueBounded: cfg.QueueBounded}
	for _, l := range cfg.Limits {
		s.Limits = append(s.Limits, rxthrottle.Per(l.N, l.Window))
	}
	return s
}

// checkSchedule runs the callers of s, each at its arrival, and compares
// every departure with the model's.
func (c Config) checkSchedule(t *testing.T, s scenario) {
	t.Helper()
	items := s.items
	if !c.Claims.Deadlines {
		items = slices.Clone(items)
		for i := range items {
			items[i].PlainCancel = true
		}
	}
	l := c.New(t, setup(s.cfg))
	outs := specmodel.Run(s.cfg, items)
	want := specmodel.Schedule(s.cfg, items)
	got := c.runCallers(t, l, s, items, outs)
	if c.Virtual {
		require.Equal(t, want, got, "%s: departures", s.name)
		admitted, cancelled, refused := specmodel.Counts(outs)
		st := l.Stats()
		require.Equal(t, admitted, st.Admitted, "%s: Stats().Admitted", s.name)
		require.Equal(t, cancelled, st.Cancelled, "%s: Stats().Cancelled", s.name)
		require.Equal(t, refused, st.Refused, "%s: Stats().Refused", s.name)
		require.Zero(t, st.Failed, "%s: Stats().Failed, with no store failing", s.name)
		return
	}
	c.compareRealClock(t, s, want, got)
}

// runCallers starts caller i of items at its arrival, each in a goroutine
// of its own, and returns their departures (-1 for one that did not
// depart) once all are done.
func (c Config) runCallers(t *testing.T, l rxthrottle.Limiter, s scenario, items []specmodel.Item, outs []specmodel.Outcome) []time.Duration {
	got := make([]time.Duration, len(items))
	start := time.Now()
	var wg sync.WaitGroup
	for i, it := range items {
		time.Sleep(time.Until(start.Add(it.Arrive)))
		if c.Virtual {
			// What happens at this instant before the arrival (grants,
			// releases) happens first, as in the model.
			synctest.Wait()
		} else if i > 0 {
			// On the real clock, goroutines started together reach the
			// limiter in any order: stagger them so they arrive in order.
			time.Sleep(2 * time.Millisecond)
		}
		ctx, cancel := specmodel.FairContext(start, it, rxthrottle.WithPriority, rxthrottle.WithTenant)
		wg.Go(func() {
			defer cancel()
			got[i] = c.call(t, l, ctx, start, i, it, s.acquire[i], outs[i])
		})
		if c.Virtual {
			synctest.Wait()
		} else {
			awaitArrivals(l, i+1)
		}
	}
	wg.Wait()
	return got
}

// callerClass is what makes two callers interchangeable on the real clock.
type callerClass struct {
	cost, acquire, prio int
	hold                time.Duration
	unused, ends        bool
	tenant              string
	weight              float64
}

// compareRealClock compares the departures got with want on the real clock.
// Callers started a few milliseconds apart may still reach the limiter in
// another order on a loaded machine: callers alike (same cost, hold,
// cancellation and priority) are interchangeable, so their departures are
// compared in sorted order. (Callers of different priorities or tenants are
// not: while they wait, their order is their priority's, then their
// tenants' shares', whatever their order of arrival.)
func (c Config) compareRealClock(t *testing.T, s scenario, want, got []time.Duration) {
	t.Helper()
	wants, gots := map[callerClass][]time.Duration{}, map[callerClass][]time.Duration{}
	var order []callerClass
	for i, it := range s.items {
		if want[i] >= 0 && got[i] < 0 && it.Cancel >= 0 && it.Cancel-want[i] <= c.slack() {
			// Its deadline was within Slack of its departure: a loaded
			// machine that delays the departure (a release read late)
			// makes it give up, which is no fault of the limiter's.
			t.Logf("%s: caller %d gave up at its deadline %v, %v after its departure in the model: late on the real clock", s.name, i, it.Cancel, it.Cancel-want[i])
			continue
		}
		k := callerClass{max(it.Cost, 1), 0, it.Priority, it.Hold, it.Unused, it.Cancel >= 0, it.Tenant, it.Weight}
		if s.acquire[i] {
			k.acquire = 1
		}
		if _, seen := wants[k]; !seen {
			order = append(order, k)
		}
		wants[k] = append(wants[k], want[i])
		gots[k] = append(gots[k], got[i])
	}
	for _, k := range order {
		w, g := wants[k], gots[k]
		slices.Sort(w)
		slices.Sort(g)
		for i := range w {
			if w[i] < 0 || g[i] < 0 {
				require.Equal(t, w[i] < 0, g[i] < 0, "%s: callers %+v cancelled: %v, want %v", s.name, k, g, w)
				continue
			}
			c.near(t, w[i], g[i], fmt.Sprintf("%s: callers %+v: %v, want %v", s.name, k, g, w))
		}
	}
}

// awaitArrivals waits, for up to a second, until n callers have reached
// l: admitted, refused, cancelled or waiting, by its Stats. On the real
// clock a goroutine started 2 ms after another can still reach the
// limiter first on a loaded machine (seen on three test processes over a
// Redis Cluster at once), and the callers of the suite are not all
// interchangeable; the limiters count a caller as waiting before it
// queues for its admission. A limiter whose Stats count nobody only
// costs the second.
func awaitArrivals(l rxthrottle.Limiter, n int) {
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		st := l.Stats()
		if st.Admitted+st.Cancelled+st.Refused+st.Failed+uint64(max(st.Queued, 0)) >= uint64(n) {
			return
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// checkConcurrent has many goroutines hold tokens for random times; an
// arrival drawn between each Acquire's return and its Release must never
// put more than N in a window.
func (c Config) checkConcurrent(t *testing.T, limit rxthrottle.Limit) {
	c.checkHolders(t, limit, 24, 5, 2, func(_ *rand.Rand, l rxthrottle.Limiter) (func() int, error) {
		tok, err := l.Acquire(context.Background())
		return func() int { tok.Release(); return 1 }, err
	})
}

// checkHolders has g goroutines, each with a random source of its own
// (its index and seed), take a hold with take, keep it for a random time
// under limit.Window/part and end it with the function take returned,
// which says how many of the hold's tokens were used. Each used token
// arrives at an instant drawn between take's return and the end: never
// more than N of them in a window.
func (c Config) checkHolders(t *testing.T, limit rxthrottle.Limit, g int, seed uint64, part time.Duration, take func(*rand.Rand, rxthrottle.Limiter) (end func() int, err error)) {
	l := c.New(t, Setup{Limits: []rxthrottle.Limit{limit}})
	var mu sync.Mutex
	var arrivals []time.Duration
	start := time.Now()
	var wg sync.WaitGroup
	for i := range g {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(i), seed))
			end, err := take(r, l)
			if !assert.NoError(t, err) {
				return
			}
			departed := time.Since(start)
			time.Sleep(time.Duration(r.IntN(int(limit.Window / part))))
			released := time.Since(start)
			used := end()
			mu.Lock()
			for range used {
				arrivals = append(arrivals, departed+time.Duration(r.Int64N(int64(released-departed)+1)))
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	require.LessOrEqual(t, specmodel.MaxInWindow(arrivals, nil, limit.Window), limit.N)
}

// call makes caller i's call on l, ends its hold as the item says, and
// returns its departure (-1 if it did not depart), checking its error
// against the model's outcome.
func (c Config) call(t *testing.T, l rxthrottle.Limiter, ctx context.Context, start time.Time, i int, it specmodel.Item, acquire bool, want specmodel.Outcome) time.Duration {
	var tok rxthrottle.Token
	var err error
	if n := max(it.Cost, 1); acquire {
		tok, err = l.AcquireN(ctx, n)
	} else {
		err = l.WaitN(ctx, n)
	}
	if err != nil {
		switch want.Result {
		case specmodel.DeadlineRefused:
			assert.ErrorIs(t, err, rxthrottle.ErrDeadline, "caller %d", i)
			assert.ErrorIs(t, err, context.DeadlineExceeded, "caller %d", i)
		case specmodel.QueueFull:
			assert.ErrorIs(t, err, rxthrottle.ErrQueueFull, "caller %d", i)
		case specmodel.Cancelled:
			assert.ErrorIs(t, err, ctx.Err(), "caller %d", i)
		default:
			// The model has it depart: say why it did not, beside the
			// comparison of departures that will fail (on the real
			// clock a caller whose deadline was near its departure may
			// give up, which checkSchedule forgives).
			t.Logf("caller %d: the model has it depart, the limiter returned: %v", i, err)
		}
		return -1
	}
	d := time.Since(start)
	if !acquire || it.Hold < 0 {
		return d
	}
	time.Sleep(it.Hold)
	switch {
	case it.Unused:
		tok.Cancel()
	case it.ReleaseN:
		err := tok.ReleaseN(it.Used)
		if want.TimedOut {
			assert.ErrorIs(t, err, rxthrottle.ErrTokenEnded, "caller %d: ReleaseN after the hold timeout", i)
		} else {
			assert.NoError(t, err, "caller %d: ReleaseN(%d)", i, it.Used)
		}
	default:
		tok.Release()
	}
	return d
}
