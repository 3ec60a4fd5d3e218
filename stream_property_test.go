package rxthrottle

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle/internal/specmodel"
)

// streamCase is a generated case for ThrottleChan and ThrottleSeq: when
// each value is offered, how long the consumer spends on it (the receiver's
// pause after a receive, or the loop body's run), and when ctx is
// cancelled (-1: never).
type streamCase struct {
	limits []Limit
	offer  []time.Duration
	work   []time.Duration
	cancel time.Duration
}

func randomStreamCase(r *rand.Rand) streamCase {
	limits, items := randomCase(r, 3, false)
	c := streamCase{limits: limits, offer: make([]time.Duration, len(items)), work: make([]time.Duration, len(items)), cancel: -1}
	for i, it := range items {
		c.offer[i] = it.arrive
		if r.IntN(3) > 0 {
			c.work[i] = time.Duration(r.IntN(25)) * time.Millisecond
		}
	}
	if r.IntN(3) == 0 && len(items) > 0 {
		// Half a millisecond off every event, so that no receive or start
		// ties with the cancellation.
		c.cancel = time.Duration(r.IntN(int(items[len(items)-1].arrive/time.Millisecond)+60))*time.Millisecond + time.Millisecond/2
	}
	return c
}

func (c streamCase) config() specmodel.Config {
	cfg := specmodel.Config{HoldTimeout: DefaultHoldTimeout}
	for _, l := range c.limits {
		cfg.Limits = append(cfg.Limits, specmodel.Limit{N: l.N, Window: l.Window})
	}
	return cfg
}

// chanSpec returns, by SPEC.md's held-token schedule (internal/specmodel),
// when each value is received from ThrottleChan, whose goroutine reads
// value i once value i-1 is received, and holds its token until the
// receive: value i reaches the limiter at a_i = max(offer_i, r_(i-1)),
// departs at d_i (the model's, with the earlier values' holds), and is
// received at r_i = max(d_i, the receiver's return: r_(i-1) + work_(i-1)),
// so it holds its token r_i - d_i. Values received at or after the
// cancellation are not.
func chanSpec(c streamCase) []time.Duration {
	var items []specmodel.Item
	var recv []time.Duration
	prev, ready := time.Duration(0), time.Duration(0)
	for i, offer := range c.offer {
		items = append(items, specmodel.Item{Arrive: max(offer, prev), Cancel: -1})
		d := specmodel.Schedule(c.config(), items)[i]
		r := max(d, ready)
		if c.cancel >= 0 && r >= c.cancel {
			break
		}
		items[i].Hold = r - d
		recv = append(recv, r)
		prev, ready = r, r+c.work[i]
	}
	return recv
}

// seqSpec returns, by the same model, when ThrottleSeq's loop body starts
// for each value: the iterator offers value i at max(offer_i, the end of
// the body before), the value departs at d_i and the body holds its token
// for work_i. Bodies that would start at or after the cancellation do not.
func seqSpec(c streamCase) []time.Duration {
	var items []specmodel.Item
	var starts []time.Duration
	prevEnd := time.Duration(0)
	for i, offer := range c.offer {
		items = append(items, specmodel.Item{Arrive: max(offer, prevEnd), Cancel: -1, Hold: c.work[i]})
		d := specmodel.Schedule(c.config(), items)[i]
		if c.cancel >= 0 && d >= c.cancel {
			break
		}
		starts = append(starts, d)
		prevEnd = d + c.work[i]
	}
	return starts
}

// streamRun gives each case a Bucket and a context cancelled at the case's
// instant, inside a synctest bubble.
func streamRun(t *testing.T, run func(t *testing.T, c streamCase, ctx context.Context, b *Bucket, start time.Time)) {
	for seed := range propertyCases {
		r := rand.New(rand.NewPCG(uint64(seed), 22))
		c := randomStreamCase(r)
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b, err := NewBucket(c.limits[0], withLimits(c.limits[1:])...)
				require.NoError(t, err)
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				if c.cancel >= 0 {
					time.AfterFunc(c.cancel, cancel)
				}
				run(t, c, ctx, b, time.Now())
			})
		})
	}
}

// TestPropertyThrottleChanMatchesSpec: the receives from ThrottleChan are
// the model's, to the nanosecond, with a receiver that pauses after each
// value and a context cancelled at a random instant.
func TestPropertyThrottleChanMatchesSpec(t *testing.T) {
	streamRun(t, func(t *testing.T, c streamCase, ctx context.Context, b *Bucket, start time.Time) {
		in := make(chan int)
		go func() {
			defer close(in)
			for i, offer := range c.offer {
				select {
				case <-time.After(time.Until(start.Add(offer))):
				case <-ctx.Done():
					return
				}
				select {
				case in <- i:
				case <-ctx.Done():
					return
				}
			}
		}()
		out, errf := ThrottleChan(ctx, b, in)
		var got []time.Duration
		for v := range out {
			require.Equal(t, len(got), v, "order")
			got = append(got, time.Since(start))
			time.Sleep(c.work[v])
		}
		want := chanSpec(c)
		require.Equal(t, want, got, "receives; limits %v", c.limits)
		if len(want) < len(c.offer) {
			require.ErrorIs(t, errf(), context.Canceled)
		} else {
			require.NoError(t, errf())
		}
	})
}

// TestPropertyThrottleSeqMatchesSpec: the loop bodies of ThrottleSeq start
// at the model's instants, each holding its token while it runs.
func TestPropertyThrottleSeqMatchesSpec(t *testing.T) {
	streamRun(t, func(t *testing.T, c streamCase, ctx context.Context, b *Bucket, start time.Time) {
		src := func(yield func(int) bool) {
			for i, offer := range c.offer {
				sleepUntil(start.Add(offer))
				if !yield(i) {
					return
				}
			}
		}
		seq, errf := ThrottleSeq(ctx, b, src)
		var mu sync.Mutex
		var got []time.Duration
		for v := range seq {
			mu.Lock()
			require.Equal(t, len(got), v, "order")
			got = append(got, time.Since(start))
			mu.Unlock()
			time.Sleep(c.work[v])
		}
		want := seqSpec(c)
		require.Equal(t, want, got, "body starts; limits %v", c.limits)
		if len(want) < len(c.offer) {
			require.ErrorIs(t, errf(), context.Canceled)
		} else {
			require.NoError(t, errf())
		}
	})
}
