package redisstore

import (
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
)

// TestOptionsNotRead: a constructor given an option it does not read
// returns an error naming it, instead of ignoring it (issue 12).
func TestOptionsNotRead(t *testing.T) {
	c := nopClient(t)
	limit := rxthrottle.Per(1, time.Second)
	limiterOnly := map[string]Option{
		"WithClock":         WithClock(clock.New()),
		"WithLimit":         WithLimit(rxthrottle.Per(10, time.Minute)),
		"WithFailurePolicy": WithFailurePolicy(FailOpen),
		"WithRetryBackoff":  WithRetryBackoff(time.Second, time.Minute),
		"WithHoldTimeout":   WithHoldTimeout(time.Second),
		"WithSpacing":       WithSpacing(time.Millisecond),
		"WithPollInterval":  WithPollInterval(time.Millisecond),
	}
	for name, o := range limiterOnly {
		s, err := NewGuardStore(c, "g", WithTimeout(time.Second), o)
		require.EqualError(t, err, "redisstore: NewGuardStore does not read "+name+": it is an option of NewBucket and NewKeyed", name)
		require.Nil(t, s)

		b, err := NewBucket(c, "b", limit, o)
		require.NoError(t, err, name)
		require.NotNil(t, b)
		k, err := NewKeyed(c, "k", limit, o)
		require.NoError(t, err, name)
		require.NotNil(t, k)
	}

	b, err := NewBucket(c, "b", limit, WithCallerTime())
	require.EqualError(t, err, "redisstore: NewBucket does not read WithCallerTime: it is an option of NewGuardStore")
	require.Nil(t, b)
	k, err := NewKeyed(c, "k", limit, WithCallerTime())
	require.EqualError(t, err, "redisstore: NewKeyed does not read WithCallerTime: it is an option of NewGuardStore")
	require.Nil(t, k)

	// Read by every constructor.
	shared := []Option{WithTimeout(time.Second), OnError(func(error) {})}
	_, err = NewGuardStore(c, "g", append(shared, WithCallerTime())...)
	require.NoError(t, err)
	_, err = NewBucket(c, "b", limit, shared...)
	require.NoError(t, err)
	_, err = NewKeyed(c, "k", limit, shared...)
	require.NoError(t, err)
}
