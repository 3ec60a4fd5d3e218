package httpthrottle

import (
	"fmt"
	"net/http"
	"time"
)

// listen reads resp's Retry-After and quota headers and pauses the limiter
// (key's schedule) until the latest instant they ask for, capped at the
// maximum pause. Retry-After counts only on 429 and 503: on a redirect it
// means something else.
func (t *Transport) listen(resp *http.Response, key string) {
	now := t.cfg.clock.Now()
	var hints []pauseHint
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		hint, ok, herr := retryAfter(resp.Header, now)
		t.report(herr)
		if ok {
			hints = append(hints, hint)
		}
	}
	qhints, qerrs := quotaHints(resp.Header, now)
	for _, herr := range qerrs {
		t.report(herr)
	}
	hints = append(hints, qhints...)
	if t.learn != nil {
		hints = t.learn.observe(resp, key, now, hints)
	}

	var until time.Time
	for _, h := range hints {
		if wait := h.until.Sub(now); wait > t.cfg.maxPause {
			t.report(&HeaderError{
				Header: h.header,
				Value:  h.value,
				Reason: fmt.Sprintf("asks for a pause of %v, more than the maximum %v; pausing %v", wait, t.cfg.maxPause, t.cfg.maxPause),
				Err:    ErrPauseCapped,
			})
			h.until = now.Add(t.cfg.maxPause)
		}
		if h.until.After(until) {
			until = h.until
		}
	}
	if !until.After(now) {
		return
	}
	t.gate.pause(key, until)
	t.pushbacks.Add(1)
	if t.cfg.onPushback != nil {
		t.cfg.onPushback(resp.StatusCode, until)
	}
}

func (t *Transport) report(herr *HeaderError) {
	if herr == nil {
		return
	}
	t.headerErrors.Add(1)
	t.cfg.onHeaderError(herr)
}
