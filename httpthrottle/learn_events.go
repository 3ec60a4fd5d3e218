package httpthrottle

import (
	"fmt"
	"time"

	"github.com/rxthrottle/rxthrottle"
)

// LearnEvent reports one change of a learned schedule, or a quota that was
// announced and not applied.
type LearnEvent struct {
	// Key is the request's key in the Transport ("" for NewTransport).
	Key string
	// Bucket is the server's name for the bucket (Discord's id, the IETF
	// partition key), "" for the route's own schedule.
	Bucket string
	// Limits are the limits now in force on that schedule, the ceiling
	// included; nil for a quota not applied.
	Limits []rxthrottle.Limit
	// Source says what the limits were learned from: a header's name,
	// "429" for a rate found from refusals, "spread" when a server that
	// refused although its quota was kept has its requests spread evenly.
	Source string
	// Reason says, in words, why the limits changed or were not applied.
	Reason string
}

// String returns a one-line description of the event.
func (e LearnEvent) String() string {
	return fmt.Sprintf("httpthrottle: learned key=%q bucket=%q limits=%v from %s: %s", e.Key, e.Bucket, e.Limits, e.Source, e.Reason)
}

// LearnStats counts what a learning Transport did since it was built.
type LearnStats struct {
	// Changes is the number of times a schedule's limits were set.
	Changes uint64
	// NotApplied is the number of announced quotas left out: another unit,
	// a quota of 0, an unusable window.
	NotApplied uint64
	// Refusals is the number of 429 responses the learner saw.
	Refusals uint64
	// Buckets is the number of server-named bucket schedules kept now.
	Buckets int
	// Last is the latest change, zero before the first.
	Last LearnEvent
}

// LearnStats returns a snapshot of what the learner did; the zero
// LearnStats for a Transport without WithLearnLimits.
func (t *Transport) LearnStats() LearnStats {
	if t.learn == nil {
		return LearnStats{}
	}
	st := t.learn.Stats()
	return LearnStats{Changes: st.Changes, NotApplied: st.NotApplied, Refusals: st.Refusals, Buckets: st.Buckets, Last: LearnEvent(st.Last)}
}

// NewLearningTransport returns a Transport that needs no quota to start
// with: NewTransport over a Bucket of its own (on the WithClock clock)
// whose limits come from what the server announces (WithLearnLimits, whose
// options a WithLearnLimits among opts replaces). Until the first answer
// one request at a time goes; then the announced quota, or the rate found
// from 429s, is kept. It reads every option NewTransport reads.
func NewLearningTransport(opts ...TransportOption) (*Transport, error) {
	cfg, err := buildTransportConfig(opts)
	if err != nil {
		return nil, err
	}
	b, err := rxthrottle.NewBucket(rxthrottle.Per(1<<30, time.Second), rxthrottle.WithClock(cfg.clock))
	if err != nil {
		return nil, err
	}
	return NewTransport(b, append([]TransportOption{WithLearnLimits()}, opts...)...)
}
