package httpthrottle

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/rxthrottle/rxthrottle"
)

// gate is the Transport's view of its limiter: one schedule, or one per key.
type gate interface {
	key(req *http.Request) (string, error)
	wait(ctx context.Context, key string) error
	pause(key string, until time.Time)
}

type singleGate struct{ l rxthrottle.Limiter }

func (g singleGate) key(*http.Request) (string, error)        { return "", nil }
func (g singleGate) wait(ctx context.Context, _ string) error { return g.l.Wait(ctx) }
func (g singleGate) pause(_ string, until time.Time)          { g.l.Pause(until) }

type keyedGate struct {
	kl    rxthrottle.KeyedLimiter
	keyOf func(*http.Request) (string, error)
}

func (g keyedGate) key(req *http.Request) (string, error)      { return g.keyOf(req) }
func (g keyedGate) wait(ctx context.Context, key string) error { return g.kl.Wait(ctx, key) }
func (g keyedGate) pause(key string, until time.Time)          { g.kl.Pause(key, until) }

// KeyByHost keys a request by its host as the URL names it, port included
// ("api.example.com", "127.0.0.1:8080"), lower-cased: one quota per server.
// A request without a host is an error.
func KeyByHost(req *http.Request) (string, error) {
	var host string
	if req.URL != nil {
		host = req.URL.Host
	}
	if host == "" {
		host = req.Host
	}
	if host == "" {
		return "", fmt.Errorf("httpthrottle: KeyByHost: request %s %q has no host", req.Method, redactURL(req.URL))
	}
	return strings.ToLower(host), nil
}

// KeyByPathPrefix returns a key function for APIs whose quotas differ by
// endpoint: the key is the host (as KeyByHost) followed by the first n
// segments of the path, so with n = 2 "https://api.example.com/v1/users/42"
// and ".../v1/users?page=2" share the key "api.example.com/v1/users" while
// "/v1/orders" has its own. Paths shorter than n segments use what they
// have, and empty segments ("//") are skipped; n = 0 keys by host alone.
// A negative n makes every request fail with an error that says so.
func KeyByPathPrefix(n int) func(*http.Request) (string, error) {
	return func(req *http.Request) (string, error) {
		if n < 0 {
			return "", fmt.Errorf("httpthrottle: KeyByPathPrefix(%d): the number of segments must not be negative", n)
		}
		host, err := KeyByHost(req)
		if err != nil {
			return "", err
		}
		var b strings.Builder
		b.WriteString(host)
		rest := req.URL.EscapedPath()
		for i := 0; i < n; i++ {
			rest = strings.TrimLeft(rest, "/")
			if rest == "" {
				break
			}
			seg, after, _ := strings.Cut(rest, "/")
			b.WriteByte('/')
			b.WriteString(seg)
			rest = after
		}
		return b.String(), nil
	}
}
