package rxthrottle

import (
	"context"
	"errors"
	"fmt"
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
		n += len(k.shards[i].keys)
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
