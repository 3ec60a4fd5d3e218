package httpthrottle_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle/throttletest"
	"github.com/rxthrottle/rxthrottle/limiterkit"
)

// Issue 9: strict where it counts. A real server on loopback that counts
// arrivals in an exact sliding log (throttletest), a client through the
// default Transport over a bucket with exactly the server's quota, and a
// random delay on the way in: the server never refuses a request.

const (
	arrivalN     = 10
	arrivalW     = time.Second
	arrivalTotal = 40 // four windows' worth: about 3 s a run
)

// arrivalRun is one configuration of the server-side test.
type arrivalRun struct {
	workers   int
	fresh     bool                // a new connection for every request
	latency   throttletest.Option // the delay on the way in
	transport []httpthrottle.TransportOption
}

// arrivalResult is what the client and the server saw.
type arrivalResult struct {
	ok, refused int                // statuses the workers got
	server      throttletest.Stats // what the server counted
	trips       *tripLog
}

// tripLimiter is the client's bucket with a log: for each token the
// Transport acquires, the moment it asked (a), the grant (d) and the
// release (c), from the clock reading nearest to each. These are the
// inputs and the output of SPEC's held-token formula, so the schedule can
// be checked on them without the time the machine takes around them.
type tripLimiter struct {
	rxthrottle.Limiter
	trips *tripLog

	mu   sync.Mutex
	next uint64
	held map[uint64]heldTrip
}

type heldTrip struct {
	tok    rxthrottle.Token
	worker int
	trip   trip
}

type workerKey struct{}

func (l *tripLimiter) Acquire(ctx context.Context) (rxthrottle.Token, error) {
	a := time.Now()
	tok, err := l.Limiter.Acquire(ctx)
	if err != nil {
		return tok, err
	}
	d := time.Now()
	worker, _ := ctx.Value(workerKey{}).(int)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.next++
	l.held[l.next] = heldTrip{tok: tok, worker: worker, trip: trip{a: a, d: d}}
	return limiterkit.NewToken(l, l.next), nil
}

func (l *tripLimiter) end(id uint64) (heldTrip, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	h, ok := l.held[id]
	delete(l.held, id)
	return h, ok
}

func (l *tripLimiter) ReleaseToken(id uint64) {
	c := time.Now()
	if h, ok := l.end(id); ok {
		h.tok.Release()
		h.trip.c = c
		l.trips.add(h.worker, h.trip)
	}
}

func (l *tripLimiter) CancelToken(id uint64) {
	if h, ok := l.end(id); ok {
		h.tok.Cancel()
	}
}

// runArrivals sends arrivalTotal requests from run.workers goroutines
// through a Transport over NewBucket(Per(arrivalN, arrivalW)) to a
// throttletest server with the same quota.
func runArrivals(t *testing.T, run arrivalRun) arrivalResult {
	t.Helper()
	opts := []throttletest.Option{run.latency}
	if run.fresh {
		opts = append(opts, throttletest.WithFreshConnections())
	}
	srv, err := throttletest.NewServer(rxthrottle.Per(arrivalN, arrivalW), opts...)
	require.NoError(t, err)
	defer srv.Close()
	bucket, err := rxthrottle.NewBucket(rxthrottle.Per(arrivalN, arrivalW))
	require.NoError(t, err)
	res := arrivalResult{trips: newTripLog(run.workers)}
	limiter := &tripLimiter{Limiter: bucket, trips: res.trips, held: map[uint64]heldTrip{}}
	topts := append([]httpthrottle.TransportOption{
		httpthrottle.WithBase(srv.Client().Transport),
		httpthrottle.OnHeaderError(nil),
	}, run.transport...)
	tr, err := httpthrottle.NewTransport(limiter, topts...)
	require.NoError(t, err)
	client := &http.Client{Transport: tr}

	res.ok, res.refused = sendJobs(t, client, run.workers, arrivalTotal, func(worker, _ int) (*http.Request, error) {
		return http.NewRequestWithContext(context.WithValue(context.Background(), workerKey{}, worker), "GET", srv.URL+"/v1/items", nil)
	})
	res.server = srv.Stats()
	return res
}

// sendJobs sends total requests from workers goroutines through client,
// request(worker, job) making job number job (1 to total), reads each
// response and returns how many were answered 200 and 429 (any other
// status fails the test).
func sendJobs(t *testing.T, client *http.Client, workers, total int, request func(worker, job int) (*http.Request, error)) (ok, refused int) {
	t.Helper()
	var oks, refusals, jobs atomic.Int32
	var wg sync.WaitGroup
	for worker := range workers {
		wg.Go(func() {
			for {
				job := int(jobs.Add(1))
				if job > total {
					return
				}
				req, err := request(worker, job)
				if !assert.NoError(t, err) {
					return
				}
				resp, err := client.Do(req)
				if !assert.NoError(t, err) {
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				switch resp.StatusCode {
				case http.StatusOK:
					oks.Add(1)
				case http.StatusTooManyRequests:
					refusals.Add(1)
				default:
					t.Errorf("status %d", resp.StatusCode)
				}
			}
		})
	}
	wg.Wait()
	return int(oks.Load()), int(refusals.Load())
}

func connections(fresh bool) string {
	if fresh {
		return "fresh connections"
	}
	return "reused connections"
}

// TestTransportServerArrivalsNeverRefused: about 3 s of real time a case,
// the cases all at once (RunAll).
func TestTransportServerArrivalsNeverRefused(t *testing.T) {
	type tc struct {
		workers int
		fresh   bool
	}
	var cases []tc
	var names []string
	for _, workers := range []int{1, 8, 32} {
		for _, fresh := range []bool{false, true} {
			cases = append(cases, tc{workers, fresh})
			names = append(names, fmt.Sprintf("%d workers, %s", workers, connections(fresh)))
		}
	}
	httpthrottle.RunAll(t, names, func(t *testing.T, i int) {
		workers, fresh := cases[i].workers, cases[i].fresh
		probe := startTimerProbe()
		res := runArrivals(t, arrivalRun{
			workers: workers,
			fresh:   fresh,
			latency: throttletest.WithLatency(20 * time.Millisecond),
		})
		late := probe.stop()
		assert.Zero(t, res.server.Refused, "requests the server refused")
		assert.Zero(t, res.refused)
		assert.Equal(t, arrivalTotal, res.ok, "requests delivered")
		assert.Equal(t, arrivalTotal, res.server.Accepted)

		// How long the run took against SPEC's held-token formula
		// replayed on this run's own requests to the limiter (holds
		// and pauses between a worker's requests, no departure
		// late): the schedule's own lateness (timers, wake-ups).
		// It is reported, not asserted (issue 17, item 8): on a
		// loaded machine it measures the machine, and a flaky
		// test blocks every change. The invariants above are what
		// must always hold.
		actual, ideal := res.trips.actual(), res.trips.ideal(arrivalN, arrivalW)
		over := float64(actual.total()-ideal.total()) / float64(ideal.total())
		t.Logf("refused %d of %d; total %v, ideal %v (%+.2f%%); timers late by %v on average",
			res.server.Refused, arrivalTotal, actual.total().Round(time.Millisecond), ideal.total().Round(time.Millisecond), 100*over, late.Round(time.Microsecond))
	})
}

// firstDelayed delays the first k writes by d and no other: the first
// window's requests arrive late, the next window's on time, which is what
// makes a departure-renewing client go over at the server.
func firstDelayed(k int, d time.Duration) throttletest.Option {
	var writes atomic.Int32
	return throttletest.WithLatencyFunc(func() time.Duration {
		if writes.Add(1) <= int32(k) {
			return d
		}
		return 0
	})
}

// renewalCases are the two clients of the departure-renewal controls: the
// default Transport, whose held tokens the server never refuses, and one
// renewing at departure, which the delay of firstDelayed gets refused.
var renewalCases = []struct {
	name    string
	opts    []httpthrottle.TransportOption
	refused bool
}{
	{"held tokens (default)", nil, false},
	{"departure renewal", []httpthrottle.TransportOption{httpthrottle.WithDepartureRenewal()}, true},
}

func TestTransportServerDepartureRenewalIsRefused(t *testing.T) {
	// The same run with the delay pattern that breaks departure renewal: the
	// first window's ten requests arrive 400 ms late, the next ones at once,
	// 1 s after the first departures. Holding tokens until the response
	// keeps the server's window; renewing at departure does not. The two
	// run at once (RunAll).
	var names []string
	for _, s := range renewalCases {
		names = append(names, s.name)
	}
	httpthrottle.RunAll(t, names, func(t *testing.T, i int) {
		s := renewalCases[i]
		res := runArrivals(t, arrivalRun{
			workers:   8,
			latency:   firstDelayed(arrivalN, 400*time.Millisecond),
			transport: s.opts,
		})
		t.Logf("refused %d of %d", res.server.Refused, arrivalTotal)
		if s.refused {
			assert.Positive(t, res.server.Refused, "the server refused none: the test proves nothing")
		} else {
			assert.Zero(t, res.server.Refused)
			assert.Equal(t, arrivalTotal, res.ok)
		}
	})
}

// timerProbe measures how late this process's timers fire while a test
// runs: the same wake-ups the limiter's renewals depend on.
type timerProbe struct {
	done chan struct{}
	out  chan time.Duration
}

func startTimerProbe() *timerProbe {
	p := &timerProbe{done: make(chan struct{}), out: make(chan time.Duration, 1)}
	go func() {
		const tick = 5 * time.Millisecond
		var total time.Duration
		n := 0
		for {
			select {
			case <-p.done:
				if n == 0 {
					n = 1
				}
				p.out <- total / time.Duration(n)
				return
			default:
			}
			start := time.Now()
			time.Sleep(tick)
			total += time.Since(start) - tick
			n++
		}
	}()
	return p
}

// stop ends the probe and returns the mean lateness of its timers.
func (p *timerProbe) stop() time.Duration {
	close(p.done)
	return <-p.out
}
