// A user's program of the core module alone: two calls under a quota of
// 5 a second, each holding its token until it is done.
package main

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/rxthrottle/rxthrottle"
)

func main() {
	ctx := context.Background()
	bucket, err := rxthrottle.NewBucket(rxthrottle.Per(5, time.Second))
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
	fmt.Println("root: admitted", bucket.Stats().Admitted)
}
