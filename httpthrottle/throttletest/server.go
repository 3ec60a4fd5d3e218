package throttletest

import (
	"net"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/rxthrottle/rxthrottle"
)

// Server is a strict rate-limited HTTP server on a loopback address, for
// tests: an httptest.Server serving a Handler (see the package
// documentation). Its Handler's methods (Log, Stats) are promoted. Build it
// with NewServer and Close it when done.
type Server struct {
	*Handler
	// URL is the base URL of the server, "http://127.0.0.1:port", with no
	// trailing slash.
	URL string

	ts     *httptest.Server
	client *http.Client
}

// NewServer starts a Server enforcing limit, and every limit added with
// WithLimit. It reads every Option. Like httptest.NewServer, it panics if
// it cannot listen on a loopback port; a bad limit or option is an error.
func NewServer(limit rxthrottle.Limit, opts ...Option) (*Server, error) {
	c, err := buildConfig(limit, opts)
	if err != nil {
		return nil, err
	}
	h := newHandler(c)
	ts := httptest.NewUnstartedServer(h)
	if c.fresh {
		ts.Config.SetKeepAlivesEnabled(false)
	}
	ts.Start()
	dialer := &delayDialer{
		Dialer: net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second},
		clock:  c.clock,
		delay:  c.latency,
	}
	transport := &http.Transport{
		DialContext:       dialer.DialContext,
		DisableKeepAlives: c.fresh,
		// Keep a connection for every concurrent caller, so that reused
		// connections are really reused (the default keeps 2 per host).
		MaxIdleConnsPerHost: 1024,
		IdleConnTimeout:     90 * time.Second,
	}
	return &Server{Handler: h, URL: ts.URL, ts: ts, client: &http.Client{Transport: transport}}, nil
}

// Client returns an HTTP client for the server whose connections add the
// latency of WithLatency or WithLatencyFunc to every write, and open a new
// connection for every request with WithFreshConnections. Use its
// Transport as the base of the client under test (for example
// httpthrottle.WithBase(s.Client().Transport)). Close closes its idle
// connections.
func (s *Server) Client() *http.Client { return s.client }

// Close closes the Client's idle connections and shuts the server down,
// blocking until every request it is serving has finished.
func (s *Server) Close() {
	s.client.CloseIdleConnections()
	s.ts.Close()
}
