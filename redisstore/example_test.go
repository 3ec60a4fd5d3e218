package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/redisstore"
)

// Every replica of a service builds the same Bucket: together they make at
// most 5 calls per second and 100 per minute to the API. rxthrottle's
// options and this package's mix in one list: the in-memory
// rxthrottle.NewBucket(limit, same options but redisstore's) is the same
// limiter in one process.
func ExampleNewBucket() {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()
	b, err := redisstore.NewBucket(rdb, "github-api",
		rxthrottle.Per(5, time.Second),
		rxthrottle.WithLimit(rxthrottle.Per(100, time.Minute)),
		rxthrottle.OnAdmit(func(ev rxthrottle.Event) { slog.Debug("admitted", "wait", ev.Wait) }),
		redisstore.WithFailurePolicy(redisstore.FallbackLocal),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(b.Keys())
	// Output: [rxthrottle:{github-api}:done rxthrottle:{github-api}:held rxthrottle:{github-api}:state rxthrottle:{github-api}:runs]
}

// Bad input is an error that says what is wrong, before any call to Redis.
func ExampleNewBucket_errors() {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()
	_, err := redisstore.NewBucket(nil, "api", rxthrottle.Per(5, time.Second))
	fmt.Println(err)
	_, err = redisstore.NewBucket(rdb, "", rxthrottle.Per(5, time.Second))
	fmt.Println(err)
	_, err = redisstore.NewBucket(rdb, "api", rxthrottle.Per(0, time.Second))
	fmt.Println(errors.Is(err, rxthrottle.ErrInvalidLimit), err)
	// Output:
	// redisstore: nil Redis client
	// redisstore: empty bucket name: it names the Redis keys of the limiter
	// true redisstore: limit #1 (0 per 1s): N must be at least 1: invalid limit
}

// When Redis is down, the default policy (FailClosed) returns an error that
// names the key and wraps both ErrStoreUnavailable and the client's error.
func ExampleFailClosed() {
	// Nothing listens on port 1: every call is refused at once.
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialerRetries: 1})
	defer rdb.Close()
	var failures int
	b, err := redisstore.NewBucket(rdb, "api", rxthrottle.Per(5, time.Second),
		redisstore.OnError(func(error) { failures++ }))
	if err != nil {
		fmt.Println(err)
		return
	}
	err = b.Wait(context.Background())
	var serr *redisstore.StoreError
	fmt.Println(errors.Is(err, redisstore.ErrStoreUnavailable), errors.As(err, &serr))
	fmt.Println(serr.Op, serr.Key, failures)
	// Output:
	// true true
	// admit rxthrottle:{api}:done 1
}

// A Keyed limiter gives every user their own shared quota.
func ExampleNewKeyed() {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()
	k, err := redisstore.NewKeyed(rdb, "users", rxthrottle.Per(10, time.Minute))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(k.Keys("alice"))
	// Output: [rxthrottle:{users:alice}:done rxthrottle:{users:alice}:held rxthrottle:{users:alice}:state]
}

// A Bucket with leases hands most admissions to its callers from a block
// of tokens leased from Redis, without a round trip each (see the package
// doc, "Leases"). Close gives back what is left; options a lease cannot
// keep are refused.
func ExampleWithLease() {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()
	b, err := redisstore.NewBucket(rdb, "search-api", rxthrottle.Per(1000, time.Second), redisstore.WithLease(0))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer b.Close()
	fmt.Println(b.Leased())
	_, err = redisstore.NewBucket(rdb, "search-api", rxthrottle.Per(1000, time.Second),
		redisstore.WithLease(0), rxthrottle.WithSpacing(time.Millisecond))
	fmt.Println(err)
	// Output:
	// 0
	// redisstore: WithLease with WithSpacing(1ms): leased tokens go at once, they cannot keep a spacing
}
