package limitrule

import (
	"testing"
	"time"
)

func TestInvalid(t *testing.T) {
	for _, tc := range []struct {
		n      int
		window time.Duration
		want   string
	}{
		{1, 1, ""},
		{5, time.Second, ""},
		{0, time.Second, "N must be at least 1"},
		{-1, time.Second, "N must be at least 1"},
		{0, 0, "N must be at least 1"},
		{1, 0, "Window must be positive"},
		{1, -time.Second, "Window must be positive"},
	} {
		if got := Invalid(tc.n, tc.window); got != tc.want {
			t.Errorf("Invalid(%d, %v) = %q, want %q", tc.n, tc.window, got, tc.want)
		}
	}
}
