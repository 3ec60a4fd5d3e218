// Package bench holds what compares rxthrottle with its peers
// (golang.org/x/time/rate, go.uber.org/ratelimit and, on Redis,
// github.com/go-redis/redis_rate): the side-by-side benchmarks and the test
// that shows, with exact times, how the peers break a strict window.
//
// It is a module of its own, so that the peers never enter the module graph
// of a program that imports rxthrottle. It has no API: everything is in its
// _test.go files. Run it from this directory:
//
//	go test -v -run Peers .
//	go test -run '^$' -bench . -benchmem .
//
// or with bench/run.sh, which interleaves the rounds for benchstat.
package bench
