// Package bench holds what compares rxthrottle with its peers
// (golang.org/x/time/rate, go.uber.org/ratelimit and, on Redis,
// github.com/go-redis/redis_rate): the side-by-side benchmarks, the test
// that shows, with exact times, how the peers break a strict window, and
// TestRedisProcs, which measures admissions per second from several OS
// processes on one Redis key.
//
// It is a module of its own, so that the peers never enter the module graph
// of a program that imports rxthrottle. It has no API: everything is in its
// _test.go files. Run it from this directory (or from the root, whose
// go.work includes it, with ./bench/ for .):
//
//	go test -v -run Peers .
//	go test -run '^$' -bench . -benchmem .
//	RXTHROTTLE_REDIS_PROCS=1x1,1x8,4x8 go test -run TestRedisProcs -v .
//
// or with bench/run.sh, which interleaves the rounds for benchstat.
package bench
