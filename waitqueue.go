package rxthrottle

import "github.com/rxthrottle/rxthrottle/internal/admission"

// A Bucket is an admission front (internal/admission: the queue, its
// order, the timer, the decisions at arrival) over its own planner, the
// sliding window and the holds (bucketPlanner).

// waiter is one caller (or operator item) queued for tokens.
type waiter = admission.Waiter

// grantKind says what granting tokens to a caller does: a waiter's Kind,
// which the front leaves to the Bucket.
type grantKind = uint8

const (
	// grantRecord (Wait): the departure is the completion; the tokens renew
	// W after it.
	grantRecord grantKind = iota
	// grantHold: an untimed hold (token_holds.go), the operators' grant:
	// the tokens are held, with no Token and no timeout, until their
	// holder completes them at an instant it gives (the item's emission)
	// or gives them back.
	grantHold
	// grantToken (Acquire): the tokens are held until Token.Release,
	// Token.Cancel or the hold timeout.
	grantToken
)

// A waiter's states (admission.State).
const (
	waiting   = admission.Waiting
	granted   = admission.Granted
	cancelled = admission.Cancelled
	failed    = admission.Failed
)
