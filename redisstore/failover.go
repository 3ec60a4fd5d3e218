package redisstore

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"
)

// reloadSlots asks a cluster client to reload its map of the slots after
// a script failed with err: a master that died gives connection errors,
// never a MOVED, and go-redis (v9.23) reloads the map on a MOVED, after
// its retries reach another node (which a short call timeout never lets
// them do), or every ClusterStateReloadInterval (60s by default). Without
// it a process kept calling the dead master for up to a minute after its
// replica took over; with it, it is back as soon as the cluster is (the
// failover suite, failover_test.go). The reload runs in the background,
// at most once per 200ms (go-redis's LazyReload).
func (s *schedule) reloadSlots(err error) {
	cc, ok := s.client.(*redis.ClusterClient)
	if !ok || errors.Is(err, ErrNotReplicated) || errors.Is(err, context.Canceled) {
		return
	}
	cc.ReloadState(context.Background())
}
