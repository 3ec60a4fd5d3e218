package seconds

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestCeil(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want int64
	}{
		{-time.Second, 0}, {0, 0}, {1, 1}, {time.Second, 1},
		{time.Second + 1, 2}, {300 * time.Second, 300},
		// guard.CeilSeconds added a second less a nanosecond first, which
		// wrapped to a negative count here.
		{math.MaxInt64, math.MaxInt64/int64(time.Second) + 1},
	}
	for i, tt := range tests {
		assert.Equal(t, tt.want, Ceil(tt.d), "step %d: Ceil(%v)", i, tt.d)
	}
}
