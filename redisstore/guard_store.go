package redisstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rxthrottle/rxthrottle/guard"
)

// GuardStore is a guard.Store kept in Redis, so that several servers
// enforce one guard.Policy together: a key's fixed window and cool-down are
// shared by every process using the same prefix. Each Hit is one atomic Lua
// script (see guard.Store for the rules), decided on Redis's clock by
// default, so that clock skew between servers cannot stretch or shrink a
// window; WithCallerTime makes it decide at the Guard's now instead. A key's
// state expires in Redis when its window or block ends.
//
// Hit returns a *StoreError wrapping ErrStoreUnavailable when Redis fails;
// the Guard reports it, and its caller chooses to fail open or closed (the
// FailurePolicy option does not apply here). GuardStore is safe for
// concurrent use. Build it with NewGuardStore.
type GuardStore struct {
	client     redis.Scripter
	prefix     string
	timeout    time.Duration
	callerTime bool
	onError    func(error)
}

var _ guard.Store = (*GuardStore)(nil)

// NewGuardStore returns the GuardStore whose keys live under prefix on
// client. Guards that share a prefix share their keys' states, so give each
// Guard its own prefix.
//
// It reads the options WithTimeout, WithCallerTime and OnError. It returns an
// error for a nil client, an empty prefix or one containing '{' or '}', or a
// bad option or one it does not read. It does not contact Redis.
func NewGuardStore(client redis.Scripter, prefix string, opts ...Option) (*GuardStore, error) {
	if isNil(client) {
		return nil, errors.New("redisstore: nil Redis client")
	}
	if err := checkName("key prefix", prefix); err != nil {
		return nil, err
	}
	cfg, err := buildConfig("NewGuardStore", guardReads, opts)
	if err != nil {
		return nil, err
	}
	if err := checkTimeout(client, cfg.timeout); err != nil {
		return nil, err
	}
	return &GuardStore{
		client:     client,
		prefix:     prefix,
		timeout:    cfg.timeout,
		callerTime: cfg.callerTime,
		onError:    cfg.onError,
	}, nil
}

// Key returns the Redis key that holds key's state, a HASH.
func (s *GuardStore) Key(key string) string {
	return keyPrefix + keyedTag(s.prefix, key) + suffixGuard
}

// Hit records one request of key under p and returns the decision, as
// guard.Store specifies. now is used only with WithCallerTime; otherwise the
// decision is taken at Redis's now. An empty key or an invalid policy is an
// error; so is a failed call to Redis (a *StoreError).
func (s *GuardStore) Hit(ctx context.Context, key string, p guard.Policy, now time.Time) (guard.Result, error) {
	if ctx == nil {
		return guard.Result{}, errNilContext
	}
	if key == "" {
		return guard.Result{}, errors.New("redisstore: GuardStore.Hit: empty key")
	}
	if err := p.Validate(); err != nil {
		return guard.Result{}, fmt.Errorf("redisstore: GuardStore.Hit: %w", err)
	}
	args := make([]any, 5, 7)
	args[0] = int64(p.Limit.N)
	args[1], args[2] = split(p.Limit.Window)
	args[3], args[4] = split(p.Block)
	if s.callerTime {
		args = append(args, now.Unix(), int64(now.Nanosecond()))
	}
	rkey := s.Key(key)
	if s.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.timeout)
		defer cancel()
	}
	v, err := guardScript.Run(ctx, s.client, []string{rkey}, args...).Result()
	if err == nil {
		var r guard.Result
		if r, err = guardResult(v); err == nil {
			return r, nil
		}
	}
	serr := &StoreError{Op: "guard hit", Key: rkey, Err: err}
	if s.onError != nil {
		s.onError(serr)
	}
	return guard.Result{}, serr
}

// split returns d as whole seconds and the nanoseconds left over, the
// script's representation of times.
func split(d time.Duration) (sec, nsec int64) {
	return int64(d / time.Second), int64(d % time.Second)
}

// guardResult decodes guardScript's reply.
func guardResult(v any) (guard.Result, error) {
	r, ok := v.([]any)
	if !ok || len(r) != 5 {
		return guard.Result{}, fmt.Errorf("malformed reply %v from the guard script", v)
	}
	var n [5]int64
	for i := range n {
		if n[i], ok = r[i].(int64); !ok {
			return guard.Result{}, fmt.Errorf("malformed reply %v from the guard script", v)
		}
	}
	return guard.Result{
		Allowed: n[0] == 1,
		Blocked: n[1] == 1,
		Count:   int(n[2]),
		Reset:   resetOf(n[3], n[4]),
	}, nil
}

// resetOf is the time left until a key's end, given as s seconds and ns
// nanoseconds by guardScript, clamped to [0, the longest Duration]. The end
// is stored in the key's hash, where any client of the Redis can write
// one the script does not (an end 300 years ahead, ns out of 0..1e9):
// s*time.Second then wrapped around int64, telling the guard to retry in
// the past.
func resetOf(s, ns int64) time.Duration {
	const g = int64(time.Second)
	q, r := ns/g, ns%g
	if r < 0 {
		q, r = q-1, r+g
	}
	// Beyond ±2^40 s no q (|ns/g| < 2^34) brings the sum back in range,
	// and within them s+q cannot overflow.
	switch {
	case s > 1<<40:
		return math.MaxInt64
	case s < -(1 << 40):
		return 0
	}
	switch s += q; {
	case s < 0:
		return 0
	case s > (math.MaxInt64-r)/g:
		return math.MaxInt64
	}
	return time.Duration(s*g + r)
}
