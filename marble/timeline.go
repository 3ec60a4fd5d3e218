package marble

import (
	"fmt"
	"time"
)

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
//
// An event happens at Frame, or Offset past it: a time progression that
// is not a whole number of frames ("10.2ms " with frames of 1ms) moves
// every symbol after it between frames, as in rxjs, where the frame count
// is a real number. Time returns the exact instant.
type Event struct {
	// Frame counts whole frames from the first column of the marble.
	Frame int64
	// Offset is how far past Frame the event happens, less than one
	// frame; 0 unless a fractional time progression comes before it.
	Offset time.Duration
	// Kind says whether the event is a value, an error or the completion.
	Kind Kind
	// Symbol is the rune of a Next event (looked up in a values
	// map to get the value), 0 for the other kinds.
	Symbol rune
}

// Time returns the instant of e, counted from the first column of its
// marble, with frames of the given length.
func (e Event) Time(frame time.Duration) time.Duration {
	return time.Duration(e.Frame)*frame + e.Offset
}

// Timeline is a parsed marble: its events in order, the positions of ^ and
// !, and its length. Every frame counts from the first column of the
// marble, which is frame 0; users of a Timeline decide what frame 0 means
// (for a hot source, it is the ^). Each position is a whole number of
// frames and an offset less than a frame past it, as in Event.
type Timeline struct {
	// Events are the notifications in the order they were written.
	Events []Event
	// Subscribe is the frame of ^, or NoFrame.
	Subscribe int64
	// SubscribeOffset is how far past Subscribe the ^ is.
	SubscribeOffset time.Duration
	// Unsubscribe is the frame of !, or NoFrame.
	Unsubscribe int64
	// UnsubscribeOffset is how far past Unsubscribe the ! is.
	UnsubscribeOffset time.Duration
	// End is the number of frames the marble spans: the frame just after
	// its last column (trailing dashes count).
	End int64
	// EndOffset is how far past End the marble ends.
	EndOffset time.Duration
}

// subscribeAt returns the instant of ^, if there is one.
func (tl Timeline) subscribeAt(frame time.Duration) (time.Duration, bool) {
	return time.Duration(tl.Subscribe)*frame + tl.SubscribeOffset, tl.Subscribe != NoFrame
}

// unsubscribeAt returns the instant of !, if there is one.
func (tl Timeline) unsubscribeAt(frame time.Duration) (time.Duration, bool) {
	return time.Duration(tl.Unsubscribe)*frame + tl.UnsubscribeOffset, tl.Unsubscribe != NoFrame
}

// endAt returns the instant the marble ends.
func (tl Timeline) endAt(frame time.Duration) time.Duration {
	return time.Duration(tl.End)*frame + tl.EndOffset
}
