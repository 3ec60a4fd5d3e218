package interop

import (
	"net/http"
	"strconv"
	"testing"
	"time"
)

// BenchmarkLearnReal runs 200 requests per iteration from c8 and c32
// goroutines through a learning Transport (from Per(1000, 1s) with
// WithLearnLimits, and NewLearningTransport) to each real limiter of
// servers at 10 per second on loopback, retrying refused requests. It
// reports the refusals as the server counted them, the time over the
// ideal (the last of 200 requests sent as early as the quota allows: 19
// windows), and the throughput as a share of the quota. Run it with
// -benchtime 1x (bench/run.sh learnreal): an iteration takes about 20 s.
func BenchmarkLearnReal(b *testing.B) {
	const total = 200
	ideal := time.Duration((total+n-1)/n-1) * time.Second
	for _, srv := range learnServers {
		for _, start := range []string{"Per(1000,1s)", "NewLearningTransport"} {
			for _, workers := range []int{8, 32} {
				b.Run("server="+srv.name+"/start="+start+"/c="+itoa(workers), func(b *testing.B) {
					var refused, ratio, share float64
					for range b.N {
						s := newCounted(b, srv.wrap)
						tr := newTransport(b, s.Client().Transport, start)
						begin := time.Now()
						load(b, tr, s.URL, workers, total)
						elapsed := time.Since(begin)
						refused += float64(len(s.log()) - total)
						ratio += float64(elapsed) / float64(ideal)
						share += float64(total) / elapsed.Seconds() / n
					}
					k := float64(b.N)
					b.ReportMetric(refused/k, "refusals/run")
					b.ReportMetric(ratio/k, "x-ideal")
					b.ReportMetric(100*share/k, "%-quota")
					b.ReportMetric(0, "ns/op")
				})
			}
		}
	}
}

// BenchmarkLearnNginx is BenchmarkLearnReal at nginx's limit_req (10 r/s,
// no header), without a burst and with burst=5 nodelay, refusing with 503
// and with 429; it is skipped where nginx is not installed. An iteration
// takes about 22 s. The ideal is one request per 100 ms (with a burst,
// its first 6 at once).
func BenchmarkLearnNginx(b *testing.B) {
	const total = 200
	for _, burst := range []int{0, 5} {
		ideal := time.Duration(total-1-burst) * time.Second / n
		for _, status := range []int{503, 429} {
			for _, start := range []string{"Per(1000,1s)", "NewLearningTransport"} {
				for _, workers := range []int{8, 32} {
					b.Run("burst="+strconv.Itoa(burst)+"/status="+strconv.Itoa(status)+"/start="+start+"/c="+itoa(workers), func(b *testing.B) {
						var refused, ratio, share float64
						for range b.N {
							url, log := startNginx(b, n, burst, status)
							tr := newTransport(b, &http.Transport{}, start)
							begin := time.Now()
							load(b, tr, url, workers, total)
							elapsed := time.Since(begin)
							arrivals := log()
							for wait := time.Now().Add(2 * time.Second); len(arrivals) < total && time.Now().Before(wait); arrivals = log() {
								time.Sleep(10 * time.Millisecond) // nginx writes its log after the answer
							}
							refused += float64(len(arrivals) - total)
							ratio += float64(elapsed) / float64(ideal)
							share += float64(total) / elapsed.Seconds() / n
						}
						k := float64(b.N)
						b.ReportMetric(refused/k, "refusals/run")
						b.ReportMetric(ratio/k, "x-ideal")
						b.ReportMetric(100*share/k, "%-quota")
						b.ReportMetric(0, "ns/op")
					})
				}
			}
		}
	}
}
