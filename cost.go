package rxthrottle

import (
	"errors"
	"fmt"
)

// ErrInvalidCost is wrapped by the error of WaitN, AcquireN and AllowN (and
// of any limiter's) for a cost n that can never be served: n < 1, or n
// above the smallest N of the limits.
var ErrInvalidCost = errors.New("invalid cost")

// checkCostLocked returns an error wrapping ErrInvalidCost if n tokens can
// never be granted at once. Requires b.mu.
func (b *Bucket) checkCostLocked(op string, n int) error {
	if n == 1 {
		return nil // every limit has N >= 1
	}
	if minN := b.win.smallestN(); n < 1 || n > minN {
		return costError(op, n, minN)
	}
	return nil
}

func costError(op string, n, minN int) error {
	return fmt.Errorf("rxthrottle: %s(n=%d): n must be from 1 to the smallest N of the limits, %d: %w", op, n, minN, ErrInvalidCost)
}
