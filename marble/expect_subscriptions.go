package marble

import (
	"fmt"

	"github.com/reactivex/rxgo/v2"
)

// SubscriptionExpectation is a source whose subscriptions are under test;
// see ExpectSubscriptions.
type SubscriptionExpectation struct {
	s      *Scheduler
	src    *source
	caller string
	want   []subscriptionRecord
	toBe   bool
	toBeAt string // where ToBe was called: failures are reported there
	bad    bool
}

// ExpectSubscriptions checks when a source made by Cold or Hot of this
// Scheduler was subscribed and unsubscribed; ToBe says how it must be.
func (s *Scheduler) ExpectSubscriptions(obs rxgo.Observable) *SubscriptionExpectation {
	s.rep.Helper()
	e := &SubscriptionExpectation{s: s, caller: location()}
	s.mu.Lock()
	src, ok := s.sources[obs]
	s.mu.Unlock()
	if !ok {
		s.rep.Errorf("marble: ExpectSubscriptions of an observable that is not a Cold or Hot source of this Scheduler")
		e.bad = true
		return e
	}
	e.src = src
	s.subExpects = append(s.subExpects, e)
	return e
}

// ToBe says, with one subscription marble per subscription, when the
// source must have been subscribed (^) and unsubscribed (!), in frames
// from the start of Run: "^---!" for a subscription at frame 0 ended at
// frame 4, "--^" for one made at frame 2 and never ended. Subscriptions
// are compared in the order they were made (ties by unsubscription). A
// subscription ends when its subscriber cancels it, or at the source's own
// | or #; one still open when the run ends has no !.
//
// A marble without ^ stands for no subscription at all, as in rxjs (which
// drops the subscription marbles whose subscription frame is Infinity):
// ToBe("----------") and ToBe() both say the source was never subscribed,
// and ToBe("^--!", "-----") expects the one subscription "^--!".
func (e *SubscriptionExpectation) ToBe(marbles ...string) {
	s := e.s
	s.rep.Helper()
	if e.toBe {
		s.rep.Errorf("marble: ToBe called twice on one ExpectSubscriptions")
		return
	}
	e.toBe, e.toBeAt = true, location()
	if e.bad {
		return
	}
	for _, m := range marbles {
		tl, err := s.parseSubscription(m)
		if err != nil {
			s.rep.Errorf("%v", err)
			e.bad = true
			return
		}
		sub, ok := tl.subscribeAt(s.frame)
		if !ok {
			continue // never subscribed
		}
		r := subscriptionRecord{subscribed: sub}
		if unsub, ok := tl.unsubscribeAt(s.frame); ok {
			r.unsubscribed, r.ended = unsub, true
		}
		e.want = append(e.want, r)
	}
}

func (e *SubscriptionExpectation) check() {
	s := e.s
	s.rep.Helper()
	if e.bad {
		return
	}
	if !e.toBe {
		s.reportAt(e.caller, "marble: ExpectSubscriptions without ToBe")
		return
	}
	s.mu.Lock()
	got := append([]subscriptionRecord(nil), e.src.log...)
	s.mu.Unlock()
	if msg := diffSubscriptions(e.want, got, s.frame); msg != "" {
		s.reportAt(e.toBeAt, "marble: %s", msg)
	}
}

func (r subscriptionRecord) String() string {
	if r.ended {
		return fmt.Sprintf("[%v, %v]", r.subscribed, r.unsubscribed)
	}
	return fmt.Sprintf("[%v, -]", r.subscribed)
}
