package limitertest_test

import (
	"testing"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/limitertest"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func options(s limitertest.Setup) []rxthrottle.Option {
	var opts []rxthrottle.Option
	for _, l := range s.Limits[1:] {
		opts = append(opts, rxthrottle.WithLimit(l))
	}
	if s.HoldTimeout > 0 {
		opts = append(opts, rxthrottle.WithHoldTimeout(s.HoldTimeout))
	}
	if s.Concurrency > 0 {
		opts = append(opts, rxthrottle.WithConcurrency(s.Concurrency))
	}
	if s.QueueBounded {
		opts = append(opts, rxthrottle.WithMaxQueue(s.MaxQueue))
	}
	return append(opts, rxthrottle.WithSpacing(s.Spacing))
}

// inMemory are the rules every in-memory limiter claims.
var inMemory = limitertest.Claims{Deadlines: true, Concurrency: true, Priorities: true, QueueBound: true, ReleaseN: true, FairShares: true}

func TestBucket(t *testing.T) {
	limitertest.Run(t, limitertest.Config{Virtual: true, Claims: inMemory, New: func(t *testing.T, s limitertest.Setup) rxthrottle.Limiter {
		b, err := rxthrottle.NewBucket(s.Limits[0], options(s)...)
		require.NoError(t, err)
		return b
	}})
}

func TestKeyed(t *testing.T) {
	limitertest.Run(t, limitertest.Config{Virtual: true, Claims: inMemory, New: func(t *testing.T, s limitertest.Setup) rxthrottle.Limiter {
		k, err := rxthrottle.NewKeyed(s.Limits[0], options(s)...)
		require.NoError(t, err)
		return rxthrottle.ForKey(k, "some user")
	}})
}
