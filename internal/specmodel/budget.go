package specmodel

import (
	"fmt"
	"sort"
	"time"
)

// BudgetEvent is an admission a retry budget counted (SPEC.md, "Retry
// budget"): a first attempt or a retry, at At from the start.
type BudgetEvent struct {
	At    time.Duration
	Retry bool
}

// BudgetWindows returns an error naming a window [s, s+w) of
// events (in any order) whose retries exceed ratio times its first
// attempts plus min, or nil if every window keeps to the budget. It looks
// at every distinct window: one starting at each event, and one starting
// just after each event's instant minus w (where the event comes in).
func BudgetWindows(events []BudgetEvent, w time.Duration, ratio float64, min int) error {
	return budgetWindows(events, w, ratio, min, func(time.Duration) bool { return true })
}

// BudgetAdmits reports whether the budget's rule admits a retry at t after
// known, the admissions counted before it (none after t): every window
// that holds t keeps to the budget with it, counting only known.
func BudgetAdmits(known []BudgetEvent, t, w time.Duration, ratio float64, min int) bool {
	with := append(known[:len(known):len(known)], BudgetEvent{At: t, Retry: true})
	return budgetWindows(with, w, ratio, min, func(s time.Duration) bool { return s <= t && t < s+w }) == nil
}

// budgetWindows is BudgetWindows over the windows whose start passes keep.
func budgetWindows(events []BudgetEvent, w time.Duration, ratio float64, min int, keep func(time.Duration) bool) error {
	sorted := append([]BudgetEvent(nil), events...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].At < sorted[j].At })
	for _, e := range sorted {
		for _, s := range []time.Duration{e.At, e.At - w + 1} {
			if !keep(s) {
				continue
			}
			f, r := 0, 0
			for i := sort.Search(len(sorted), func(i int) bool { return sorted[i].At >= s }); i < len(sorted) && sorted[i].At < s+w; i++ {
				if sorted[i].Retry {
					r++
				} else {
					f++
				}
			}
			if float64(r) > ratio*float64(f)+float64(min) {
				return fmt.Errorf("window [%v, %v): %d retries, %d first attempts: over %v x %d + %d", s, s+w, r, f, ratio, f, min)
			}
		}
	}
	return nil
}
