package redistest

// Closing a client for goleak: go-redis's pool dials from goroutines of
// its own (the dial of a connection a caller waits for, the refill of idle
// connections, and tryDial, which redials a server that refused once a
// second until it answers or the pool is closed). They outlive Close by
// up to a second's sleep and a dial: CloseClient waits for them.

import (
	"bytes"
	"context"
	"net"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// dialWatch records the goroutines that go-redis started and that dialed
// for one client (its pools' goroutines; for a cluster client, every
// node's), through the client's Dialer.
type dialWatch struct {
	mu  sync.Mutex
	ids map[uint64]bool
}

// watches are the dialWatch of each client redistest made and has not
// seen closed.
var watches sync.Map // redis.UniversalClient -> *dialWatch

// dialer returns go-redis's default Dialer (redis.NewDialer) for a
// DialTimeout of dialTimeout, recording w's goroutines.
func (w *dialWatch) dialer(dialTimeout time.Duration) func(context.Context, string, string) (net.Conn, error) {
	next := redis.NewDialer(&redis.Options{DialTimeout: dialTimeout})
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if id, ok := goRedisGoroutine(); ok {
			w.mu.Lock()
			if w.ids == nil {
				w.ids = map[uint64]bool{}
			}
			w.ids[id] = true
			w.mu.Unlock()
		}
		return next(ctx, network, addr)
	}
}

// createdByGoRedis is how the stack of a goroutine that go-redis started
// ends.
var createdByGoRedis = []byte("\ncreated by github.com/redis/go-redis/")

// goRedisGoroutine returns the id of the calling goroutine if go-redis
// started it (not a test's goroutine that dials through Get).
func goRedisGoroutine() (uint64, bool) {
	buf := make([]byte, 16<<10)
	stack := buf[:runtime.Stack(buf, false)]
	if !bytes.Contains(stack, createdByGoRedis) {
		return 0, false
	}
	return goroutineID(stack)
}

// goroutineID reads N from a stack's first line, "goroutine N [...".
func goroutineID(stack []byte) (uint64, bool) {
	rest, ok := bytes.CutPrefix(stack, []byte("goroutine "))
	if !ok {
		return 0, false
	}
	n, _, _ := bytes.Cut(rest, []byte(" "))
	id, err := strconv.ParseUint(string(n), 10, 64)
	return id, err == nil
}

// watched registers c, made with w's dialer, and returns it.
func watched[C redis.UniversalClient](c C, w *dialWatch) C {
	watches.Store(redis.UniversalClient(c), w)
	return c
}

// CloseClient closes c, a client of Server.Client, Cluster.Client,
// NewClusterClient, NewFailoverClusterClient or NewFailoverClient, and
// waits until the goroutines its pools started to
// dial have ended: go-redis's tryDial, which redials a stopped server once
// a second, ends only at its next wake-up after Close, and goleak would
// see it. Other clients' goroutines (another test's, running beside) are
// not waited for. It fails the test if they have not ended within 10
// seconds, or if c is not redistest's.
func CloseClient(tb testing.TB, c redis.UniversalClient) {
	tb.Helper()
	v, ok := watches.LoadAndDelete(c)
	if !ok {
		tb.Fatalf("redistest: CloseClient: %T is not a client of redistest's (Server.Client, Cluster.Client, NewClusterClient, NewFailoverClusterClient, NewFailoverClient), or was closed already", c)
	}
	w := v.(*dialWatch)
	_ = c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		left := w.alive()
		if left == "" {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("redistest: CloseClient: the client's pool goroutines still run 10s after Close:\n%s", left)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// alive returns the stacks of w's goroutines still running, and of those
// go-redis started from them (a tryDial started by a failed dial, which
// returns before it dials once the pool is closed); "" if none is.
func (w *dialWatch) alive() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out bytes.Buffer
	for g := range bytes.SplitSeq(buf, []byte("\n\n")) {
		id, ok := goroutineID(g)
		if ok && (w.ids[id] || w.ids[creator(g)]) {
			out.Write(g)
			out.WriteString("\n\n")
		}
	}
	return out.String()
}

// creator returns the id of the goroutine that started g, a goroutine
// go-redis started ("created by ... in goroutine N"), or 0.
func creator(g []byte) uint64 {
	i := bytes.Index(g, createdByGoRedis)
	if i < 0 {
		return 0
	}
	line, _, _ := bytes.Cut(g[i+1:], []byte("\n"))
	_, n, ok := bytes.Cut(line, []byte(" in goroutine "))
	if !ok {
		return 0
	}
	id, _ := strconv.ParseUint(string(n), 10, 64)
	return id
}
