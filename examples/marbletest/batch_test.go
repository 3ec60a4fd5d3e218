package marbletest

import (
	"context"
	"testing"
	"time"

	"github.com/rxthrottle/rxthrottle/marble"
)

// batch is channel code with a ticker: it groups the values received from
// in into batches of up to size, and sends a batch when it is full or when
// the ticker, every d, finds one started; when in closes, it sends what it
// holds and closes its output. It ends when ctx ends.
func batch[T any](ctx context.Context, in <-chan T, size int, d time.Duration) <-chan []T {
	out := make(chan []T)
	go func() {
		defer close(out)
		ticker := time.NewTicker(d)
		defer ticker.Stop()
		var buf []T
		flush := func() bool {
			if len(buf) == 0 {
				return true
			}
			select {
			case out <- buf:
				buf = nil
				return true
			case <-ctx.Done():
				return false
			}
		}
		for {
			select {
			case v, ok := <-in:
				if !ok {
					flush()
					return
				}
				buf = append(buf, v)
				if len(buf) == size && !flush() {
					return
				}
			case <-ticker.C:
				if !flush() {
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

func TestChanBatchBySizeAndTicker(t *testing.T) {
	marble.Run(t, func(s *marble.Scheduler) {
		// Batches of up to 3, a tick every 5 frames: a b c fill one at
		// 3; the tick at 5 finds nothing; d e go with the tick at 10;
		// f g h fill one at 13; the close at 14 ends the output.
		in := marble.ColdChan[string](s, "ab-c----de-fgh|", nil)
		out := batch(s.Context(), in, 3, 5*s.Frame())
		batches := map[string][]string{"x": {"a", "b", "c"}, "y": {"d", "e"}, "z": {"f", "g", "h"}}
		marble.ExpectChan(s, out).ToBe("---x------y--z|", batches)
	})
}
