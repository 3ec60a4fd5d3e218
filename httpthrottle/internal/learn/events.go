package learn

import "github.com/rxthrottle/rxthrottle"

// Event is one change of a learned schedule, or a quota announced and not
// applied: httpthrottle's Event, which documents the fields.
type Event struct {
	Key, Bucket string
	Limits      []rxthrottle.Limit
	Source      string
	Reason      string
}

// Stats counts what a Learner did since it was built: httpthrottle's
// LearnStats, which documents the fields.
type Stats struct {
	Changes, NotApplied, Refusals uint64
	Buckets                       int
	Last                          Event
}

// emit counts and reports events, outside every lock.
func (l *Learner) emit(events []Event) {
	for _, ev := range events {
		if ev.Limits != nil {
			l.changes.Add(1)
			l.mu.Lock()
			l.last = ev
			l.mu.Unlock()
		}
		if l.cfg.OnEvent != nil {
			l.cfg.OnEvent(ev)
		}
	}
}

// Stats returns a snapshot of what l did.
func (l *Learner) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return Stats{
		Changes:    l.changes.Load(),
		NotApplied: l.notApplied.Load(),
		Refusals:   l.refusals.Load(),
		Buckets:    len(l.buckets),
		Last:       l.last,
	}
}
