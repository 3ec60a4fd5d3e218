package httpthrottle_test

import (
	"net/http"
	"sync"
	"time"
)

// leakyBucket is nginx's limit_req on the caller's clock (a bubble's
// under synctest): rate requests per second, a leaky bucket of burst
// (nodelay: a request within the burst goes at once), its excess kept in
// thousandths of a request over whole milliseconds as nginx keeps it
// (ngx_http_limit_req_lookup), refusing with status and no header at all.
// A request refused does not count.
type leakyBucket struct {
	rate, burst, status int

	mu     sync.Mutex
	excess int64 // thousandths of a request
	last   time.Time
	seen   bool
	log    []leakyArrival
}

type leakyArrival struct {
	at       time.Time
	accepted bool
}

func (b *leakyBucket) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	b.mu.Lock()
	now := time.Now()
	excess := int64(0)
	if b.seen {
		ms := max(0, now.Truncate(time.Millisecond).Sub(b.last).Milliseconds())
		excess = max(0, b.excess-int64(b.rate)*1000*ms/1000+1000)
	}
	ok := excess <= int64(b.burst)*1000
	if ok {
		b.excess, b.last, b.seen = excess, now.Truncate(time.Millisecond), true
	}
	b.log = append(b.log, leakyArrival{now, ok})
	b.mu.Unlock()
	if !ok {
		w.WriteHeader(b.status)
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (b *leakyBucket) arrivals() []leakyArrival {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]leakyArrival(nil), b.log...)
}

// times returns the arrivals' times from start and how many were refused.
func (b *leakyBucket) times(start time.Time) (times []time.Duration, refused int) {
	for _, a := range b.arrivals() {
		times = append(times, a.at.Sub(start))
		if !a.accepted {
			refused++
		}
	}
	return times, refused
}
