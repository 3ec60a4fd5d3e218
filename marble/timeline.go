package marble

import "fmt"

// Kind is what an Event of a Timeline carries.
type Kind int

const (
	// Next is a value: any rune of a marble that is not syntax.
	Next Kind = iota
	// Error is an error notification: # in a marble.
	Error
	// Complete is the completion notification: | in a marble.
	Complete
)

// String returns "next", "error" or "complete".
func (k Kind) String() string {
	switch k {
	case Next:
		return "next"
	case Error:
		return "error"
	case Complete:
		return "complete"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// NoFrame marks the absence of ^ or ! in a Timeline.
const NoFrame int64 = -1

// Event is one notification of a parsed marble.
type Event struct {
	// Frame counts frames from the first column of the marble.
	Frame int64
	// Kind says whether the event is a value, an error or the completion.
	Kind Kind
	// Symbol is the rune of a Next event (looked up in a values
	// map to get the value), 0 for the other kinds.
	Symbol rune
}

// Timeline is a parsed marble: its events in order, the positions of ^ and
// !, and its length. Every frame counts from the first column of the
// marble, which is frame 0; users of a Timeline decide what frame 0 means
// (for a hot source, it is the ^).
type Timeline struct {
	// Events are the notifications in the order they were written.
	Events []Event
	// Subscribe is the frame of ^, or NoFrame.
	Subscribe int64
	// Unsubscribe is the frame of !, or NoFrame.
	Unsubscribe int64
	// End is the number of frames the marble spans: the frame just after
	// its last column (trailing dashes count).
	End int64
}
