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
	return append(opts, rxthrottle.WithSpacing(s.Spacing))
}

func TestBucket(t *testing.T) {
	limitertest.Run(t, limitertest.Config{Virtual: true, New: func(t *testing.T, s limitertest.Setup) rxthrottle.Limiter {
		b, err := rxthrottle.NewBucket(s.Limits[0], options(s)...)
		require.NoError(t, err)
		return b
	}})
}

func TestKeyed(t *testing.T) {
	limitertest.Run(t, limitertest.Config{Virtual: true, New: func(t *testing.T, s limitertest.Setup) rxthrottle.Limiter {
		k, err := rxthrottle.NewKeyed(s.Limits[0], options(s)...)
		require.NoError(t, err)
		return rxthrottle.ForKey(k, "some user")
	}})
}
