package httpthrottle

import (
	"sync"
	"testing"
)

// RunAll (for the external tests too: it is in no build but the tests) runs f for each name as a subtest of t, all at once, and returns
// once every one has ended. It is for cases on the real clock that mostly
// wait (a loopback server's quota of 10 a second, say): go test runs
// parallel tests -parallel at a time, GOMAXPROCS by default, so two at a
// time on a two-core CI, and a dozen such cases of 6 s each took a minute
// of the package's wall time where they need 6 s. What each case asserts
// must hold at any load, so running them together changes nothing of it.
// t itself goes parallel with the package's other tests.
func RunAll(t *testing.T, names []string, f func(t *testing.T, i int)) {
	t.Parallel()
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() {
			t.Run(name, func(t *testing.T) { f(t, i) })
		})
	}
	wg.Wait()
}
