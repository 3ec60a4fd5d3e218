package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrEvictionPolicy is wrapped by the error that reports a Redis server
// which may evict a limiter's keys: its maxmemory-policy is one of the
// allkeys-* or volatile-* policies (the limiters' keys carry expiries, so
// volatile-* policies may pick them too) and maxmemory is set. An evicted
// schedule forgets its admissions, and the next callers get a whole new
// quota. Set maxmemory-policy to noeviction on a Redis that keeps quotas
// (writes then fail when memory is full, and the FailurePolicy applies).
var ErrEvictionPolicy = errors.New("the server may evict the limiter's keys")

// checkTimeoutDefault bounds the configuration check when WithTimeout
// leaves no timeout of our own.
const checkTimeoutDefault = time.Second

// evictionCheck is the once-per-limiter check of the server's eviction
// policy: done once the server answered (or refused CONFIG).
type evictionCheck struct {
	done atomic.Bool
	mu   sync.Mutex // held by the caller that runs the check
}

// checkEviction runs CheckServer once, on the first call that Redis
// answers, and reports a policy that may evict the limiter's keys to
// OnError (wrapping ErrEvictionPolicy). A server that refuses CONFIG (many
// managed services rename or forbid it) is not reported: nothing can be
// known. If the check itself fails (Redis went away), a later call tries
// again. Callers that arrive while the check runs do not wait for it.
func (s *schedule) checkEviction(key string) {
	if !s.evict.mu.TryLock() {
		return
	}
	defer s.evict.mu.Unlock()
	if s.evict.done.Load() {
		return
	}
	d := s.timeout
	if d <= 0 {
		d = checkTimeoutDefault
	}
	err := s.bounded(context.Background(), d, func(ctx context.Context) error { return CheckServer(ctx, s.client) })
	var cerr *configError
	switch {
	case err == nil, errors.As(err, &cerr) && cerr.refused:
	case errors.Is(err, ErrEvictionPolicy):
		s.report(err)
	default:
		return // the check did not get an answer: try again later
	}
	s.evict.done.Store(true)
}

// CheckServer asks the Redis server behind client (CONFIG GET maxmemory*)
// whether it may evict a limiter's keys, and returns an error wrapping
// ErrEvictionPolicy if it may, or nil. Every Bucket and Keyed limiter runs
// it once, on its first call that Redis answers, and reports such a
// policy to OnError (it keeps working: refusing service because of a
// setting would turn a risk into an outage); call CheckServer at start-up
// to refuse to run on such a server instead.
//
// It returns an error (not wrapping ErrEvictionPolicy) if the server
// cannot be asked: a client that is not a *redis.Client, *redis.ClusterClient
// or *redis.Ring (or otherwise lacks ConfigGet), a failed call, or a
// server that refuses CONFIG. On a cluster or a ring, the answer is that of
// the node that serves the command.
func CheckServer(ctx context.Context, client redis.Scripter) error {
	cg, ok := client.(interface {
		ConfigGet(ctx context.Context, parameter string) *redis.MapStringStringCmd
	})
	if !ok || isNil(client) {
		return &configError{refused: true, err: fmt.Errorf("client %T cannot run CONFIG GET", client)}
	}
	cfg, err := cg.ConfigGet(ctx, "maxmemory*").Result()
	if err != nil {
		var rerr redis.Error
		return &configError{refused: errors.As(err, &rerr), err: err}
	}
	policy, maxmem := cfg["maxmemory-policy"], cfg["maxmemory"]
	if policy == "" {
		return &configError{refused: true, err: errors.New("CONFIG GET maxmemory* gave no maxmemory-policy")}
	}
	evicts := strings.HasPrefix(policy, "allkeys-") || strings.HasPrefix(policy, "volatile-")
	if !evicts || maxmem == "" || maxmem == "0" {
		return nil
	}
	return fmt.Errorf("redisstore: %w: maxmemory-policy is %s with maxmemory %s: under memory pressure Redis may drop a schedule, and its next callers get a whole new quota; use maxmemory-policy noeviction", ErrEvictionPolicy, policy, maxmem)
}

// configError is a CONFIG GET that did not say anything about eviction;
// refused: the server (or the client) will never answer it.
type configError struct {
	refused bool
	err     error
}

func (e *configError) Error() string {
	return "redisstore: cannot check the server's eviction policy: " + e.err.Error()
}

func (e *configError) Unwrap() error { return e.err }
