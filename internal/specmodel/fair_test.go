package specmodel

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestFairSharesLateTenant is issue 31's case on the model: tenant A
// queues 100 calls at 0, B (the same weight) 10 calls at 2.5 s, on 10 per
// second: B's calls all go within 2 windows of their arrival, A's take the
// rest, and every window holds 10.
func TestFairSharesLateTenant(t *testing.T) {
	var items []Item
	for range 100 {
		items = append(items, Item{Cancel: -1, Tenant: "A", Weight: 1})
	}
	for range 10 {
		items = append(items, Item{Arrive: 2500 * time.Millisecond, Cancel: -1, Tenant: "B", Weight: 1})
	}
	cfg := Config{Limits: []Limit{{N: 10, Window: time.Second}}}
	d := Schedule(cfg, items)
	for i, at := range d[100:] {
		if at < 2500*time.Millisecond || at > 4500*time.Millisecond {
			t.Errorf("B's call %d goes at %v, want within [2.5s, 4.5s]", i, at)
		}
	}
	perWindow := map[time.Duration][2]int{}
	for i, at := range d {
		c := perWindow[at.Truncate(time.Second)]
		c[i/100]++
		perWindow[at.Truncate(time.Second)] = c
	}
	// At 3 s and 4 s, A and B alternate: 5 each.
	for _, s := range []time.Duration{3 * time.Second, 4 * time.Second} {
		if c := perWindow[s]; c != [2]int{5, 5} {
			t.Errorf("window at %v: A %d, B %d, want 5 and 5", s, c[0], c[1])
		}
	}
	if got := MaxInWindow(d, nil, time.Second); got != 10 {
		t.Errorf("max in a window = %d, want 10", got)
	}
	if last := d[99]; last != 10*time.Second {
		t.Errorf("A's last goes at %v, want 10s (110 calls at 10 a second)", last)
	}
}

// TestFairSharesWeights: tenants of weights 2 and 1, with 60 calls each
// arriving together, alternately, on 9 per second: the first 9 go at once
// in arrival order (nobody waits yet), then each window goes 6 to A and 3
// to B while both wait (A's last call waits until window 10).
func TestFairSharesWeights(t *testing.T) {
	var items []Item
	for range 60 {
		items = append(items, Item{Cancel: -1, Tenant: "A", Weight: 2}, Item{Cancel: -1, Tenant: "B", Weight: 1})
	}
	d := Schedule(Config{Limits: []Limit{{N: 9, Window: time.Second}}}, items)
	for w := 1; w <= 9; w++ {
		var a, b int
		for i, at := range d {
			if at.Truncate(time.Second) == time.Duration(w)*time.Second {
				if i%2 == 0 {
					a++
				} else {
					b++
				}
			}
		}
		if a != 6 || b != 3 {
			t.Errorf("window %d: A %d, B %d, want 6 and 3", w, a, b)
		}
	}
}

// TestOneTenantIsFIFO checks that callers of a single tenant, of any
// weight, are scheduled as callers of no tenant.
func TestOneTenantIsFIFO(t *testing.T) {
	all := Features{Concurrency: true, Priorities: true, QueueBound: true, Deadlines: true, ReleaseN: true}
	for seed := range 1500 {
		c := RandomMeteredCase(rand.New(rand.NewPCG(uint64(seed), 31)), 3, all)
		want := Run(c.Config, c.Items)
		for i := range c.Items {
			c.Items[i].Tenant, c.Items[i].Weight = "t", float64(1+i%3)
		}
		got := Run(c.Config, c.Items)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("seed %d: caller %d %+v with one tenant, %+v without", seed, i, got[i], want[i])
			}
		}
	}
}
