package throttletest

import (
	"errors"
	"net/http"
	"net/http/httptest"
)

// RoundTrip serves req in-process, without a network, as if it had come
// through a connection: after the injected latency (WithLatency,
// WithLatencyFunc, measured on the Handler's clock), ServeHTTP runs on a
// recorder and its response is returned. It lets a Handler be the base
// RoundTripper of a client under testing/synctest, where loopback sockets
// would keep the bubble's clock from moving. A context that ends during the
// latency returns its error and the request never arrives. Like every
// RoundTripper it closes req.Body.
func (h *Handler) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		defer req.Body.Close()
	}
	ctx := req.Context()
	if h.latency != nil {
		if d := h.latency(); d > 0 {
			timer := h.clock.Timer(d)
			select {
			case <-timer.C:
			case <-ctx.Done():
				timer.Stop()
				return nil, ctx.Err()
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	in := req.Clone(ctx)
	in.RequestURI = req.URL.RequestURI()
	if in.RemoteAddr == "" {
		in.RemoteAddr = "192.0.2.1:1234" // as httptest.NewRequest
	}
	if in.Body == nil {
		in.Body = http.NoBody
	}
	rec := httptest.NewRecorder()
	if dropped := h.serveRecorded(rec, in); dropped {
		return nil, ErrDropped
	}
	resp := rec.Result()
	resp.Request = req
	return resp, nil
}

// ErrDropped is the error of Handler.RoundTrip for a request the Handler
// counted and then dropped (WithDropFunc, WithDropRate).
var ErrDropped = errors.New("throttletest: connection dropped after the request arrived")

// serveRecorded serves in on rec and reports whether the Handler dropped it.
func (h *Handler) serveRecorded(rec http.ResponseWriter, in *http.Request) (dropped bool) {
	defer func() {
		if p := recover(); p != nil {
			if p != http.ErrAbortHandler {
				panic(p)
			}
			dropped = true
		}
	}()
	h.ServeHTTP(rec, in)
	return false
}
