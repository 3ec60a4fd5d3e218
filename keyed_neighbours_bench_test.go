package rxthrottle_test

import (
	"context"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/rxthrottle/rxthrottle"
)

// BenchmarkKeyedNeighbours measures what BenchmarkKeyedWait's keys=disjoint
// pays for where its keys lie in memory. Two goroutines call Wait on 128
// live keys each, of 1,024 made in order (so each key's entry and ring lie
// next to the previous key's), each walking its keys in a fixed random
// order (so that the hardware's stream prefetchers do not follow the walk):
//
//   - keys=adjacent: goroutine 0 on keys 0, 8, 16..., goroutine 1 on keys
//     1, 9, 17...: each of goroutine 1's keys lies right after one of
//     goroutine 0's, as in BenchmarkKeyedWait;
//   - keys=apart: goroutine 1 on keys 2, 10, 18... instead: an idle key
//     (512 bytes of entry and ring) between any two keys of different
//     goroutines;
//   - keys=own: as adjacent, but each goroutine on a Keyed of its own, so
//     that nothing at all is shared: the reference for perfect scaling.
//
// Run it with -cpu 1,2. On the 2 vCPU VM of BENCHMARKS.md, adjacent scales
// less than apart and own, whose costs are close: what two cores pay for
// neighbouring keys is the cache lines next to the ones each one writes.
func BenchmarkKeyedNeighbours(b *testing.B) {
	for _, keys := range []string{"adjacent", "apart", "own"} {
		b.Run("keys="+keys, func(b *testing.B) {
			const nkeys, stride = 1024, 8
			names := keyNames(nkeys)
			var limiters [2]*rxthrottle.Keyed
			limiters[0] = newLiveKeys(b, names)
			limiters[1] = limiters[0]
			if keys == "own" {
				limiters[1] = newLiveKeys(b, names)
			}
			offset := 1 // goroutine 1's keys start at offset
			if keys == "apart" {
				offset = 2
			}
			var walks [2][]string
			for g := range walks {
				for i := g * offset; i < nkeys; i += stride {
					walks[g] = append(walks[g], names[i])
				}
				r := rand.New(rand.NewPCG(uint64(g), 1))
				r.Shuffle(len(walks[g]), func(i, j int) { walks[g][i], walks[g][j] = walks[g][j], walks[g][i] })
			}
			ctx := context.Background()
			var goroutines atomic.Uint32
			startAfterSetup(b)
			b.RunParallel(func(pb *testing.PB) {
				g := (goroutines.Add(1) - 1) % 2
				k, walk := limiters[g], walks[g]
				i := 0
				for pb.Next() {
					if i++; i == len(walk) {
						i = 0
					}
					if err := k.Wait(ctx, walk[i]); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
