package guard

import (
	"errors"
	"fmt"
	"time"

	"github.com/rxthrottle/rxthrottle"
)

// ErrInvalidPolicy is wrapped by every error that reports a Policy which
// cannot be enforced. Test for it with errors.Is. An error about the
// policy's Limit also wraps rxthrottle.ErrInvalidLimit.
var ErrInvalidPolicy = errors.New("invalid policy")

// Policy is a fixed-window quota with a cool-down: a key may make Limit.N
// requests in a window of length Limit.Window that starts at the key's first
// request; the request that would be number Limit.N+1 is refused and blocks
// the key for Block (but never less than the rest of its window), during
// which every request of the key is refused.
//
// "30 per 60 s, cool-down 300 s" is Policy{Limit: rxthrottle.Per(30,
// time.Minute), Block: 5 * time.Minute}: the same Limit a client gives
// rxthrottle.NewBucket to stay within it. Block may be 0: the key is then
// refused only until its window ends, which is a plain fixed-window limit.
type Policy struct {
	// Limit is the quota: Limit.N requests (at least 1) in a fixed window
	// of length Limit.Window (positive).
	Limit rxthrottle.Limit
	// Block is the cool-down that starts at the refused request which went
	// over the limit; it must not be negative.
	Block time.Duration
}

// String returns the policy as "30 per 1m0s, block 5m0s".
func (p Policy) String() string {
	return fmt.Sprintf("%v, block %v", p.Limit, p.Block)
}

// Validate reports why p cannot be enforced, or nil. The error wraps
// ErrInvalidPolicy (and rxthrottle.ErrInvalidLimit for a bad Limit) and
// names the offending field.
func (p Policy) Validate() error {
	switch {
	case p.Limit.N < 1:
		return fmt.Errorf("guard: policy %v: Limit.N must be at least 1, got %d: %w", p, p.Limit.N, errInvalidLimit{})
	case p.Limit.Window <= 0:
		return fmt.Errorf("guard: policy %v: Limit.Window must be positive, got %v: %w", p, p.Limit.Window, errInvalidLimit{})
	case p.Block < 0:
		return fmt.Errorf("guard: policy %v: Block must not be negative, got %v: %w", p, p.Block, ErrInvalidPolicy)
	}
	return nil
}

// errInvalidLimit ends the message of a policy whose Limit is invalid: it
// reads as ErrInvalidPolicy and wraps it and rxthrottle.ErrInvalidLimit.
type errInvalidLimit struct{}

func (errInvalidLimit) Error() string { return ErrInvalidPolicy.Error() }

func (errInvalidLimit) Unwrap() []error {
	return []error{ErrInvalidPolicy, rxthrottle.ErrInvalidLimit}
}
