package marble

import (
	"testing"

	"github.com/reactivex/rxgo/v2"
)

func TestRunSettlesBeforeItEnds(t *testing.T) {
	// At frame 1 the expectation unsubscribes and c1 completes; rxgo's
	// Concat, which ignores the unsubscription, then subscribes to c2 on
	// its own goroutine. Run lets that land, and plays c2 out, before it
	// ends: rxjs flushes until its queue is empty, actions scheduled by
	// the last ones included.
	for i := 0; i < 20; i++ {
		Run(t, func(s *Scheduler) {
			c1 := s.Cold("-|", nil)
			c2 := s.Cold("--a|", nil)
			s.ExpectObservable(rxgo.Concat([]rxgo.Observable{c1, c2}), "-!").ToBe("-", nil)
			s.ExpectSubscriptions(c2).ToBe("-^--!")
		})
	}
}
