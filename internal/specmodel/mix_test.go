package specmodel

import (
	"math/rand/v2"
	"testing"
)

// TestRandomMeteredCaseMixes reports how often the metered random cases
// reach each outcome and feature, so that a property test over them is
// known to exercise each rule (it fails if one never shows).
func TestRandomMeteredCaseMixes(t *testing.T) {
	all := Features{Concurrency: true, Priorities: true, QueueBound: true, Deadlines: true, ReleaseN: true}
	results := map[Result]int{}
	var debts, short, capped, prios int
	for seed := range 150 {
		c := RandomMeteredCase(rand.New(rand.NewPCG(uint64(seed), 21)), 3, all)
		for _, o := range Run(c.Config, c.Items) {
			results[o.Result]++
		}
		if c.Config.Concurrency > 0 {
			capped++
		}
		for _, it := range c.Items {
			switch {
			case it.ReleaseN && it.Used > max(it.Cost, 1):
				debts++
			case it.ReleaseN:
				short++
			}
			if it.Priority != 0 {
				prios++
			}
		}
	}
	t.Logf("results %v; ReleaseN with a debt %d, without %d; cases with a cap %d; callers with a priority %d", results, debts, short, capped, prios)
	for _, r := range []Result{Departed, Cancelled, DeadlineRefused, QueueFull} {
		if results[r] == 0 {
			t.Errorf("no caller %v", r)
		}
	}
}
