package redisstore

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
	"github.com/stretchr/testify/require"
)

// newTestBucket starts a server for t and returns a Bucket on it, with the
// server for inspection. Its call timeout is suiteTimeout unless opts give
// one (a later WithTimeout wins): a test of the schedule on a loaded CI
// machine must not fail for a round trip slower than DefaultTimeout's
// 500 ms (TestFairWeights did, at load 11); a test of the timeout gives
// its own.
func newTestBucket(t *testing.T, limit rxthrottle.Limit, opts ...Option) (*Bucket, *redistest.Server) {
	t.Helper()
	srv := redistest.Start(t)
	b, err := NewBucket(srv.Client(t), "test", limit, append([]Option{WithTimeout(suiteTimeout)}, opts...)...)
	require.NoError(t, err)
	return b, srv
}

// reserve runs one admission that reserves whatever the delay, as Wait does,
// without waiting: the "Reserve" of the shared bucket, for tests.
func reserve(t *testing.T, b *Bucket) admission {
	t.Helper()
	return reserveN(t, b, 1, false)
}

// reserveN runs one admission of n tokens, held or not, that reserves
// whatever the delay; it fails the test if the caller is blocked.
func reserveN(t *testing.T, b *Bucket, n int, hold bool) admission {
	t.Helper()
	a, err := b.s.admit(context.Background(), b.keys, request{n: n, hold: hold})
	require.NoError(t, err)
	require.True(t, a.admitted, "%+v", a)
	return a
}

// emissions returns the completion times stored for b (for callers of
// Wait, their departures), oldest first, one a token: done's, and runs'
// (those of leased tokens: a member a run of tokens, its count last in its
// name, lua/runs.lua) as many times as the run has tokens.
func emissions(t *testing.T, srv *redistest.Server, b *Bucket) []int64 {
	t.Helper()
	out := scores(t, srv, b.keys[0])
	v, err := srv.Do("ZRANGE", b.keys[3], 0, -1, "WITHSCORES")
	require.NoError(t, err)
	for _, pair := range v.([]any) {
		p := pair.([]any)
		m := p[0].(string)
		n, err := strconv.Atoi(m[strings.LastIndexByte(m, ':')+1:])
		require.NoError(t, err, "run %q", m)
		for range n {
			out = append(out, int64(p[1].(float64)))
		}
	}
	slices.Sort(out)
	return out
}

// scores returns the scores of the ZSET key, lowest first, without its
// sentinel ("_" or doneSentinel).
func scores(t *testing.T, srv *redistest.Server, key string) []int64 {
	t.Helper()
	v, err := srv.Do("ZRANGE", key, 0, -1, "WITHSCORES")
	require.NoError(t, err)
	out := []int64{}
	for _, pair := range v.([]any) {
		p := pair.([]any) // RESP3: [member, score]
		if p[0] == "_" || p[0] == doneSentinel {
			continue
		}
		out = append(out, int64(p[1].(float64)))
	}
	return out
}

// pttl returns the remaining time to live of key, or a negative value as
// Redis reports it (-2: no such key, -1: no expiry).
func pttl(t *testing.T, srv *redistest.Server, key string) time.Duration {
	t.Helper()
	v, err := srv.Do("PTTL", key)
	require.NoError(t, err)
	return time.Duration(v.(int64)) * time.Millisecond
}

// spec computes SPEC.md's schedule for admissions taken in script order:
// e_i = max(a_i, e_(i-1), pause, max over limits of e_(i-N)+W), in
// microseconds, where a_i is the Redis now the script saw.
func spec(arrivals []int64, pause int64, limits []rxthrottle.Limit) []int64 {
	e := make([]int64, len(arrivals))
	for i, a := range arrivals {
		v := max(a, pause)
		if i > 0 {
			v = max(v, e[i-1])
		}
		for _, l := range limits {
			if i >= l.N {
				v = max(v, e[i-l.N]+micros(l.Window))
			}
		}
		e[i] = v
	}
	return e
}

// maxInWindow returns the largest number of times (sorted) in any half-open
// window [t, t+w).
func maxInWindow(times []int64, w int64) int {
	best, lo := 0, 0
	for hi := range times {
		for times[hi]-times[lo] >= w {
			lo++
		}
		best = max(best, hi-lo+1)
	}
	return best
}

// nextTimer waits until a caller blocks on clk's virtual time, and returns
// its delay; it fails the test if none does within 5 seconds (a caller that
// never waits is a bug, not a reason to hang).
func (c *signalClock) nextTimer(t *testing.T) time.Duration {
	t.Helper()
	select {
	case d := <-c.timers:
		return d
	case <-time.After(5 * time.Second):
		t.Fatal("no caller started to wait on the virtual clock within 5s")
		return 0
	}
}

// recv returns the next error from ch, failing the test after 5 seconds.
func recv(t *testing.T, ch <-chan error) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(5 * time.Second):
		t.Fatal("no result within 5s")
		return nil
	}
}

// nopClient is a client of a port nothing listens on, for tests that never
// reach Redis.
func nopClient(t *testing.T) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// heldSpan is a held token on Redis's clock, in µs: its departure d and
// its completion c (the release, or the lease deadline).
type heldSpan struct{ d, c int64 }

// requireHeldSpansFit checks the server's side of held tokens: whatever
// instant in [d, c] each request reached a server, no window [c, c+W)
// that starts at a completion holds more than N of them, for any limit.
// what names the requests in a failure.
func requireHeldSpansFit(t *testing.T, spans []heldSpan, limits []rxthrottle.Limit, what string) {
	t.Helper()
	for _, l := range limits {
		w := micros(l.Window)
		for _, at := range spans {
			n := 0
			for _, s := range spans {
				if s.d < at.c+w && s.c >= at.c {
					n++
				}
			}
			require.LessOrEqual(t, n, l.N, "%s in [%d, %d+W) under %v", what, at.c, at.c, l)
		}
	}
}
