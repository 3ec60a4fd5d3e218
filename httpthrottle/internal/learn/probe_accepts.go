package learn

import (
	"slices"
	"time"
)

// The acceptances a rate found from 429s keeps: when the last answers
// were accepted, for the count of a window before a refusal.

// maxRecentAccepts bounds the acceptances a rate found from 429s keeps
// (8 KiB a schedule at most, 4 MiB for the most schedules a Transport
// keeps by default): a rate of more than that per window is cut by 5% at
// a refusal, never found anew.
const maxRecentAccepts = 1024

// acceptLog is a ring of the read times of the last accepted answers, as
// offsets from the first (time.Time is three times the size).
type acceptLog struct {
	base time.Time
	at   []time.Duration
	next int
}

func (a *acceptLog) add(t time.Time) {
	if a.base.IsZero() {
		a.base = t
	}
	d := t.Sub(a.base)
	if len(a.at) < maxRecentAccepts {
		a.at = append(a.at, d)
		return
	}
	a.at[a.next] = d
	a.next = (a.next + 1) % maxRecentAccepts
}

// since returns how many answers were accepted after t, and false if the
// ring no longer reaches back to t.
func (a *acceptLog) since(t time.Time) (int, bool) {
	cut, n := t.Sub(a.base), 0
	for _, at := range a.at {
		if at > cut {
			n++
		}
	}
	return n, n < maxRecentAccepts
}

// within returns the read times accepted after from and before to, in
// order.
func (a *acceptLog) within(from, to time.Time) []time.Time {
	var out []time.Time
	for _, at := range a.at {
		if t := a.base.Add(at); t.After(from) && t.Before(to) {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(x, y time.Time) int { return x.Compare(y) })
	return out
}
