package marble

import (
	"math/rand/v2"
	"testing"
)

// TestChanIdentityProperty checks, on random marbles, that a cold channel
// read directly and through a copying goroutine gives back its own marble,
// and a hot one too, one frame after its ^ (a # becomes a Result with its
// error, then the close): channel sources and ExpectChan lose, add and
// move nothing, groups included.
func TestChanIdentityProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 50; i++ {
		m := randomMarble(r)
		Run(t, func(s *Scheduler) {
			ExpectResultChan(s, ColdResultChan[string](s, m, nil)).ToBe(m, nil)
			ExpectResultChan(s, relay(s.Context(), ColdResultChan[string](s, m, nil), 0)).ToBe(m, nil)
			ExpectResultChan(s, relay(s.Context(), HotResultChan[string](s, "--^"+m, nil), 0)).ToBe("-"+m, nil)
		})
		if t.Failed() {
			t.Fatalf("marble %q", m)
		}
	}
}
