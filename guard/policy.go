package guard

import (
	"errors"
	"fmt"
	"time"
)

// ErrInvalidPolicy is wrapped by every error that reports a Policy which
// cannot be enforced. Test for it with errors.Is.
var ErrInvalidPolicy = errors.New("invalid policy")

// Policy is a fixed-window quota with a cool-down: a key may make Limit
// requests in a window of length Window that starts at the key's first
// request; the request that would be number Limit+1 is refused and blocks the
// key for Block (but never less than the rest of its window), during which
// every request of the key is refused.
//
// "30 per 60 s, cool-down 300 s" is Policy{Limit: 30, Window: time.Minute,
// Block: 5 * time.Minute}. Block may be 0: the key is then refused only until
// its window ends, which is a plain fixed-window limit.
type Policy struct {
	// Limit is the number of requests allowed in one window; at least 1.
	Limit int
	// Window is the length of the fixed window; it must be positive.
	Window time.Duration
	// Block is the cool-down that starts at the refused request which went
	// over the limit; it must not be negative.
	Block time.Duration
}

// String returns the policy as "30 per 1m0s, block 5m0s".
func (p Policy) String() string {
	return fmt.Sprintf("%d per %v, block %v", p.Limit, p.Window, p.Block)
}

// Validate reports why p cannot be enforced, or nil. The error wraps
// ErrInvalidPolicy and names the offending field.
func (p Policy) Validate() error {
	switch {
	case p.Limit < 1:
		return fmt.Errorf("guard: policy %v: Limit must be at least 1, got %d: %w", p, p.Limit, ErrInvalidPolicy)
	case p.Window <= 0:
		return fmt.Errorf("guard: policy %v: Window must be positive, got %v: %w", p, p.Window, ErrInvalidPolicy)
	case p.Block < 0:
		return fmt.Errorf("guard: policy %v: Block must not be negative, got %v: %w", p, p.Block, ErrInvalidPolicy)
	}
	return nil
}
