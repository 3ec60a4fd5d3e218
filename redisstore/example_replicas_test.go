package redisstore_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/redisstore"
)

// On a Redis Cluster (or under Sentinel), a caller goes only once a
// replica has its admission, so a failover to that replica keeps it; an
// admission no replica acknowledges within 100ms fails, and the
// FailurePolicy decides (FailClosed: the caller gets an error wrapping
// ErrNotReplicated).
func ExampleWithReplicaAck() {
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:7000"}})
	defer rdb.Close()
	b, err := redisstore.NewBucket(rdb, "api", rxthrottle.Per(100, time.Minute),
		redisstore.WithReplicaAck(1, 100*time.Millisecond))
	fmt.Println(b != nil, err)

	// The wait must fit in the call's timeout (DefaultTimeout, 500ms).
	_, err = redisstore.NewBucket(rdb, "api", rxthrottle.Per(100, time.Minute),
		redisstore.WithReplicaAck(1, time.Second))
	fmt.Println(err)

	var serr error = &redisstore.StoreError{Op: "admit", Key: "rxthrottle:{api}:done", Err: redisstore.ErrNotReplicated}
	fmt.Println(errors.Is(serr, redisstore.ErrNotReplicated), errors.Is(serr, redisstore.ErrStoreUnavailable))
	// Output:
	// true <nil>
	// redisstore: WithReplicaAck(1, 1s): the wait must be shorter than the call timeout, 500ms (WithTimeout, or DefaultTimeout), which bounds the whole call
	// true true
}
