package marble

import (
	"fmt"
	"strings"
	"time"

	"github.com/reactivex/rxgo/v2"
)

// Higher-order observables, whose values are observables (rxgo's
// WindowWithTime and GroupBy, a Map to observables), are compared as in
// rxjs: when the observed pipeline emits an observable, ExpectObservable
// subscribes to it at once and records what it emits, in time from that
// instant; in ToBe's values, a Cold source of the same Scheduler stands
// for what such an observable must emit, in time from its frame 0.

// innerTimeline is what an observable emitted as a value emits, or must
// emit: the value ToBe compares in its place.
type innerTimeline struct {
	frame  time.Duration
	events []innerEvent
}

// innerEvent is one notification of an innerTimeline.
type innerEvent struct {
	at    time.Duration // since the inner observable was emitted
	kind  Kind
	value any // the value of a Next, the error of an Error
}

// GoString draws the timeline for failure messages, one notification per
// frame it happens at: cold{1: "a", 3: "b", 4: |}.
func (t innerTimeline) GoString() string {
	var b strings.Builder
	b.WriteString("cold{")
	for i, e := range t.events {
		if i > 0 {
			b.WriteString(", ")
		}
		if e.at%t.frame == 0 {
			fmt.Fprintf(&b, "%d: ", e.at/t.frame)
		} else {
			fmt.Fprintf(&b, "%v: ", e.at)
		}
		switch e.kind {
		case Next:
			fmt.Fprintf(&b, "%#v", e.value)
		case Error:
			fmt.Fprintf(&b, "# %v", e.value)
		case Complete:
			b.WriteString("|")
		}
	}
	b.WriteString("}")
	return b.String()
}

// innerRecorder records an observable the observed pipeline emitted.
type innerRecorder struct {
	s  *Scheduler
	at time.Duration // when it was emitted

	// The fields below require that s.mu is held.
	events       []innerEvent
	lastWasError bool
}

// materialize subscribes to obs, emitted now by an observed pipeline, and
// records what it emits until it closes its channel or Run ends. It must
// not be called with s.mu held.
func (s *Scheduler) materialize(obs rxgo.Observable) *innerRecorder {
	r := &innerRecorder{s: s, at: s.elapsed()}
	s.collectorStarted()
	go r.collect(obs.Observe(rxgo.WithContext(s.ctx)))
	return r
}

func (r *innerRecorder) collect(ch <-chan rxgo.Item) {
	s := r.s
	defer s.collectorDone()
	for {
		var item rxgo.Item
		var ok bool
		select {
		case item, ok = <-ch:
		case <-s.abandon:
			return
		}
		s.mu.Lock()
		if !ok {
			// As for the observed pipeline: a closed channel is the
			// completion, unless it closes after an error.
			if !r.lastWasError && s.ctx.Err() == nil {
				r.events = append(r.events, innerEvent{at: s.elapsed() - r.at, kind: Complete})
			}
			s.mu.Unlock()
			return
		}
		e := innerEvent{at: s.elapsed() - r.at, kind: Next, value: item.V}
		if item.Error() {
			e.kind, e.value = Error, item.E
		}
		r.events = append(r.events, e)
		r.lastWasError = item.Error()
		s.mu.Unlock()
	}
}

// timeline returns what r has recorded; it requires that s.mu is held.
func (r *innerRecorder) timeline() innerTimeline {
	return innerTimeline{frame: r.s.frame, events: append([]innerEvent(nil), r.events...)}
}

// expectedValues returns ToBe's values with each Cold source of s in it
// replaced by the innerTimeline it plays, or values itself if there is
// none.
func (s *Scheduler) expectedValues(values map[string]any) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out map[string]any
	for k, v := range values {
		obs, ok := v.(rxgo.Observable)
		if !ok {
			continue
		}
		src, ok := s.sources[obs]
		if !ok || src.hot {
			continue
		}
		if out == nil {
			out = make(map[string]any, len(values))
			for k, v := range values {
				out[k] = v
			}
		}
		out[k] = src.timeline()
	}
	if out == nil {
		return values
	}
	return out
}

// timeline returns what a cold source plays, from its subscription.
func (src *source) timeline() innerTimeline {
	t := innerTimeline{frame: src.s.frame}
	for _, e := range src.events {
		ie := innerEvent{at: e.offset, kind: e.kind}
		switch e.kind {
		case Next:
			ie.value = e.item.V
		case Error:
			ie.value = e.item.E
		}
		t.events = append(t.events, ie)
	}
	return t
}
