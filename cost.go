package rxthrottle

import "github.com/rxthrottle/rxthrottle/internal/admission"

// ErrInvalidCost is wrapped by the error of WaitN, AcquireN and AllowN (and
// of any limiter's) for a cost n that can never be served: n < 1, or n
// above the smallest N of the limits.
var ErrInvalidCost = admission.ErrInvalidCost

// checkCostLocked returns an error wrapping ErrInvalidCost if n tokens can
// never be granted at once. Requires b.mu.
func (b *Bucket) checkCostLocked(op string, n int) error {
	if n == 1 {
		return nil // every limit has N >= 1
	}
	return refuse.Cost(op, n, b.win.smallestN())
}
