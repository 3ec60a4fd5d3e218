package httpthrottle

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// KeyFunc names the quota a request counts against: a host, an API path,
// a user, a client address. One type serves both sides of the wire:
//
//   - on the client, NewKeyedTransport takes the request's token under the
//     key; an error means the request is not sent (RoundTrip returns an
//     error that wraps it);
//   - on the server, Middleware (option WithKey) checks the request under
//     the key; an error or an empty key falls back to the client's IP
//     address (KeyByRemoteIP).
//
// The helpers below build the usual ones. A KeyFunc must be safe for
// concurrent use.
type KeyFunc func(r *http.Request) (string, error)

// KeyByHost keys a request by its host as the URL names it, port included
// ("api.example.com", "127.0.0.1:8080"), lower-cased: one quota per server
// (on the client), or per virtual host (on the server, where the Host
// header names it). A request without a host is an error.
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
func KeyByPathPrefix(n int) KeyFunc {
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

// KeyByRemoteIP keys a request by the IP address of the client connection,
// without the port ("192.0.2.7", "2001:db8::1"): the default key of
// Middleware, and its fallback. It serves the server side only (a client's
// request has no remote address). A request without a remote address is an
// error.
//
// Behind a reverse proxy every request comes from the proxy's address: key by
// a header the proxy sets instead (KeyByHeader), and only if the proxy
// overwrites whatever value the client sent.
func KeyByRemoteIP(r *http.Request) (string, error) {
	if r.RemoteAddr == "" {
		return "", errNoRemoteAddr
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		// No port (a test request, a custom listener): the whole address.
		host = r.RemoteAddr
	}
	if addr, err := netip.ParseAddr(host); err == nil {
		// One key per address however it is spelled: ::ffff:192.0.2.7
		// is 192.0.2.7, and 2001:DB8::0:1 is 2001:db8::1.
		return addr.Unmap().String(), nil
	}
	return host, nil
}

var errNoRemoteAddr = errors.New("httpthrottle: KeyByRemoteIP: the request has no remote address")

// KeyByHeader returns a KeyFunc that keys a request by the value of header
// name: a user ID or API token the client sends, or (on the server) one
// set by an authenticating proxy. A request without the header is an error,
// so on the server it falls back to the remote IP. On the server the header
// must come from a component you trust: a client that may set it can pick
// any key, and escape its quota.
func KeyByHeader(name string) KeyFunc {
	canonical := http.CanonicalHeaderKey(name)
	return func(r *http.Request) (string, error) {
		if v := r.Header.Get(canonical); v != "" {
			return v, nil
		}
		return "", fmt.Errorf("httpthrottle: KeyByHeader(%q): the request has no %s header", name, name)
	}
}

// KeyByContext returns a KeyFunc that keys a request by the string stored
// in its context under ctxKey (for example a user ID that an
// authentication middleware, or the caller of the client, put there). A
// request without a non-empty string there is an error, so on the server it
// falls back to the remote IP.
func KeyByContext(ctxKey any) KeyFunc {
	return func(r *http.Request) (string, error) {
		if s, _ := r.Context().Value(ctxKey).(string); s != "" {
			return s, nil
		}
		return "", fmt.Errorf("httpthrottle: KeyByContext(%T): the request's context has no key string", ctxKey)
	}
}
