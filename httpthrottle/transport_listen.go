package httpthrottle

import (
	"fmt"
	"net/http"
	"time"
)

// listen reads resp's Retry-After and quota headers (readHeaders), the
// answer to a request sent at sent, and pauses the limiter (key's
// schedule) until the latest instant they ask for, capped at the maximum
// pause.
func (t *Transport) listen(resp *http.Response, key string, sent time.Time) {
	now := t.cfg.clock.Now()
	hints := t.readHeaders(resp, key, now, sent)

	var until time.Time
	for _, h := range hints {
		if wait, most := h.Until.Sub(now), t.cfg.policy.MaxPause; wait > most {
			t.report(&HeaderError{
				Header: h.Header,
				Value:  h.Value,
				Reason: fmt.Sprintf("asks for a pause of %v, more than the maximum %v; pausing %v", wait, most, most),
				Err:    ErrPauseCapped,
			})
			h.Until = now.Add(most)
		}
		if h.Until.After(until) {
			until = h.Until
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
