package specmodel

import (
	"fmt"
	"time"
)

// Result says how a caller's call ended.
type Result int

const (
	// Departed: the caller went, at Outcome.Depart.
	Departed Result = iota
	// Cancelled: its context ended while it waited.
	Cancelled
	// Ended: its context had ended when it arrived (the call returns the
	// context's error at once and counts nothing).
	Ended
	// DeadlineRefused: refused at arrival, its deadline no later than the
	// earliest instant it could possibly go (ErrDeadline).
	DeadlineRefused
	// QueueFull: refused at arrival, the queue bound reached (ErrQueueFull).
	QueueFull
	// Stuck: it waits for ever (a hold that never ends, without timeout).
	Stuck
)

func (r Result) String() string {
	switch r {
	case Departed:
		return "departed"
	case Cancelled:
		return "cancelled"
	case Ended:
		return "ended before arrival"
	case DeadlineRefused:
		return "refused by its deadline"
	case QueueFull:
		return "refused: queue full"
	case Stuck:
		return "stuck"
	}
	return fmt.Sprintf("Result(%d)", int(r))
}

// Outcome is how one caller fared.
type Outcome struct {
	Result Result
	// Depart is the departure, or -1 if the caller did not depart.
	Depart time.Duration
	// TimedOut says its hold was ended by the hold timeout, not by the
	// caller: a Release, Cancel or ReleaseN at its Hold changes nothing
	// (and ReleaseN reports the token ended).
	TimedOut bool
	// GivenBack says all its tokens came back unused (Unused, or
	// ReleaseN(0)): it counts as cancelled, not admitted.
	GivenBack bool
}

// Counts returns what a limiter's Stats count after outs: the callers
// admitted (departed and not given back), cancelled (cancelled while
// waiting, refused by their deadline, or given back), and refused by the
// queue bound.
func Counts(outs []Outcome) (admitted, cancelled, refused uint64) {
	for _, o := range outs {
		switch o.Result {
		case Departed:
			if o.GivenBack {
				cancelled++
			} else {
				admitted++
			}
		case Cancelled, DeadlineRefused:
			cancelled++
		case QueueFull:
			refused++
		}
	}
	return admitted, cancelled, refused
}
