package redisstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrNotReplicated is wrapped by the error of an admission that fewer
// replicas acknowledged than WithReplicaAck asks for: Redis made it, but a
// failover could lose it. It comes inside a *StoreError (so it also wraps
// ErrStoreUnavailable), and the FailurePolicy decides what the caller does.
var ErrNotReplicated = errors.New("redisstore: the admission did not reach enough replicas")

// WithReplicaAck makes every admission wait, after the script, until n
// replicas of the master that ran it have it (Redis's WAIT n timeout, on
// the script's own connection), at most timeout. An admission that fewer
// replicas acknowledge in time is not used: the call fails with a
// *StoreError wrapping ErrNotReplicated, for the FailurePolicy to decide
// (FailClosed refuses the caller; the token stays counted in Redis,
// wasted, never given twice).
//
// Without it Redis replicates asynchronously: a master that dies may take
// its newest admissions with it, and the replica that takes over admits
// again in their place (see the package doc, "Redis Cluster and
// failover", for what that does to the window, measured). With it, an
// admission a caller goes on is on n replicas, so a failover to one of
// them keeps it. Releases, cancellations and pauses are not waited for:
// a release lost keeps its token held until its lease ends (stricter),
// a cancellation lost wastes a token, a pause lost ends the pause early.
//
// It costs a round trip from the master to its replicas per admission
// (measured in BENCHMARKS.md) and needs a *redis.Client (a plain or a
// Sentinel failover client) or a *redis.ClusterClient; NewBucket and
// NewKeyed refuse n < 1, a timeout under 1ms, a timeout not below the
// call timeout (WithTimeout, or DefaultTimeout), and another client. The client's ReadTimeout (3s by
// default) must be longer than timeout too. WAIT does not make Redis strongly consistent (a
// replica acknowledging is not a replica on disk, and Redis may still
// promote a replica that lacks the write); it bounds the loss to what the
// acknowledging replicas themselves lose.
func WithReplicaAck(n int, timeout time.Duration) Option {
	return newOption("WithReplicaAck", replicaAckOption{n: n, timeout: timeout})
}

type replicaAckOption struct {
	n       int
	timeout time.Duration
}

func (o replicaAckOption) apply(c *config) { c.replicaAck = o }

// check validates the option against the client and the call timeout.
func (o replicaAckOption) check(client redis.Scripter, callTimeout time.Duration) error {
	if o == (replicaAckOption{}) {
		return nil
	}
	switch {
	case o.n < 1:
		return fmt.Errorf("redisstore: WithReplicaAck(%d, %v): want at least 1 replica", o.n, o.timeout)
	case o.timeout <= 0 || o.timeout.Milliseconds() < 1:
		return fmt.Errorf("redisstore: WithReplicaAck(%d, %v): want a timeout of 1ms or more (WAIT 0 would wait forever)", o.n, o.timeout)
	case callTimeout > 0 && o.timeout >= callTimeout:
		return fmt.Errorf("redisstore: WithReplicaAck(%d, %v): the wait must be shorter than the call timeout, %v (WithTimeout, or DefaultTimeout), which bounds the whole call", o.n, o.timeout, callTimeout)
	}
	switch client.(type) {
	case *redis.Client, *redis.ClusterClient:
		return nil
	}
	return fmt.Errorf("redisstore: WithReplicaAck(%d, %v) needs a *redis.Client or a *redis.ClusterClient, not a %T", o.n, o.timeout, client)
}

// runScript runs script on keys with args and returns its reply: through
// go-redis's Script.Run (EVALSHA, then EVAL if Redis does not know the
// script), or, for an admission under WithReplicaAck, followed by WAIT on
// the same connection. After a failure, a cluster client reloads its map
// of the slots (reloadSlots).
func (s *schedule) runScript(ctx context.Context, script *redis.Script, keys []string, args []any) (any, error) {
	var v any
	var err error
	if s.ack.n == 0 || script != batchScript {
		v, err = script.Run(ctx, s.client, keys, args...).Result()
	} else {
		v, err = s.runAcked(ctx, script, keys, args)
	}
	if err != nil {
		s.reloadSlots(err)
	}
	return v, err
}

// runAcked runs script then WAIT in one pipeline on the connection of the
// master that serves keys: WAIT counts the replicas that have every write
// made on its own connection, so it must follow the script there.
func (s *schedule) runAcked(ctx context.Context, script *redis.Script, keys []string, args []any) (any, error) {
	node, plain := s.client.(*redis.Client)
	if !plain {
		var err error
		if node, err = s.client.(*redis.ClusterClient).MasterForKey(ctx, keys[0]); err != nil {
			return nil, err
		}
	}
	v, acked, err := pipeAcked(ctx, node, script, keys, args, s.ack, false)
	if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
		v, acked, err = pipeAcked(ctx, node, script, keys, args, s.ack, true)
	}
	switch {
	case err != nil:
		return nil, err
	case acked < int64(s.ack.n):
		return nil, fmt.Errorf("%w: WAIT %d %d: %d acknowledged", ErrNotReplicated, s.ack.n, s.ack.timeout.Milliseconds(), acked)
	}
	return v, nil
}

// pipeAcked sends EVALSHA (EVAL if full) and WAIT in one pipeline on node.
func pipeAcked(ctx context.Context, node *redis.Client, script *redis.Script, keys []string, args []any, ack replicaAckOption, full bool) (any, int64, error) {
	pipe := node.Pipeline()
	var run *redis.Cmd
	if full {
		run = script.Eval(ctx, pipe, keys, args...)
	} else {
		run = script.EvalSha(ctx, pipe, keys, args...)
	}
	wait := pipe.Do(ctx, "wait", ack.n, ack.timeout.Milliseconds())
	_, _ = pipe.Exec(ctx)
	if err := run.Err(); err != nil {
		return nil, 0, err
	}
	acked, err := wait.Int64()
	if err != nil {
		return nil, 0, err
	}
	return run.Val(), acked, nil
}
