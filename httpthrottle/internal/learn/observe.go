package learn

import (
	"context"
	"net/http"
	"time"

	"github.com/rxthrottle/rxthrottle"
)

// Observe learns from resp, the answer to a request of key read at now,
// whose headers rd is (Read), and returns the pauses to make of hints,
// those the Transport would make: less a spent quota's pause until its
// reset when the schedule spreads its requests (a sliding-window counter
// says its quota is spent whenever its estimate is near it, and waiting for
// its reset would waste the rest of its window; a refusal's Retry-After is
// still obeyed). It runs before the request's token is released.
func (l *Learner) Observe(resp *http.Response, key string, now time.Time, rd Reading, hints []Pause) []Pause {
	if rd.Refused {
		l.refusals.Add(1)
	}
	kind := classify(rd.Refused, resp.Header)
	pauseEnd := now
	if rd.RetryAfter != nil && rd.Refused {
		pauseEnd = rd.RetryAfter.Until
	}
	if kind == refusedGlobal {
		l.pauseAll(pauseEnd, now)
	}
	if !rd.Sent.IsZero() && now.After(rd.Sent) {
		for i := range rd.quotas {
			rd.quotas[i].late = now.Sub(rd.Sent)
		}
	}
	sorted := l.sort(rd.quotas, key)
	events := sorted.events

	l.mu.Lock()
	r := l.routeLocked(key)
	var budget *tokenBudget
	newBudget := false
	if len(sorted.tokens) > 0 {
		newBudget = r.tokens == nil
		budget = l.budgetLocked(r)
	}
	touched, seeds := l.touchLocked(r, key, sorted.order)
	l.mu.Unlock()

	spreading := false
	for i, s := range touched {
		var anns []announcement
		if len(sorted.order) > 0 {
			anns = sorted.byBucket[sorted.order[i]]
		}
		ev, ok, spreads := l.learnOn(s, anns, len(sorted.order) > 0, kind, now, pauseEnd, rd.Sent)
		if ok {
			events = append(events, ev)
		}
		spreading = spreading || spreads
	}
	// The first-answer gate opens once the limits this answer taught are
	// in force: a request that comes to it after it opens goes straight to
	// the limiter, which must not still hold the starting limit.
	r.first.open.Store(true)
	if spreading || l.cfg.Window > 0 {
		kept := hints[:0]
		for _, h := range hints {
			if h.Header == "Retry-After" || h.Header == retryAfterMillisHeader {
				kept = append(kept, h)
			}
		}
		hints = kept
	}
	for _, a := range sorted.tokens {
		if ev, ok := budget.learn(a, now, l.cfg.MaxPause, key); ok {
			events = append(events, ev)
		}
	}
	if newBudget {
		seedBudget(budget, resp)
	}
	releaseOnClose(resp)
	for _, s := range seeds {
		// Allow is best effort: with the window full, the arrival was
		// one too many already, and nothing can undo it.
		_, _ = s.own.Allow(context.Background())
	}
	l.emit(events)
	return hints
}

// sortedQuotas is one answer's announcements sorted by what becomes of
// them: request quotas by the server's bucket name (in the order first
// named), token budgets, and events for those not applied.
type sortedQuotas struct {
	byBucket map[string][]announcement
	order    []string
	tokens   []announcement
	events   []Event
}

func (l *Learner) sort(anns []announcement, key string) sortedQuotas {
	out := sortedQuotas{byBucket: map[string][]announcement{}}
	for _, a := range anns {
		if a.unit == unitTokens && a.limit >= 1 {
			out.tokens = append(out.tokens, a)
			continue
		}
		if a.unit != unitRequests || a.limit < 1 {
			l.notApplied.Add(1)
			out.events = append(out.events, Event{Key: key, Bucket: a.bucket, Source: a.header, Reason: notAppliedReason(a)})
		}
		if a.unit != unitRequests {
			continue
		}
		if _, seen := out.byBucket[a.bucket]; !seen {
			out.order = append(out.order, a.bucket)
		}
		out.byBucket[a.bucket] = append(out.byBucket[a.bucket], a)
	}
	return out
}

// touchLocked returns the schedules an answer of r's announcing the
// buckets order speaks of (r's own, or the one it was last answered from
// if order is empty), and those among them the request did not wait on
// (seeds: it counts in their window all the same). Requires l.mu.
func (l *Learner) touchLocked(r *learnRoute, key string, order []string) (touched, seeds []*learnSchedule) {
	for _, name := range order {
		s := r.self
		if name != "" {
			s = l.bucketLocked(key, name)
			if r.bucket != s {
				seeds = append(seeds, s)
			}
			r.bucket = s
		}
		touched = append(touched, s)
	}
	if len(order) == 0 {
		s := r.self
		if r.bucket != nil {
			s = r.bucket
		}
		touched = append(touched, s)
	}
	return touched, seeds
}

// learnOn feeds one answer to s, its request sent at sent (zero if not
// known): its quotas anns if announced, the refusal or acceptance. A
// refusal that is no evidence of s's rate (classify: x-should-retry:
// false, Discord's shared or global scope, Anthropic's unified budget)
// teaches s nothing. It makes the pause s asks for and returns the event
// of a change, if any, and whether s spreads its requests.
func (l *Learner) learnOn(s *learnSchedule, anns []announcement, announced bool, kind refusalKind, now, pauseEnd, sent time.Time) (ev Event, changed, spreads bool) {
	refused := kind == refusedRate
	s.mu.Lock()
	s.sent = sent
	if !kind.teaches() {
		announced = false
	}
	if announced {
		if l.cfg.Window > 0 {
			for i := range anns {
				if anns[i].window == 0 {
					anns[i].window = l.cfg.Window
				}
			}
		}
		s.learnQuotasLocked(usable(anns), now, refused, l.cfg.ProbeWindow, l.cfg.MaxPause)
		s.watchBoundaryLocked(l, now)
	}
	if kind.teaches() {
		s.onResponseLocked(refused, now, pauseEnd, l.cfg.ProbeWindow, time.Duration(l.rtt.Load()).Round(time.Millisecond), time.Duration(l.rttLow.Load()))
	}
	ev, changed = s.applyLocked(l.cfg.Ceiling, l.cfg.MaxPause)
	spreads = s.spread.on || s.resetsOverstateLocked()
	var lim rxthrottle.Limiter
	hold := s.hold
	if !hold.IsZero() {
		lim = s.limiter(l)
		s.hold = time.Time{}
	}
	s.mu.Unlock()
	if lim != nil {
		lim.Pause(hold)
	}
	return ev, changed, spreads
}

// goAlone lets one request at a time go on s from now until an answer
// from the window that starts at boundary, or until a window of until has
// passed (see watchBoundaryLocked). The lone request goes the hold after
// the boundary, or most of it after the client's own tokens of the last
// window come back if that is later (ownRenewalLocked).
func (l *Learner) goAlone(s *learnSchedule, boundary time.Time, until time.Duration) {
	s.mu.Lock()
	if !s.boundary.Equal(boundary) || s.counting != countingUnknown {
		s.mu.Unlock()
		return
	}
	if s.alone {
		// A renewal is being judged (its pause may be running): this
		// boundary is not held on top of it; the next one is watched.
		s.boundary = time.Time{}
		s.mu.Unlock()
		return
	}
	hold := s.boundaryHoldLocked(until, l.cfg.ProbeWindow, l.cfg.MaxPause)
	start := boundary.Add(hold)
	if renew := s.ownRenewalLocked(l.cfg.MaxPause); !renew.IsZero() {
		// Three quarters of the hold after the client's own tokens come
		// back: a counter whose window began there (ownRenewalLocked)
		// accepts it, a quarter request to spare, and one whose window
		// began at the reset still carries enough over to tell.
		start = latest(start, renew.Add(hold*3/4))
	}
	s.alone, s.aloneUntil = true, start.Add(min(max(until, l.cfg.ProbeWindow), l.cfg.MaxPause))
	ev, ok := s.applyLocked(l.cfg.Ceiling, l.cfg.MaxPause)
	lim := s.limiter(l)
	s.mu.Unlock()
	if lim != nil {
		lim.Pause(start)
	}
	if ok {
		l.emit([]Event{ev})
	}
}

// usable keeps the announcements a schedule can keep: a quota of at
// least 1 request.
func usable(anns []announcement) []announcement {
	out := anns[:0:0]
	for _, a := range anns {
		if a.limit >= 1 {
			out = append(out, a)
		}
	}
	return out
}

func notAppliedReason(a announcement) string {
	if a.unit != unitRequests {
		return "a quota of " + a.unit + " is not kept by the Transport: only requests are"
	}
	return "a quota below 1 request cannot be kept; only its reset is honoured"
}

// latest returns the later of a and b.
func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
