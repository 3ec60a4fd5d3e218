package httpthrottle

import (
	"net"
	"net/http"
	"net/netip"
)

// KeyFromRemoteIP keys a request by the IP address of the client connection,
// without the port ("192.0.2.7", "2001:db8::1"): the default key of Guard.
// It returns "" when the request has no remote address.
//
// Behind a reverse proxy every request comes from the proxy's address: key by
// a header the proxy sets instead (KeyFromHeader), and only if the proxy
// overwrites whatever value the client sent.
func KeyFromRemoteIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		// No port (a test request, a custom listener): the whole address.
		host = r.RemoteAddr
	}
	if addr, err := netip.ParseAddr(host); err == nil {
		// One key per address however it is spelled: ::ffff:192.0.2.7
		// is 192.0.2.7, and 2001:DB8::0:1 is 2001:db8::1.
		return addr.Unmap().String()
	}
	return host
}

// KeyFromHeader returns a key function that keys a request by the value of
// header name (for example a user ID set by an authenticating proxy), or ""
// when the header is absent, in which case Guard falls back to the remote
// IP. The header must come from a component you trust: a client that may
// set it can pick any key, and escape its quota.
func KeyFromHeader(name string) func(*http.Request) string {
	name = http.CanonicalHeaderKey(name)
	return func(r *http.Request) string { return r.Header.Get(name) }
}

// KeyFromContext returns a key function that keys a request by the string
// stored in its context under ctxKey (for example a user ID that an
// authentication middleware put there), or "" when there is none, in which
// case Guard falls back to the remote IP.
func KeyFromContext(ctxKey any) func(*http.Request) string {
	return func(r *http.Request) string {
		s, _ := r.Context().Value(ctxKey).(string)
		return s
	}
}
