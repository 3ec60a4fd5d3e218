package example

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"time"
)

// Serve starts an HTTP server for handler and returns the RoundTripper and
// base URL that reach it, and a function that stops it. The examples take
// one in their config: Loopback when they run, InMemory in their tests on
// virtual time.
type Serve func(handler http.Handler) (base http.RoundTripper, url string, stop func(), err error)

// Loopback returns a Serve that starts a real HTTP server on a free port of
// 127.0.0.1, with a Transport of its own for the clients (no proxy, so
// nothing in the environment can send the example's traffic elsewhere). Its
// errors start with name, the program's name.
func Loopback(name string) Serve {
	return func(handler http.Handler) (http.RoundTripper, string, func(), error) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, "", nil, fmt.Errorf("%s: listening on 127.0.0.1: %w", name, err)
		}
		srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
		served := make(chan struct{})
		go func() {
			defer close(served)
			_ = srv.Serve(ln) // returns http.ErrServerClosed once stop closes it
		}()
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.Proxy = nil
		stop := func() {
			tr.CloseIdleConnections()
			_ = srv.Close()
			<-served
		}
		return tr, "http://" + ln.Addr().String(), stop, nil
	}
}

// InMemory returns a Serve for tests that calls the handler directly,
// without a socket, with url as the server's base URL: both sides of the
// wire then run in one testing/synctest bubble, where time is virtual,
// latency is zero and every figure is exact (a socket would keep the bubble
// from ever being idle). Requests come from RemoteAddr 192.0.2.1:1234 (an
// address reserved for documentation).
func InMemory(url string) Serve {
	return func(h http.Handler) (http.RoundTripper, string, func(), error) {
		rt := RoundTripFunc(func(r *http.Request) (*http.Response, error) {
			in := r.Clone(r.Context())
			in.RemoteAddr = "192.0.2.1:1234"
			in.RequestURI = r.URL.RequestURI()
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, in)
			resp := rec.Result()
			resp.Request = r
			return resp, nil
		})
		return rt, url, func() {}, nil
	}
}

// RoundTripFunc is an http.RoundTripper made of a function.
type RoundTripFunc func(*http.Request) (*http.Response, error)

// RoundTrip calls f(r).
func (f RoundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
