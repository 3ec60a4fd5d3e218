package httpthrottle

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// ErrMalformedHeader is wrapped by the HeaderError of a Retry-After or quota
// header that the Transport could not use: not a number or date, negative,
// or a spent quota without a reset time. The Transport ignores such a header.
var ErrMalformedHeader = errors.New("httpthrottle: malformed rate-limit header")

// ErrPauseCapped is wrapped by the HeaderError of a header that asked for a
// pause longer than the Transport's maximum (WithMaxPause). The Transport
// paused for the maximum instead.
var ErrPauseCapped = errors.New("httpthrottle: server pause capped")

// HeaderError describes one response header the Transport could not take at
// its word. It is handed to the OnHeaderError hook; test its kind with
// errors.Is(err, ErrMalformedHeader) or errors.Is(err, ErrPauseCapped).
type HeaderError struct {
	// Header is the header's canonical name, e.g. "Retry-After".
	Header string
	// Value is the header's raw value.
	Value string
	// Reason says what was wrong, in words.
	Reason string
	// Err is ErrMalformedHeader or ErrPauseCapped.
	Err error
}

// Error returns `httpthrottle: header Retry-After "abc": <reason>`.
func (e *HeaderError) Error() string {
	return fmt.Sprintf("httpthrottle: header %s %q: %s", e.Header, e.Value, e.Reason)
}

// Unwrap returns e.Err, so errors.Is sees the sentinel.
func (e *HeaderError) Unwrap() error { return e.Err }

// redactURL returns u as error messages show it: without a password (as
// URL.Redacted) and without its query and fragment, which often carry
// secrets (?token=..., ?api_key=...). It does not modify u.
func redactURL(u *url.URL) string {
	if u == nil {
		return ""
	}
	c := *u
	c.RawQuery, c.ForceQuery = "", false
	c.Fragment, c.RawFragment = "", ""
	return c.Redacted()
}

// wrapError returns err wrapped with what the Transport was doing, as
// "httpthrottle: <what>: <err>". An err of this package (a key function's,
// KeyByHost's) loses its own "httpthrottle: " prefix in the message, so the
// prefix is not repeated in the middle; errors.Is and errors.As still see
// err.
func wrapError(err error, format string, args ...any) error {
	return &wrappedError{what: fmt.Sprintf(format, args...), err: err}
}

type wrappedError struct {
	what string
	err  error
}

func (e *wrappedError) Error() string {
	return "httpthrottle: " + e.what + ": " + strings.TrimPrefix(e.err.Error(), "httpthrottle: ")
}

func (e *wrappedError) Unwrap() error { return e.err }
