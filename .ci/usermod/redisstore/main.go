// A user's program of redisstore: two calls under a quota kept in the
// Redis server at REDIS_URL (the CI script starts one).
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/redisstore"
)

func main() {
	ctx := context.Background()
	opts, err := redis.ParseURL(os.Getenv("REDIS_URL"))
	if err != nil {
		log.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	bucket, err := redisstore.NewBucket(rdb, "usermod", rxthrottle.Per(5, time.Second))
	if err != nil {
		log.Fatal(err)
	}
	for range 2 {
		token, err := bucket.Acquire(ctx)
		if err != nil {
			log.Fatal(err)
		}
		token.Release()
	}
	fmt.Println("redisstore: admitted", bucket.Stats().Admitted)
}
