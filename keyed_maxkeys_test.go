package rxthrottle

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// keysKept counts the keys the shards hold, with every shard locked at once
// (in index order), so the count is one instant's.
func (k *Keyed) keysKept() int {
	for i := range k.shards {
		k.shards[i].mu.Lock()
	}
	n := 0
	for i := range k.shards {
		n += k.shards[i].countLocked()
	}
	for i := range k.shards {
		k.shards[i].mu.Unlock()
	}
	return n
}

// TestKeyedMaxKeysExactUnderConcurrency: 32 goroutines make new keys while
// the bound's 100 keys are idle. Time stands still inside the bubble, so the
// new keys stay busy: exactly 100 of the 128 new keys find an idle key to
// take the place of, the other 28 are refused, and no instant has more than
// 100 keys. Each round starts over once every key is idle again.
func TestKeyedMaxKeysExactUnderConcurrency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const bound, goroutines, each, rounds = 100, 32, 4, 20
		const w = time.Second
		k, err := NewKeyed(Per(1, w), WithMaxKeys(bound))
		require.NoError(t, err)
		ctx := context.Background()
		for i := range bound {
			require.NoError(t, k.Wait(ctx, fmt.Sprint("old-", i)))
		}
		for round := range rounds {
			time.Sleep(w) // every key is idle now
			var admitted, refused atomic.Int64
			var most atomic.Int64
			stop := make(chan struct{})
			var watcher sync.WaitGroup
			watcher.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					if n := int64(k.keysKept()); n > most.Load() {
						most.Store(n)
					}
				}
			})
			var wg sync.WaitGroup
			for g := range goroutines {
				wg.Go(func() {
					for i := range each {
						err := k.Wait(ctx, fmt.Sprintf("r%d-g%d-%d", round, g, i))
						switch {
						case err == nil:
							admitted.Add(1)
						case errors.Is(err, ErrTooManyKeys):
							refused.Add(1)
						default:
							assert.NoError(t, err)
						}
					}
				})
			}
			wg.Wait()
			close(stop)
			watcher.Wait()
			require.EqualValues(t, bound, admitted.Load(), "round %d: keys admitted while %d were idle", round, bound)
			require.EqualValues(t, goroutines*each-bound, refused.Load(), "round %d", round)
			require.LessOrEqual(t, most.Load(), int64(bound), "round %d: keys kept at one instant", round)
			require.Equal(t, bound, k.keysKept(), "round %d", round)
			require.Equal(t, bound, k.Stats().KeysLive, "round %d", round)
		}
	})
}

// TestKeyedForgetRacesLookup has keys forgotten and made again all the
// time, by sweeps and by WithMaxKeys making room, while callers look them
// up without the shard's lock: a caller that finds a key just forgotten
// must look again, or two buckets for one key would each admit a full
// window. Every key keeps its window, and nothing is lost.
func TestKeyedForgetRacesLookup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n, w = 1, 10 * time.Millisecond
		k, err := NewKeyed(Per(n, w), WithMaxKeys(3))
		require.NoError(t, err)
		start := time.Now()
		var mu sync.Mutex
		times := map[string][]time.Duration{}
		var wg sync.WaitGroup
		for g := range 32 {
			wg.Go(func() {
				r := rand.New(rand.NewPCG(uint64(g), 9))
				for range 100 {
					key := fmt.Sprint("k", r.IntN(4))
					err := k.Wait(context.Background(), key)
					if errors.Is(err, ErrTooManyKeys) {
						time.Sleep(time.Duration(r.IntN(3)) * time.Millisecond)
						continue
					}
					if !assert.NoError(t, err) {
						return
					}
					mu.Lock()
					times[key] = append(times[key], time.Since(start))
					mu.Unlock()
					// On the instant the token renews, the key is idle: callers
					// of it race the sweeps that forget it.
					time.Sleep(w * time.Duration(1+r.IntN(2)))
				}
			})
		}
		wg.Wait()
		total := 0
		for key, ts := range times {
			require.LessOrEqual(t, maxInWindow(ts, w), n, key)
			total += len(ts)
		}
		require.EqualValues(t, total, k.Stats().Admitted)
		require.LessOrEqual(t, k.keysKept(), 3)
	})
}

// TestKeyedStaleEntryIsNotUsed: an entry found without the shard's lock
// and forgotten before its lock is taken is refused, and the key is made
// afresh, so that one key never has two buckets.
func TestKeyedStaleEntryIsNotUsed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k, err := NewKeyed(Per(1, time.Second))
		require.NoError(t, err)
		require.NoError(t, k.Wait(context.Background(), "a"))
		h := maphash.String(k.seed, "a")
		s := &k.shards[h%keyedShards]
		stale := s.table.Load().find(h, "a") // as a caller finds it
		require.NotNil(t, stale)

		time.Sleep(time.Second) // "a" is idle: makeRoom forgets it
		require.True(t, k.makeRoom())
		require.False(t, stale.lockLive(), "a forgotten entry is refused")
		require.Nil(t, s.table.Load().find(h, "a"))

		require.NoError(t, k.Wait(context.Background(), "a"))
		fresh := s.table.Load().find(h, "a")
		require.NotSame(t, stale, fresh)
		require.True(t, fresh.lockLive())
		fresh.mu.Unlock()
		require.Equal(t, 1, k.Stats().KeysLive)
	})
}

// TestKeyedWaitDoesNotAllocate: Wait on live keys with free tokens
// allocates nothing, once each key's ring has its final size.
func TestKeyedWaitDoesNotAllocate(t *testing.T) {
	k, err := NewKeyed(Per(10, time.Nanosecond), WithIdleMargin(time.Hour))
	require.NoError(t, err)
	ctx := context.Background()
	names := make([]string, 1024)
	for i := range names {
		names[i] = fmt.Sprint("user-", i)
		for range 2 * padEvery {
			require.NoError(t, k.Wait(ctx, names[i]))
		}
	}
	i := 0
	allocs := testing.AllocsPerRun(10000, func() {
		_ = k.Wait(ctx, names[i%len(names)])
		i += 7
	})
	require.Zero(t, allocs)
}

// TestKeyedMakeRoomWaitsForABusyShard: at the bound, a new key whose only
// chance is an idle key in a shard another caller holds waits for that
// shard instead of skipping it and refusing (as a TryLock did). On the
// real clock: the assertion only needs the caller not to have been refused
// while the shard was held, whatever the machine's load.
func TestKeyedMakeRoomWaitsForABusyShard(t *testing.T) {
	ctx := context.Background()
	k, err := NewKeyed(Per(1, time.Hour), WithMaxKeys(2))
	require.NoError(t, err)
	require.NoError(t, k.Wait(ctx, "busy"))
	k.Pause("idle", time.Now().Add(20*time.Millisecond)) // idle once the pause is over
	time.Sleep(30 * time.Millisecond)
	require.Equal(t, 2, k.Stats().KeysLive)

	s := &k.shards[maphash.String(k.seed, "idle")%keyedShards]
	s.mu.Lock()
	done := make(chan error, 1)
	go func() { done <- k.Wait(ctx, "new") }()
	select {
	case err := <-done:
		s.mu.Unlock()
		t.Fatalf("Wait returned %v while the idle key's shard was held", err)
	case <-time.After(20 * time.Millisecond):
	}
	s.mu.Unlock()
	require.NoError(t, <-done)
	require.Equal(t, 2, k.Stats().KeysLive)
}
