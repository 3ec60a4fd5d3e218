package attempt_test

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/rxthrottle/rxthrottle/attempt"
)

func TestPolicyCheck(t *testing.T) {
	for _, tc := range []struct {
		opts []attempt.Option
		want string
	}{
		{nil, ""},
		{[]attempt.Option{attempt.MaxAttempts(0)}, "WithMaxAttempts(0): at least 1 attempt is required"},
		{[]attempt.Option{attempt.InFlightBound(-time.Second)}, "WithInFlightBound(-1s): the bound must not be negative"},
		{[]attempt.Option{attempt.MaxAttempts(2), attempt.InFlightBound(0)}, ""},
		{[]attempt.Option{attempt.MaxKeptOpen(-1)}, "WithMaxKeptOpen(-1): the cap must not be negative"},
		{[]attempt.Option{attempt.MaxKeptOpen(0), attempt.StrictInFlightBound()}, ""},
		{[]attempt.Option{attempt.MaxPause(0)}, "WithMaxPause(0s): the maximum pause must be positive"},
		{[]attempt.Option{attempt.MaxPause(time.Second)}, ""},
	} {
		p := attempt.Default()
		for _, o := range tc.opts {
			o(&p)
		}
		got := ""
		if err := p.Check(); err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("Check() = %q, want %q", got, tc.want)
		}
	}
	p := attempt.Default()
	if p.MaxAttempts != attempt.DefaultMaxAttempts || p.InFlightBound != attempt.DefaultInFlightBound ||
		p.MaxKeptOpen != attempt.DefaultMaxKeptOpen || p.MaxPause != attempt.DefaultMaxPause || p.StrictInFlightBound {
		t.Errorf("Default() = %+v", p)
	}
	attempt.MaxAttempts(3)(&p)
	for n, want := range []bool{true, true, false, false} {
		if got := p.Retry(n + 1); got != want {
			t.Errorf("Retry(%d) with 3 attempts = %v, want %v", n+1, got, want)
		}
	}
}

// Each step holds a token past its error with a bound, maybe ends it
// early, and checks when it was released and the counters.
func TestHolds(t *testing.T) {
	for _, tc := range []struct {
		name     string
		bound    time.Duration
		nilFunc  bool
		endAt    time.Duration // 0: never ended early
		released time.Duration // -1: never released
		stats    attempt.HoldStats
	}{
		{"bound", 10 * time.Second, false, 0, 10 * time.Second, attempt.HoldStats{AfterWrite: 1, Held: 1}},
		{"ended early", 10 * time.Second, false, 3 * time.Second, 3 * time.Second, attempt.HoldStats{AfterWrite: 1, Held: 1, Early: 1}},
		{"ended after the bound", 2 * time.Second, false, 5 * time.Second, 2 * time.Second, attempt.HoldStats{AfterWrite: 1, Held: 1}},
		{"zero bound", 0, false, 0, 0, attempt.HoldStats{AfterWrite: 1}},
		{"nothing to hold", 10 * time.Second, true, 0, -1, attempt.HoldStats{AfterWrite: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var h attempt.Holds
				start := time.Now()
				var releases atomic.Int32
				var at time.Duration = -1
				release := func() { releases.Add(1); at = time.Since(start) }
				if tc.nilFunc {
					release = nil
				}
				x := h.PastError(clock.New(), tc.bound, release)
				if tc.endAt > 0 {
					time.Sleep(tc.endAt)
					x.End()
				}
				time.Sleep(time.Minute)
				synctest.Wait()
				if at != tc.released {
					t.Errorf("released at %v, want %v", at, tc.released)
				}
				if n := releases.Load(); n > 1 {
					t.Errorf("released %d times", n)
				}
				if x.End() {
					t.Error("End after the release reported a release")
				}
				if got := h.Stats(); got != tc.stats {
					t.Errorf("Stats() = %+v, want %+v", got, tc.stats)
				}
			})
		})
	}
}
