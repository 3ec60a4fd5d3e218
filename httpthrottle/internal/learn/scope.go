package learn

import (
	"net/http"
	"strings"
	"time"

	"github.com/rxthrottle/rxthrottle"
)

// refusalKind is what an answer says of the rate of the schedule it is
// read on (classify).
type refusalKind int

const (
	notRefused refusalKind = iota
	// refusedRate is a refusal for the schedule's own rate: evidence the
	// learner learns from (a rate found, an announcement checked).
	refusedRate
	// refusedFinal is a refusal the server says no wait ends
	// (x-should-retry: false): OpenAI's and Anthropic's SDKs then never
	// retry, whatever Retry-After says, as for a 401 or a quota of money
	// spent (insufficient_quota, a billing error). It is no evidence of
	// the rate: the answer would be the same at any pace.
	refusedFinal
	// refusedShared is Discord's X-RateLimit-Scope: shared, a limit of
	// the resource (a channel, a guild) that many clients share: it does
	// not count against the client's bucket, whose headers it carries
	// unchanged (the documented example: Remaining 9 of 10). Its
	// Retry-After is obeyed; it is no evidence against the bucket.
	refusedShared
	// refusedGlobal is Discord's global limit (X-RateLimit-Global: true,
	// X-RateLimit-Scope: global): every request of the client counts
	// against it, whatever its route or bucket. Its Retry-After pauses
	// everything the learner schedules; it is no evidence against any
	// one bucket.
	refusedGlobal
	// refusedUsage is Anthropic's unified limit refused
	// (anthropic-ratelimit-unified-status: rejected, a Claude
	// subscription's): a budget of usage over 5 hours or 7 days, sent as
	// a fraction used and a reset, never as requests. Its Retry-After (the
	// captured one is the weekly reset, 5.2 days away) is obeyed; it is no
	// evidence of a rate of requests.
	refusedUsage
)

const (
	discordScopeHeader  = "X-RateLimit-Scope"
	discordGlobalHeader = "X-RateLimit-Global"
	unifiedStatusHeader = "Anthropic-Ratelimit-Unified-Status"
)

// classify returns what an answer whose refusal Refused reported (refused)
// and whose headers are h says of the rate.
func classify(refused bool, h http.Header) refusalKind {
	switch {
	case !refused:
		return notRefused
	case !ShouldRetry(h):
		return refusedFinal
	case strings.EqualFold(strings.TrimSpace(h.Get(discordGlobalHeader)), "true"):
		return refusedGlobal
	case strings.EqualFold(strings.TrimSpace(h.Get(unifiedStatusHeader)), "rejected"):
		return refusedUsage
	}
	switch strings.ToLower(strings.TrimSpace(h.Get(discordScopeHeader))) {
	case "shared":
		return refusedShared
	case "global":
		return refusedGlobal
	}
	return refusedRate
}

// teaches reports whether an answer of kind k is evidence of the rate of
// the schedule it is read on: an acceptance, or a refusal for that rate.
func (k refusalKind) teaches() bool { return k == notRefused || k == refusedRate }

// pauseAll pauses every schedule of l until until, and those made before
// it ends (newSchedule): a refusal for the client's global limit
// (refusedGlobal), read at now, holds every request, whatever its key or
// bucket. A pause that ends by now is none: nothing changes.
func (l *Learner) pauseAll(until, now time.Time) {
	if !until.After(now) {
		return
	}
	l.mu.Lock()
	l.globalUntil = latest(l.globalUntil, until)
	var lims []rxthrottle.Limiter
	if l.cfg.Single != nil {
		lims = append(lims, l.cfg.Single)
	}
	for _, r := range l.routes {
		if r.self.own != nil {
			lims = append(lims, r.self.own)
		}
	}
	for _, s := range l.buckets {
		lims = append(lims, s.own)
	}
	l.mu.Unlock()
	for _, lim := range lims {
		lim.Pause(until)
	}
}
