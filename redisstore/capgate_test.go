package redisstore

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/rxthrottle/rxthrottle/internal/fairq"
	"github.com/stretchr/testify/require"
)

// TestGateOrderAndTimeout checks the gate alone, on virtual time: callers
// over the cap go in their order at the front (the higher priority first,
// then arrival), a caller whose context ends takes nothing, and a hold
// never released frees its place at its hold timeout from its departure,
// not before. Without the expiry (Wake's expireLocked) the last caller
// never goes; with places freed at entry rather than departure, it goes
// early.
func TestGateOrderAndTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gs := newGates(1, 1, clock.New(), 10*time.Second)
		ctx := context.Background()
		none := func() error { return nil }
		a, err := gs.enter(ctx, "k", fairq.Caller{Cost: 1}, true, none)
		require.NoError(t, err)
		require.NotNil(t, a)

		var mu sync.Mutex
		var order []string
		got := func() []string { mu.Lock(); defer mu.Unlock(); return slices.Clone(order) }
		entered := func(name string, prio int, c context.Context) chan *place {
			ch := make(chan *place, 1)
			go func() {
				p, err := gs.enter(c, "k", fairq.Caller{Prio: prio, Cost: 1}, true, none)
				if err == nil {
					mu.Lock()
					order = append(order, name)
					mu.Unlock()
				}
				ch <- p
			}()
			synctest.Wait()
			return ch
		}
		low := entered("low", 0, ctx)
		gone, cancel := context.WithCancel(ctx)
		quitter := entered("quitter", 3, gone)
		high := entered("high", 5, ctx)
		cancel()
		synctest.Wait()
		require.Nil(t, <-quitter, "the caller whose context ended took no place")
		require.True(t, gs.waiting("k"))

		a.depart()
		time.Sleep(time.Second)
		a.end(true)
		synctest.Wait()
		h := <-high
		require.Equal(t, []string{"high"}, got(), "the higher priority first")
		h.depart() // never released: its place is free 10 s after its departure
		start := time.Now()
		time.Sleep(10*time.Second - time.Millisecond)
		synctest.Wait()
		require.Equal(t, []string{"high"}, got(), "nobody goes before the hold timeout")
		l := <-low
		require.Equal(t, 10*time.Second, time.Since(start), "the timed-out hold freed its place at its timeout")
		require.Equal(t, []string{"high", "low"}, got())
		l.end(false)
		require.False(t, gs.waiting("k"))
		require.Equal(t, 1, gs.capOf("k"))
	})
}
