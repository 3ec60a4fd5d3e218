package redisstore

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
)

// TestBatchCursorIsTheFrontsOrder: while the front is FIFO, the asks a
// batch walks from the cursor are those without an answer in the front's
// order (All), however the callers arrive, are taken, answered (a
// departure, admitted at once, asking again), give up or go, and after
// a second tenant's callers (which make it not FIFO, and bump) have
// left. Random steps; no Redis.
func TestBatchCursorIsTheFrontsOrder(t *testing.T) {
	for seed := range uint64(400) {
		r := rand.New(rand.NewPCG(seed, 7))
		mixed := seed%2 == 1 // a second tenant comes and goes
		q := newQueueing()
		var flying, departed []*pending
		pick := func(ps *[]*pending) *pending {
			i := r.IntN(len(*ps))
			p := (*ps)[i]
			*ps = slices.Delete(*ps, i, i+1)
			return p
		}
		for step := range 200 {
			switch k := r.IntN(9); {
			case k < 3:
				ctx := context.Background()
				if mixed && r.IntN(4) == 0 {
					ctx = rxthrottle.WithTenant(ctx, "b", 1)
				}
				q.arrive("", ctx, true)
			case k == 3:
				for _, p := range q.win.nextBatchLocked(q.all(), 1+r.IntN(4)) {
					if p.fair != nil { // not a withdrawal
						flying = append(flying, p)
					}
				}
			case k == 4 && len(flying) > 0: // asks again, keeping its Waiter
				q.g.queueLocked(q.win, pick(&flying))
			case k == 5 && len(flying) > 0: // a departure ahead
				p := pick(&flying)
				p.res = admission{admitted: true, e: 2, now: 1}
				p.res.dep = q.g.departLocked("k", p, 1<<40)
				departed = append(departed, p)
			case k == 6 && len(flying) > 0: // admitted at once
				q.g.fairLeaveLocked("k", pick(&flying), true)
			case k == 7 && len(departed) > 0: // gives up
				q.g.fairLeaveLocked("k", pick(&departed), false)
			case k == 8 && q.win.asking > 0: // gives up while queued
				asks := q.win.asksLocked(q.win.front.All(), nil, -1)
				q.giveUp(asks[r.IntN(len(asks))])
			}
			if !q.win.front.FIFO() {
				continue
			}
			want := q.win.asksLocked(q.win.front.All(), nil, -1)
			require.Equal(t, seqs(want), seqs(q.win.asksLocked(nil, nil, -1)), "seed %d step %d", seed, step)
			require.Len(t, want, q.win.asking)
		}
		q.g.mu.Unlock()
	}
}

// seqs returns the arrival numbers of the asks ps in the front.
func seqs(ps []*pending) (s []uint64) {
	for _, p := range ps {
		s = append(s, p.fair.Seq())
	}
	return s
}
