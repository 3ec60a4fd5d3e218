package redistest

import (
	"os"
	"testing"

	"github.com/redis/go-redis/v9"
)

// ClusterEnv is the environment variable that runs every test's server as
// a Cluster: with RXTHROTTLE_REDIS_CLUSTER=1, Start, StartWith and
// StartPersistent start three masters with a replica each, and the
// Server they return stands for the whole cluster (Client is a cluster
// client, Do runs a command where its key lives, Stop, Start and Signal
// act on every node). CI runs redisstore's tests a second time so.
const ClusterEnv = "RXTHROTTLE_REDIS_CLUSTER"

// ClusterMode reports whether ClusterEnv asks for a Cluster.
func ClusterMode() bool { return os.Getenv(ClusterEnv) == "1" }

// startAsCluster is StartWith in cluster mode: a Server that stands for a
// Cluster started with opts.
func startAsCluster(tb testing.TB, opts ClusterOptions) *Server {
	tb.Helper()
	return &Server{tb: tb, c: StartReplicatedCluster(tb, opts)}
}

// Dial returns a client of the server at addr (a Server's Addr) as the
// tests run it, for a child process handed the address: a cluster client
// in cluster mode, a plain client otherwise, with context deadlines
// bounding socket I/O. The caller closes it.
func Dial(addr string) redis.UniversalClient {
	if ClusterMode() {
		return NewClusterClient(addr)
	}
	return redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
}
