package rxthrottle_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
)

// readmeFairShares is README's "Fair shares and a concurrency learned from
// latency".
func readmeFairShares(ctx context.Context, userID string, call func(context.Context) error) error {
	ctx = rxthrottle.WithTenant(ctx, userID, 1) // each user's calls get a share of the quota
	bucket, err := rxthrottle.NewBucket(rxthrottle.Per(100, time.Second),
		rxthrottle.WithAdaptiveConcurrency(2, 32)) // calls in flight: 2 to 32, from their latency
	if err != nil {
		return err
	}
	token, err := bucket.Acquire(ctx) // in its user's place in the queue
	if err != nil {
		return err
	}
	defer token.Release()
	return call(ctx)
}

func TestREADMEFairShares(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var user string
		require.NoError(t, readmeFairShares(context.Background(), "u-7", func(ctx context.Context) error {
			user, _ = rxthrottle.TenantFrom(ctx)
			return nil
		}))
		require.Equal(t, "u-7", user)
	})
}
