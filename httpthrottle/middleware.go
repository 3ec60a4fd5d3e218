package httpthrottle

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/rxthrottle/rxthrottle/guard"
	"github.com/rxthrottle/rxthrottle/internal/seconds"
)

// Middleware returns HTTP middleware that checks every request against g
// before the wrapped handler runs (see the package documentation for the
// answers it gives). The options are WithKey, WithFailOpen and WithLogger.
// A nil guard or a bad option is an error.
//
// The middleware is safe for concurrent use, as http.Handler requires.
func Middleware(g *guard.Guard, opts ...MiddlewareOption) (func(http.Handler) http.Handler, error) {
	if g == nil {
		return nil, errors.New("httpthrottle: Middleware(nil): a *guard.Guard is required")
	}
	c, err := buildMiddlewareConfig(opts)
	if err != nil {
		return nil, err
	}
	limit := g.Policy().Limit
	policy := strconv.Itoa(limit.N) + ";w=" + strconv.FormatInt(seconds.Ceil(limit.Window), 10)
	return func(next http.Handler) http.Handler {
		if next == nil {
			// Fail loudly on every request rather than panic in
			// ServeHTTP or let requests through unguarded.
			next = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				c.logger.LogAttrs(r.Context(), slog.LevelError, "httpthrottle: Middleware wraps a nil handler")
				writeJSON(w, http.StatusInternalServerError, "Internal server error.")
			})
		}
		return &middlewareHandler{g: g, next: next, cfg: c, policy: policy}
	}, nil
}

// middlewareHandler is the http.Handler that Middleware's middleware
// returns.
type middlewareHandler struct {
	g      *guard.Guard
	next   http.Handler
	cfg    middlewareConfig
	policy string // the RateLimit-Policy value, computed once
}

func (h *middlewareHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key, err := h.cfg.key(r)
	if err != nil || key == "" {
		key, err = KeyByRemoteIP(r)
		if err != nil {
			key = r.RemoteAddr // "": the guard cannot decide
		}
	}
	d, err := h.g.Check(r.Context(), key)
	switch {
	case err == nil:
		h.setQuotaHeaders(w.Header(), d)
		h.next.ServeHTTP(w, r)
	case errors.Is(err, guard.ErrLimited):
		hdr := w.Header()
		h.setQuotaHeaders(hdr, d)
		secs := seconds.Ceil(d.RetryAfter)
		hdr.Set("Retry-After", strconv.FormatInt(secs, 10))
		writeJSON(w, http.StatusTooManyRequests, limitedMessage(secs))
	default:
		h.cfg.logger.LogAttrs(r.Context(), slog.LevelError, "httpthrottle: guard cannot decide",
			slog.String("key", key),
			slog.Bool("fail_open", h.cfg.failOpen),
			slog.String("error", err.Error()),
		)
		if h.cfg.failOpen {
			h.next.ServeHTTP(w, r)
			return
		}
		writeJSON(w, http.StatusServiceUnavailable, "Service unavailable: the rate limiter cannot decide. Try again later.")
	}
}

// setQuotaHeaders sets the RateLimit-* fields of IETF
// draft-ietf-httpapi-ratelimit-headers (up to -06) from d.
func (h *middlewareHandler) setQuotaHeaders(hdr http.Header, d guard.Decision) {
	hdr.Set("RateLimit-Limit", strconv.Itoa(d.Limit.N))
	hdr.Set("RateLimit-Remaining", strconv.Itoa(d.Remaining))
	hdr.Set("RateLimit-Reset", strconv.FormatInt(seconds.Ceil(d.Reset), 10))
	hdr.Set("RateLimit-Policy", h.policy)
}

// limitedMessage is the 429 body's message for a wait of secs seconds.
func limitedMessage(secs int64) string {
	unit := "seconds"
	if secs == 1 {
		unit = "second"
	}
	return fmt.Sprintf("Too many requests: retry in %d %s.", secs, unit)
}

// writeJSON answers with status and the body {"message": msg}.
func writeJSON(w http.ResponseWriter, status int, msg string) {
	body, err := json.Marshal(struct {
		Message string `json:"message"`
	}{msg})
	if err != nil {
		// A struct of one string always marshals; keep a valid body
		// all the same.
		body = []byte(`{"message":"error"}`)
	}
	body = append(body, '\n')
	hdr := w.Header()
	hdr.Set("Content-Type", "application/json; charset=utf-8")
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body) // the client may be gone; nothing to do then
}
