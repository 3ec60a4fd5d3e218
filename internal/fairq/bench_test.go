package fairq

import (
	"fmt"
	"testing"
)

// BenchmarkPushPop keeps 64 callers waiting and serves one for each new
// arrival, over 1 (a Bucket's usual queue) to 256 tenants.
func BenchmarkPushPop(b *testing.B) {
	for _, tenants := range []int{1, 16, 256} {
		b.Run(fmt.Sprintf("tenants=%d", tenants), func(b *testing.B) {
			keys := make([]string, tenants)
			for i := range keys {
				keys[i] = fmt.Sprint("t", i)
			}
			var q Queue[int]
			items := make([]Item[int], 1024) // far more than the 64 waiting: an item is re-pushed long after it left
			for i := range 64 {
				q.Push(&items[i], Caller{Tenant: keys[i%tenants]})
			}
			next := 64
			b.ReportAllocs()
			for b.Loop() {
				q.Pop()
				q.Push(&items[next%1024], Caller{Tenant: keys[next%tenants]})
				next++
			}
		})
	}
}
