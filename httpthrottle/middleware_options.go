package httpthrottle

import (
	"errors"
	"log/slog"
	"net/http"
)

// GuardOption configures the Guard middleware.
type GuardOption interface {
	applyGuard(*guardConfig)
}

// guardConfig holds every GuardOption's value; buildGuardConfig sets the
// defaults and checks them.
type guardConfig struct {
	key       func(*http.Request) string
	keySet    bool
	failOpen  bool
	logger    *slog.Logger
	loggerSet bool
}

func buildGuardConfig(opts []GuardOption) (guardConfig, error) {
	var c guardConfig
	for _, o := range opts {
		if o == nil {
			return c, errors.New("httpthrottle: Guard: nil GuardOption")
		}
		o.applyGuard(&c)
	}
	switch {
	case c.keySet && c.key == nil:
		return c, errors.New("httpthrottle: GuardKey(nil): a key function is required")
	case c.loggerSet && c.logger == nil:
		return c, errors.New("httpthrottle: GuardLogger(nil): a logger is required (use slog.New(slog.DiscardHandler) to log nothing)")
	}
	if !c.keySet {
		c.key = KeyFromRemoteIP
	}
	if !c.loggerSet {
		c.logger = slog.Default()
	}
	return c, nil
}

type guardKeyOption struct{ f func(*http.Request) string }

func (o guardKeyOption) applyGuard(c *guardConfig) { c.key, c.keySet = o.f, true }

// GuardKey sets the function that names a request's key: a user ID, an API
// token, a client address. When it returns "", the request is keyed by its
// remote IP (KeyFromRemoteIP), which is also the default key function. A nil
// function is an error.
func GuardKey(f func(r *http.Request) string) GuardOption { return guardKeyOption{f} }

type guardFailOpenOption struct{ open bool }

func (o guardFailOpenOption) applyGuard(c *guardConfig) { c.failOpen = o.open }

// GuardFailOpen decides what happens when the guard cannot decide (its
// store fails, a memory store is full, no key can be found): with false, the
// default, the request is answered 503 Service Unavailable; with true, it
// goes on to the handler without quota headers. Either way the error is
// logged.
func GuardFailOpen(open bool) GuardOption { return guardFailOpenOption{open} }

type guardLoggerOption struct{ l *slog.Logger }

func (o guardLoggerOption) applyGuard(c *guardConfig) { c.logger, c.loggerSet = o.l, true }

// GuardLogger sets the logger for the middleware's own errors (the guard
// could not decide). The default is slog.Default() as it is when Guard runs.
// The warning for a blocked key comes from the guard, through the logger
// given to guard.WithLogger. A nil logger is an error.
func GuardLogger(l *slog.Logger) GuardOption { return guardLoggerOption{l} }
