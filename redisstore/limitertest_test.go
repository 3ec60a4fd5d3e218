package redisstore

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/limitertest"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
	"github.com/stretchr/testify/require"
)

// suiteTimeout bounds each Redis call of the suite's limiters: the suite
// checks the schedule, not outages, and a loaded machine (the suite runs
// under a CPU hog) can stall a round trip past the default 500 ms, which
// would fail a caller with ErrStoreUnavailable.
const suiteTimeout = 10 * time.Second

// limiterOptions turns a limitertest.Setup into options.
func limiterOptions(s limitertest.Setup) []Option {
	opts := []Option{WithSpacing(s.Spacing), WithTimeout(suiteTimeout)}
	for _, l := range s.Limits[1:] {
		opts = append(opts, WithLimit(l))
	}
	if s.HoldTimeout > 0 {
		opts = append(opts, WithHoldTimeout(s.HoldTimeout))
	}
	if s.Concurrency > 0 {
		opts = append(opts, rxthrottle.WithConcurrency(s.Concurrency))
	}
	if s.QueueBounded {
		opts = append(opts, rxthrottle.WithMaxQueue(s.MaxQueue))
	}
	return opts
}

// TestLimiterSuite runs the behaviour suite every limiter of rxthrottle
// runs, through the rxthrottle.Limiter interface, on the real clock (times
// are Redis's): the Redis Bucket, and one key of the Redis Keyed limiter.
func TestLimiterSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("the suite on the real clock takes about half a minute")
	}
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	var n atomic.Int64
	// Priorities: WithPriority orders the callers of one process that wait
	// for the same script run (group commit), the callers given a
	// departure they have not reached and the head of the line of callers
	// blocked by held tokens: a caller of higher priority takes their
	// places (departures.go, line.go). With a lease, the pool's waiters
	// wait behind its callers on the normal path only while their
	// priority is no higher: a higher one goes there too, and takes the
	// lower one's place (lease_normal.go).
	// FairShares: WithTenant orders the same callers by their tenants'
	// shares (fair.go, line.go); with a lease, the pool's waiters and its
	// callers on the normal path are one fair order, each charged at its
	// departure, and a waiter the order puts first goes there too
	// (lease_queue.go, lease_normal.go).
	// The three limiters' suites go in parallel (two at once at
	// -parallel's default on CI's two cores), each on keys of its own:
	// they mostly wait on the real clock, 25 s each, one after the other
	// the longest test of redisstore's cluster run.
	claims := limitertest.Claims{Deadlines: true, Concurrency: true, Priorities: true, QueueBound: true, ReleaseN: true, FairShares: true}
	t.Run("Bucket", func(t *testing.T) {
		t.Parallel()
		limitertest.Run(t, limitertest.Config{Claims: claims, New: func(t *testing.T, s limitertest.Setup) rxthrottle.Limiter {
			b, err := NewBucket(rdb, fmt.Sprintf("suite%d", n.Add(1)), s.Limits[0], limiterOptions(s)...)
			require.NoError(t, err)
			return b
		}})
	})
	t.Run("Bucket(lease)", func(t *testing.T) {
		t.Parallel()
		limitertest.Run(t, limitertest.Config{Claims: claims, New: func(t *testing.T, s limitertest.Setup) rxthrottle.Limiter {
			opts := limiterOptions(s)
			if s.Spacing == 0 && s.Concurrency == 0 { // which leases refuse: those setups run unleased
				opts = append(opts, WithLease(0))
			}
			b, err := NewBucket(rdb, fmt.Sprintf("suite%d", n.Add(1)), s.Limits[0], opts...)
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, b.Close()) })
			return b
		}})
	})
	t.Run("Keyed", func(t *testing.T) {
		t.Parallel()
		limitertest.Run(t, limitertest.Config{Claims: claims, New: func(t *testing.T, s limitertest.Setup) rxthrottle.Limiter {
			k, err := NewKeyed(rdb, fmt.Sprintf("suite%d", n.Add(1)), s.Limits[0], limiterOptions(s)...)
			require.NoError(t, err)
			return rxthrottle.ForKey(k, "some user")
		}})
	})
}
