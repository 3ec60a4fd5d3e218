package httpthrottle_test

import (
	"slices"
	"sync"
	"testing"
	"time"
)

// trip is one request of a worker, as its limiter saw it: when the
// Transport asked for its token (arrival at the limiter, a), when it got it
// (departure, d), and when it released it (completion, c: the response
// headers or the error were back).
type trip struct {
	a, d, c time.Time
}

// tripLog records the trips of each worker. Safe for concurrent use.
type tripLog struct {
	mu      sync.Mutex
	workers [][]trip
}

func newTripLog(workers int) *tripLog { return &tripLog{workers: make([][]trip, workers)} }

func (l *tripLog) add(worker int, tr trip) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.workers[worker] = append(l.workers[worker], tr)
}

// schedule is the outcome of a run, or of its ideal replay.
type schedule struct {
	start, end time.Time // the first arrival, the last completion
	departures []time.Time
}

func (s schedule) total() time.Duration { return s.end.Sub(s.start) }

// actual returns the run as it happened.
func (l *tripLog) actual() schedule {
	l.mu.Lock()
	defer l.mu.Unlock()
	var s schedule
	for _, w := range l.workers {
		for _, tr := range w {
			if s.start.IsZero() || tr.a.Before(s.start) {
				s.start = tr.a
			}
			if tr.c.After(s.end) {
				s.end = tr.c
			}
			s.departures = append(s.departures, tr.d)
		}
	}
	slices.SortFunc(s.departures, time.Time.Compare)
	return s
}

// ideal replays the run on SPEC's held-token schedule with nothing late: the
// same workers making the same requests, each worker's first arrival and
// its pause between a completion and its next arrival as measured, each
// request's round trip (d to c, the network and the server) as measured,
// and every departure exactly at
//
//	d_i = max(a_i, d_(i-1), c*_(i-N) + W)
//
// (SPEC.md, "Held tokens: renewal on completion"), c* the completions of
// the earlier requests in time order. Whatever the run lost to a loaded
// machine (a late timer, a slow wake-up) is what it took longer than this.
func (l *tripLog) ideal(n int, w time.Duration) schedule {
	l.mu.Lock()
	defer l.mu.Unlock()
	type worker struct {
		trips []trip
		next  int       // index of its next request
		at    time.Time // the arrival of its next request
	}
	ws := make([]*worker, 0, len(l.workers))
	for _, trips := range l.workers {
		if len(trips) > 0 {
			ws = append(ws, &worker{trips: trips, at: trips[0].a})
		}
	}
	var s schedule
	var completions []time.Time // of the requests scheduled so far, sorted
	var prev time.Time
	for {
		// FIFO: the earliest arrival among the workers goes next.
		var k *worker
		for _, wk := range ws {
			if wk.next < len(wk.trips) && (k == nil || wk.at.Before(k.at)) {
				k = wk
			}
		}
		if k == nil {
			return s
		}
		tr := k.trips[k.next]
		d := k.at
		if s.departures == nil {
			s.start = d
		}
		if d.Before(prev) {
			d = prev
		}
		if i := len(completions); i >= n {
			if renew := completions[i-n].Add(w); d.Before(renew) {
				d = renew
			}
		}
		c := d.Add(tr.c.Sub(tr.d))
		pos, _ := slices.BinarySearchFunc(completions, c, time.Time.Compare)
		completions = slices.Insert(completions, pos, c)
		s.departures = append(s.departures, d)
		if c.After(s.end) {
			s.end = c
		}
		prev = d
		k.next++
		if k.next < len(k.trips) {
			think := k.trips[k.next].a.Sub(tr.c)
			k.at = c.Add(max(think, 0))
		}
	}
}

func TestIdealSchedule(t *testing.T) {
	at := func(ms int) time.Time { return time.Unix(0, 0).Add(time.Duration(ms) * time.Millisecond) }
	// Per(2, 1s), one worker, 100 ms round trips, no pause between
	// requests: the third request waits for the first one's token, which
	// renews 1 s after its completion at 100 ms.
	l := newTripLog(1)
	l.add(0, trip{a: at(0), d: at(0), c: at(100)})
	l.add(0, trip{a: at(100), d: at(100), c: at(200)})
	l.add(0, trip{a: at(200), d: at(1150), c: at(1250)}) // 50 ms late
	ideal := l.ideal(2, time.Second)
	if want := []time.Time{at(0), at(100), at(1100)}; !slices.EqualFunc(ideal.departures, want, time.Time.Equal) {
		t.Errorf("ideal departures %v, want %v", ideal.departures, want)
	}
	if ideal.total() != 1200*time.Millisecond || l.actual().total() != 1250*time.Millisecond {
		t.Errorf("ideal total %v, actual %v; want 1.2s, 1.25s", ideal.total(), l.actual().total())
	}

	// Two workers: the later arrival goes second, and a worker's next
	// arrival follows its own completion.
	l = newTripLog(2)
	l.add(0, trip{a: at(0), d: at(0), c: at(300)})
	l.add(1, trip{a: at(10), d: at(10), c: at(20)})
	l.add(1, trip{a: at(30), d: at(1000), c: at(1010)})
	l.add(0, trip{a: at(300), d: at(1020), c: at(1030)})
	ideal = l.ideal(2, time.Second)
	// Worker 1's second request departs at c*_1 + W = 1.02 s (the first
	// completion is worker 1's at 20 ms); worker 0's second, 1.3 s.
	if want := []time.Time{at(0), at(10), at(1020), at(1300)}; !slices.EqualFunc(ideal.departures, want, time.Time.Equal) {
		t.Errorf("ideal departures %v, want %v", ideal.departures, want)
	}
}
