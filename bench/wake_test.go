package bench_test

import (
	"fmt"
	"testing"
)

// BenchmarkWake measures, without Redis, what group commit's hand-over
// costs the client: n goroutines each queue a fresh pending (a channel)
// and park on it; the leader takes the n pendings, closes their channels,
// and each woken goroutine comes back with a new one. One op is one such
// cycle of n goroutines; ns/goroutine is its time per admission and
// cpu-ns/goroutine the CPU time the process spent on it (with -cpu 2 the
// second P's thread spins and sleeps too). Run with -cpu 1,2.
func BenchmarkWake(b *testing.B) {
	for _, n := range []int{1, 4, 8, 32} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			arrive := make(chan chan struct{}, n)
			stop := make(chan struct{})
			for range n {
				go func() {
					for {
						done := make(chan struct{})
						select {
						case arrive <- done:
						case <-stop:
							return
						}
						select {
						case <-done:
						case <-stop:
							return
						}
					}
				}()
			}
			batch := make([]chan struct{}, 0, n)
			cpu0 := clientCPU(b)
			b.ReportAllocs()
			for b.Loop() {
				batch = batch[:0]
				for range n {
					batch = append(batch, <-arrive)
				}
				for _, d := range batch {
					close(d)
				}
			}
			cpu := clientCPU(b) - cpu0
			close(stop)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/goroutine")
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N*n), "cpu-ns/goroutine")
		})
	}
}
