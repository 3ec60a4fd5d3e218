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

// KeyByRemoteIP keys a request by the client connection's address, without
// the port: an IPv4 address by itself ("192.0.2.7"), an IPv6 address by
// its /64 network ("2001:db8:1:2::/64"). It is the default key of
// Middleware, and its fallback. It serves the server side only (a client's
// request has no remote address). A request without a remote address is an
// error; one that is not an IP address (a custom listener) is keyed as it
// is.
//
// A /64 is the smallest block an IPv6 network gives one subscriber (RFC
// 6177 recommends /48 to /64 per site; SLAAC hosts pick their own
// addresses in a /64, and privacy extensions change them every few hours):
// a client holds all 2^64 addresses of its /64 and could rotate through
// them to get a fresh quota with each request if every address had a key
// of its own. KeyByRemotePrefix sets other prefix lengths (a /56 or /48
// per site, or /24 per IPv4 network). It is KeyByRemotePrefix(32, 64).
//
// Behind a reverse proxy every request comes from the proxy's address: key by
// a header the proxy sets instead (KeyByHeader), and only if the proxy
// overwrites whatever value the client sent.
func KeyByRemoteIP(r *http.Request) (string, error) { return remotePrefix(r, 32, 64) }

// KeyByRemotePrefix returns a KeyFunc that keys a request by the network of
// the client connection's address: its first v4Bits bits for IPv4 (32: the
// address itself, "192.0.2.7"; 24: "192.0.2.0/24") and its first v6Bits
// bits for IPv6 (128: the address itself; 64: "2001:db8:1:2::/64"; 48:
// "2001:db8:1::/48"). All the addresses of a network share one key, so one
// quota: a client cannot escape its quota by changing addresses within it,
// and neither can its neighbours in the network. An IPv4 address mapped
// into IPv6 (::ffff:192.0.2.7) is IPv4, and an IPv6 zone ("%eth0") is
// ignored. A length out of range (0-32, 0-128) is an error.
func KeyByRemotePrefix(v4Bits, v6Bits int) (KeyFunc, error) {
	if v4Bits < 0 || v4Bits > 32 || v6Bits < 0 || v6Bits > 128 {
		return nil, fmt.Errorf("httpthrottle: KeyByRemotePrefix(%d, %d): the lengths must be 0 to 32 for IPv4 and 0 to 128 for IPv6", v4Bits, v6Bits)
	}
	return func(r *http.Request) (string, error) { return remotePrefix(r, v4Bits, v6Bits) }, nil
}

// remotePrefix is the key of r's remote address: its network of v4Bits or
// v6Bits bits, or the address itself when that is all of it.
func remotePrefix(r *http.Request, v4Bits, v6Bits int) (string, error) {
	if r.RemoteAddr == "" {
		return "", errNoRemoteAddr
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		// No port (a test request, a custom listener): the whole address.
		host = r.RemoteAddr
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return host, nil
	}
	// One key per address however it is spelled: ::ffff:192.0.2.7 is
	// 192.0.2.7, and 2001:DB8::0:1 is 2001:db8::1.
	addr = addr.Unmap().WithZone("")
	bits := v6Bits
	if addr.Is4() {
		bits = v4Bits
	}
	if bits == addr.BitLen() {
		return addr.String(), nil
	}
	prefix, err := addr.Prefix(bits)
	if err != nil { // cannot happen: bits is within the address's length
		return "", fmt.Errorf("httpthrottle: the /%d network of %s: %w", bits, addr, err)
	}
	return prefix.String(), nil
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
