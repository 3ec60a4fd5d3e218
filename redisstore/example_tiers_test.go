package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/redisstore"
)

// Paid users get 100 calls a minute, the others the limiter's 10: every
// replica builds the same Keyed limiter, and each user's schedule records
// the limits it runs under, so replicas that disagree still run one
// schedule per user. (The admissions need a Redis, which examples run
// without: this one shows the tiers' construction and a bad tier, the
// caller's error before any call to Redis.)
func ExampleNewKeyed_keyLimits() {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()
	tiers := func(user string) []rxthrottle.Limit {
		switch {
		case strings.HasPrefix(user, "paid:"):
			return []rxthrottle.Limit{rxthrottle.Per(100, time.Minute)}
		case user == "misconfigured":
			return []rxthrottle.Limit{rxthrottle.Per(0, time.Minute)}
		}
		return nil // the limiter's limits
	}
	k, err := redisstore.NewKeyed(rdb, "users", rxthrottle.Per(10, time.Minute), rxthrottle.WithKeyLimits(tiers))
	if err != nil {
		fmt.Println(err)
		return
	}
	err = k.Wait(context.Background(), "misconfigured")
	fmt.Println(errors.Is(err, rxthrottle.ErrInvalidLimit), err)
	// Output: true redisstore: WithKeyLimits: key "misconfigured": limit #1 (0 per 1m0s): N must be at least 1: invalid limit
}
