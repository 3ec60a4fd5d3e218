package redisstore

import (
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// checkTimeout refuses a WithTimeout that the client cannot honour: a
// go-redis client without ContextTimeoutEnabled ignores a context's
// deadline on the socket (see WithTimeout).
func checkTimeout(client redis.Scripter, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	enabled := true
	switch c := client.(type) {
	case *redis.Client:
		enabled = c.Options().ContextTimeoutEnabled
	case *redis.ClusterClient:
		enabled = c.Options().ContextTimeoutEnabled
	case *redis.Ring:
		enabled = c.Options().ContextTimeoutEnabled
	}
	if !enabled {
		return fmt.Errorf("redisstore: WithTimeout(%v) needs a client built with ContextTimeoutEnabled: true: without it go-redis ignores the deadline on the socket, and a stalled server holds each call for the client's ReadTimeout", d)
	}
	return nil
}
