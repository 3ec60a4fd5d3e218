package bench

import (
	"context"
	"testing"
	"time"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/redisstore"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
)

// BenchmarkReplicaAck is the cost of redisstore.WithReplicaAck: Wait on a
// master with one replica on loopback, without the option (Redis
// replicates after the reply) and with WithReplicaAck(1, 100ms) (the script
// and WAIT 1 in one pipeline: the caller goes once the replica has its
// admission). Neither ever waits for a token.
func BenchmarkReplicaAck(b *testing.B) {
	srv := redistest.Start(b)
	redistest.StartReplica(b, srv)
	rdb := srv.Client(b)
	ctx := context.Background()
	limit := rxthrottle.Per(1<<30, time.Millisecond)
	for _, c := range []struct {
		impl string
		opts []redisstore.Option
	}{
		{"async", nil},
		{"WithReplicaAck", []redisstore.Option{redisstore.WithReplicaAck(1, 100*time.Millisecond)}},
	} {
		b.Run("impl="+c.impl, func(b *testing.B) {
			bk, err := redisstore.NewBucket(rdb, "bench-ack-"+c.impl, limit, c.opts...)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := bk.Wait(ctx); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
