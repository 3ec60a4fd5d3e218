package rxthrottle_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
)

// WithAdaptiveConcurrency (SPEC.md, "Adaptive concurrency") through
// ThrottleMap and the Keyed limiter, on virtual time.

// kneeServer is a fake server: a call takes 10 ms while at most knee are
// in flight, and more the more there are beyond.
type kneeServer struct {
	knee          int
	mu            sync.Mutex
	inFlight, max int
}

func (s *kneeServer) call() {
	s.mu.Lock()
	s.inFlight++
	c := s.inFlight
	s.max = max(s.max, c)
	s.mu.Unlock()
	lat := 10 * time.Millisecond
	if c > s.knee {
		lat = lat * time.Duration(c*c) / time.Duration(s.knee*s.knee)
	}
	time.Sleep(lat)
	s.mu.Lock()
	s.inFlight--
	s.mu.Unlock()
}

// TestAdaptiveThrottleMap: ThrottleMap's calls in flight follow the
// server (a knee at 4) instead of running as many as there are tokens;
// every item comes out, in order, and none is refused.
func TestAdaptiveThrottleMap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &kneeServer{knee: 4}
		fn := func(_ context.Context, v any) (any, error) {
			srv.call()
			return v, nil
		}
		items := make([]any, 2000)
		for i := range items {
			items[i] = i
		}
		start := time.Now()
		out := rxthrottle.ThrottleMap(rxthrottle.Per(1000, time.Second), fn,
			rxthrottle.WithAdaptiveConcurrency(1, 64))(rxgo.Just(items...)()).Observe()
		next := 0
		for item := range out {
			require.NoError(t, item.E)
			require.Equal(t, next, item.V)
			next++
		}
		require.Equal(t, len(items), next)
		require.LessOrEqual(t, srv.max, 10, "calls in flight at a server of knee 4 (tokens allowed 1000)")
		// At 4 calls in flight, 400 a second: 2000 items in about 5 s.
		require.Less(t, time.Since(start), 7*time.Second)
	})
}

// TestAdaptiveKeyedPerKey: each key of a Keyed limiter learns a cap of its
// own: the key of a server with a knee at 16 runs more calls at once than
// the key of one with a knee at 2.
func TestAdaptiveKeyedPerKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k, err := rxthrottle.NewKeyed(rxthrottle.Per(100000, time.Second), rxthrottle.WithAdaptiveConcurrency(1, 32))
		require.NoError(t, err)
		servers := map[string]*kneeServer{"small": {knee: 2}, "large": {knee: 16}}
		start := time.Now()
		var wg sync.WaitGroup
		for key, srv := range servers {
			for range 40 {
				wg.Go(func() {
					for time.Since(start) < 3*time.Second {
						tok, err := k.Acquire(context.Background(), key)
						require.NoError(t, err)
						srv.call()
						tok.Release()
					}
				})
			}
		}
		wg.Wait()
		small, large := servers["small"].max, servers["large"].max
		require.LessOrEqual(t, small, 8, "the small server's calls in flight")
		require.GreaterOrEqual(t, large, 16, "the large server's calls in flight")
		require.Zero(t, k.Stats().Refused)
	})
}
