package guard

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/internal/seconds"
)

// ErrLimited is wrapped by the error Check returns for a refused request.
// Test for it with errors.Is; errors.As with a *LimitedError gives the
// details.
var ErrLimited = errors.New("over the usage limit")

// Decision is the guard's answer for one request.
type Decision struct {
	// Allowed reports whether the request may go.
	Allowed bool
	// Limit is the policy's Limit: Limit.N requests per Limit.Window.
	Limit rxthrottle.Limit
	// Remaining is how many more requests the key may make in its current
	// window; 0 when refused.
	Remaining int
	// RetryAfter is how long a refused request's key stays blocked (until
	// ResetAt); 0 when allowed.
	RetryAfter time.Duration
	// Reset is how long from the decision until ResetAt: the time left in
	// the key's window (allowed) or block (refused, equal to RetryAfter).
	Reset time.Duration
	// ResetAt is when the key's window ends (allowed) or its block ends
	// (refused); from then on the key is fresh.
	ResetAt time.Time
}

// LimitedError is the error Check returns for a refused request. It wraps
// ErrLimited.
type LimitedError struct {
	// Key is the refused key.
	Key string
	// RetryAfter is how long the key stays blocked.
	RetryAfter time.Duration
	// Until is when the block ends.
	Until time.Time
	// Full is nil for a key over its quota. For a new key refused because
	// the store holds its maximum of live keys, it is the store's error,
	// which wraps rxthrottle.ErrTooManyKeys; RetryAfter is then the time
	// until the soonest live key ends and makes room.
	Full error
}

// Error says which key is refused and how long to wait, in whole seconds
// rounded up so that waiting that long is always enough.
func (e *LimitedError) Error() string {
	retry := time.Duration(seconds.Ceil(e.RetryAfter)) * time.Second
	if e.Full != nil {
		return fmt.Sprintf("guard: key %q is refused, the store is full: retry in %v: %s", e.Key, retry, strings.TrimPrefix(e.Full.Error(), "guard: "))
	}
	return fmt.Sprintf("guard: key %q is over the usage limit: retry in %v", e.Key, retry)
}

// Unwrap returns ErrLimited, and Full when it is set.
func (e *LimitedError) Unwrap() []error {
	if e.Full != nil {
		return []error{ErrLimited, e.Full}
	}
	return []error{ErrLimited}
}
