package marbletest

import (
	"context"
	"sync"
	"testing"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/marble"
)

// admissions starts one caller of bucket.Wait per name received from
// arrivals, each on its own goroutine as concurrent callers would be, and
// sends each caller's name on the channel it returns once Wait admitted
// it. The channel closes when arrivals has closed and every caller has
// been admitted (or ctx ended).
func admissions(ctx context.Context, bucket *rxthrottle.Bucket, arrivals <-chan string) <-chan string {
	admitted := make(chan string)
	go func() {
		var wg sync.WaitGroup
		for name := range arrivals {
			wg.Go(func() {
				if bucket.Wait(ctx) != nil {
					return // ctx ended: not admitted
				}
				select {
				case admitted <- name:
				case <-ctx.Done():
				}
			})
		}
		wg.Wait()
		close(admitted)
	}()
	return admitted
}

// The schedule SPEC.md gives, e_i = max(a_i, e_(i-1), e_(i-N) + W), for
// callers of Bucket.Wait, checked as a marble: each letter of the input is
// a caller arriving, each letter of the output its admission.

func TestChanBucketWaitCallersSpreadOut(t *testing.T) {
	marble.Run(t, func(s *marble.Scheduler) {
		// 2 per 5 frames: a caller every other frame goes in pairs, a
		// pair every 5 frames (the example of the README's Throttle).
		bucket, err := rxthrottle.NewBucket(rxthrottle.Per(2, 5*s.Frame()))
		if err != nil {
			s.T().Fatal(err)
		}
		arrivals := marble.ColdChan[string](s, "a-b-c-d-e-f-g|", nil)
		out := admissions(s.Context(), bucket, arrivals)
		marble.ExpectChan(s, out).ToBe("a-b--c-d--e-f--(g|)", nil)
	})
}

func TestChanBucketWaitCallersBurst(t *testing.T) {
	marble.Run(t, func(s *marble.Scheduler) {
		// a and b arrive together and go at once (a burst of N); c waits
		// for a's token, renewed at 5; d, at 6, finds b's free; e, at 8,
		// waits for c's (10); f, at 12, for nothing. The callers arrive
		// one by one within a frame, each admitted before the next, so
		// the order within a frame is fixed.
		bucket, err := rxthrottle.NewBucket(rxthrottle.Per(2, 5*s.Frame()))
		if err != nil {
			s.T().Fatal(err)
		}
		arrivals := marble.ColdChan[string](s, "(abc)-d-e---f|", nil)
		out := admissions(s.Context(), bucket, arrivals)
		marble.ExpectChan(s, out).ToBe("(ab)-cd---e-f|", nil)
	})
}
