package limitererr_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rxthrottle/rxthrottle/internal/limitererr"
	"github.com/rxthrottle/rxthrottle/internal/limitererr/limitererrtest"
)

// Every case of the adapters' table, decided by Failed itself; and a
// deadline already passed on the real clock whose timer has not fired yet
// (ctx.Err() still nil) is the caller's end, not a failure.
func TestFailed(t *testing.T) {
	for _, tc := range limitererrtest.Cases() {
		t.Run(tc.Name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			err := tc.Take(ctx, cancel)
			if got := limitererr.Failed(ctx, err); got != tc.Failed {
				t.Fatalf("Failed(ctx, %v) = %v, want %v", err, got, tc.Failed)
			}
		})
	}
	passed := pastDeadline{Context: t.Context(), dl: time.Now().Add(-time.Second)}
	if limitererr.Failed(passed, errors.New("store down")) {
		t.Fatal("Failed with the deadline passed = true, want false")
	}
}

// pastDeadline is a context whose deadline has passed while its Err is
// still nil, as a real context's is until its timer fires.
type pastDeadline struct {
	context.Context
	dl time.Time
}

func (c pastDeadline) Deadline() (time.Time, bool) { return c.dl, true }
