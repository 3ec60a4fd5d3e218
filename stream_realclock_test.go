package rxthrottle_test

import (
	"context"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
)

// TestStreamsRealClockWindow runs 12 ThrottleChan and 12 ThrottleSeq
// streams over one Bucket on the real clock, each cancelled at a random
// instant or run to its end, and stamps in each loop body an "arrival" at
// a random instant inside it (where a server would count its request):
// whatever the machine's load, never more than N in any window, with the
// channels' values taking tokens of the same Bucket; every value delivered
// is in order, and a stream not cancelled delivers everything. (A
// receiver's own clock reading after a receive can come late, after the
// token began to renew, so it proves nothing about the window; the
// property tests check the receives on virtual time.)
func TestStreamsRealClockWindow(t *testing.T) {
	const n, w, perStream = 4, 20 * time.Millisecond, 15
	b, err := rxthrottle.NewBucket(rxthrottle.Per(n, w))
	require.NoError(t, err)
	start := time.Now()
	var mu sync.Mutex
	var stamps []time.Duration
	stamp := func() {
		mu.Lock()
		stamps = append(stamps, time.Since(start))
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for s := range 24 {
		ctx, cancel := context.WithCancel(context.Background())
		cancelled := s%3 == 0
		if cancelled {
			time.AfterFunc(rand.N(400*time.Millisecond), cancel)
		}
		wg.Go(func() {
			defer cancel()
			got := 0
			if s%2 == 0 {
				in := make(chan int)
				go func() {
					defer close(in)
					for i := range perStream {
						select {
						case in <- i:
						case <-ctx.Done():
							return
						}
					}
				}()
				out, errf := rxthrottle.ThrottleChan(ctx, b, in)
				for v := range out {
					require.Equal(t, got, v)
					got++
				}
				if !cancelled {
					require.NoError(t, errf())
				}
			} else {
				seq, errf := rxthrottle.ThrottleSeq(ctx, b, func(yield func(int) bool) {
					for i := range perStream {
						if !yield(i) {
							return
						}
					}
				})
				for v := range seq {
					// The body's "request" arrives at a random instant
					// inside it: it holds its token until it ends.
					time.Sleep(rand.N(2 * time.Millisecond))
					stamp()
					time.Sleep(rand.N(2 * time.Millisecond))
					require.Equal(t, got, v)
					got++
				}
				if !cancelled {
					require.NoError(t, errf())
				}
			}
			if !cancelled {
				require.Equal(t, perStream, got)
			}
		})
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	sort.Slice(stamps, func(i, j int) bool { return stamps[i] < stamps[j] })
	require.LessOrEqual(t, rxthrottle.MaxInWindow(stamps, w), n)
}
