package httpthrottle

import (
	"errors"
	"log/slog"
)

// MiddlewareOption configures the middleware that Middleware returns.
type MiddlewareOption interface {
	applyMiddleware(*middlewareConfig)
}

// middlewareConfig holds every MiddlewareOption's value;
// buildMiddlewareConfig sets the defaults and checks them.
type middlewareConfig struct {
	key       KeyFunc
	keySet    bool
	failOpen  bool
	logger    *slog.Logger
	loggerSet bool
}

func buildMiddlewareConfig(opts []MiddlewareOption) (middlewareConfig, error) {
	var c middlewareConfig
	for _, o := range opts {
		if o == nil {
			return c, errors.New("httpthrottle: Middleware: nil MiddlewareOption")
		}
		o.applyMiddleware(&c)
	}
	switch {
	case c.keySet && c.key == nil:
		return c, errors.New("httpthrottle: WithKey(nil): a key function is required")
	case c.loggerSet && c.logger == nil:
		return c, errors.New("httpthrottle: WithLogger(nil): a logger is required (use slog.New(slog.DiscardHandler) to log nothing)")
	}
	if !c.keySet {
		c.key = KeyByRemoteIP
	}
	if !c.loggerSet {
		c.logger = slog.Default()
	}
	return c, nil
}

type keyOption struct{ f KeyFunc }

func (o keyOption) applyMiddleware(c *middlewareConfig) { c.key, c.keySet = o.f, true }

// WithKey sets the function that names a request's key: a user ID, an API
// token, a client address (KeyByHeader, KeyByContext, KeyByRemoteIP or your
// own). When it fails or returns "", the request is keyed by its remote IP
// (KeyByRemoteIP), which is also the default key function. A nil function
// is an error.
func WithKey(f KeyFunc) MiddlewareOption { return keyOption{f} }

type failOpenOption struct{ open bool }

func (o failOpenOption) applyMiddleware(c *middlewareConfig) { c.failOpen = o.open }

// WithFailOpen decides what happens when the guard cannot decide (its
// store fails, a memory store is full, no key can be found): with false, the
// default, the request is answered 503 Service Unavailable; with true, it
// goes on to the handler without quota headers. Either way the error is
// logged.
func WithFailOpen(open bool) MiddlewareOption { return failOpenOption{open} }

type loggerOption struct{ l *slog.Logger }

func (o loggerOption) applyMiddleware(c *middlewareConfig) { c.logger, c.loggerSet = o.l, true }

// WithLogger sets the logger for the middleware's own errors (the guard
// could not decide). The default is slog.Default() as it is when
// Middleware runs.
// The warning for a blocked key comes from the guard, through the logger
// given to guard.WithLogger. A nil logger is an error.
func WithLogger(l *slog.Logger) MiddlewareOption { return loggerOption{l} }
