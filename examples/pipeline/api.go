package main

import (
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/rxthrottle/rxthrottle"
)

// api is the local API the pipelines call: GET /work/{id} answers
// {"id": "...", "status": "done"}. It enforces its own quota, the way a real
// API would: a request that would be the (N+1)-th to arrive in any window W
// is refused with 429 Too Many Requests and a Retry-After. It also keeps the
// figures the example prints: how many it served and refused, and the most
// requests it saw in any one window.
type api struct {
	quota rxthrottle.Limit

	mu          sync.Mutex
	arrivals    []time.Time // of the requests served, in order
	refused     int
	maxInWindow int
}

func newAPI(quota rxthrottle.Limit) *api { return &api{quota: quota} }

func (a *api) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id, ok := strings.CutPrefix(r.URL.Path, "/work/")
	if !ok || r.Method != http.MethodGet {
		http.NotFound(w, r)
		return
	}
	now := time.Now()
	a.mu.Lock()
	inWindow, oldest := a.windowLocked(now)
	if inWindow >= a.quota.N {
		a.refused++
		a.mu.Unlock()
		// Whole seconds, rounded up, as Retry-After requires.
		wait := oldest.Add(a.quota.Window).Sub(now)
		w.Header().Set("Retry-After", fmt.Sprint(int64(math.Ceil(wait.Seconds()))))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprintf(w, `{"message": "quota of %v exceeded"}`, a.quota)
		return
	}
	a.arrivals = append(a.arrivals, now)
	a.maxInWindow = max(a.maxInWindow, inWindow+1)
	a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id": %q, "status": "done"}`, id)
}

// windowLocked counts the served requests in the window that ends at now
// (those less than W before it) and returns the oldest of them. Requires
// a.mu.
func (a *api) windowLocked(now time.Time) (n int, oldest time.Time) {
	for i := len(a.arrivals) - 1; i >= 0 && now.Sub(a.arrivals[i]) < a.quota.Window; i-- {
		n, oldest = n+1, a.arrivals[i]
	}
	return n, oldest
}

// report returns the API's figures.
func (a *api) report() (served, refused, maxInWindow int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.arrivals), a.refused, a.maxInWindow
}
