package redisstore

import (
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
)

// TestOptionsNotRead: a constructor given an option it does not read
// returns an error naming it, instead of ignoring it (issue 12), whichever
// package the option comes from (issue 21).
func TestOptionsNotRead(t *testing.T) {
	c := nopClient(t)
	limit := rxthrottle.Per(1, time.Second)
	limiterOnly := []struct {
		name string
		o    Option
	}{
		{"rxthrottle.WithClock", rxthrottle.WithClock(clock.New())},
		{"rxthrottle.WithLimit", rxthrottle.WithLimit(rxthrottle.Per(10, time.Minute))},
		{"rxthrottle.WithHoldTimeout", rxthrottle.WithHoldTimeout(time.Second)},
		{"rxthrottle.WithSpacing", rxthrottle.WithSpacing(time.Millisecond)},
		{"rxthrottle.OnWait", rxthrottle.OnWait(func(rxthrottle.Event) {})},
		{"rxthrottle.OnAdmit", rxthrottle.OnAdmit(func(rxthrottle.Event) {})},
		{"redisstore.WithFailurePolicy", WithFailurePolicy(FailOpen)},
		{"redisstore.WithRetryBackoff", WithRetryBackoff(time.Second, time.Minute)},
		{"redisstore.WithPollInterval", WithPollInterval(time.Millisecond)},
		// The deprecated forwarders make rxthrottle's options.
		{"rxthrottle.WithClock", WithClock(clock.New())},
		{"rxthrottle.WithLimit", WithLimit(rxthrottle.Per(10, time.Minute))},
		{"rxthrottle.WithHoldTimeout", WithHoldTimeout(time.Second)},
		{"rxthrottle.WithSpacing", WithSpacing(time.Millisecond)},
	}
	for _, tc := range limiterOnly {
		name, o := tc.name, tc.o
		s, err := NewGuardStore(c, "g", WithTimeout(time.Second), o)
		require.EqualError(t, err, "redisstore: NewGuardStore does not read "+name, name)
		require.Nil(t, s)

		b, err := NewBucket(c, "b", limit, o)
		require.NoError(t, err, name)
		require.NotNil(t, b)
		k, err := NewKeyed(c, "k", limit, o)
		require.NoError(t, err, name)
		require.NotNil(t, k)

		// The in-memory limiter reads rxthrottle's options, and names
		// this package's.
		_, err = rxthrottle.NewBucket(limit, o)
		if strings.HasPrefix(name, "redisstore.") {
			require.EqualError(t, err, "rxthrottle: "+name+" is an option of another package's limiters: rxthrottle's limiters do not read it")
		} else {
			require.NoError(t, err, name)
		}
	}

	b, err := NewBucket(c, "b", limit, WithCallerTime())
	require.EqualError(t, err, "redisstore: NewBucket does not read redisstore.WithCallerTime")
	require.Nil(t, b)
	k, err := NewKeyed(c, "k", limit, WithCallerTime())
	require.EqualError(t, err, "redisstore: NewKeyed does not read redisstore.WithCallerTime")
	require.Nil(t, k)
	_, err = NewKeyed(c, "k", limit, rxthrottle.WithIdleMargin(time.Second))
	require.EqualError(t, err, "redisstore: NewKeyed does not read rxthrottle.WithIdleMargin")
	_, err = rxthrottle.NewBucket(limit, WithTimeout(time.Second))
	require.EqualError(t, err, "rxthrottle: redisstore.WithTimeout is an option of another package's limiters: rxthrottle's limiters do not read it")

	// Read by every constructor.
	shared := []Option{WithTimeout(time.Second), OnError(func(error) {})}
	_, err = NewGuardStore(c, "g", append(shared, WithCallerTime())...)
	require.NoError(t, err)
	_, err = NewBucket(c, "b", limit, shared...)
	require.NoError(t, err)
	_, err = NewKeyed(c, "k", limit, shared...)
	require.NoError(t, err)
}
