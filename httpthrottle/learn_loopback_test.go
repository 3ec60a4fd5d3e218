package httpthrottle

import (
	"context"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle/throttletest"
)

// learnRun is what one run of learnLoad saw.
type learnRun struct {
	accepted, refused int
	elapsed           time.Duration
	events            []LearnEvent
}

// learnLoad sends requests from workers goroutines through a learning
// Transport over a Bucket with the wrong limit start, until total requests
// were accepted, retrying refused ones, and returns the counts.
func learnLoad(t testing.TB, srv *throttletest.Server, start rxthrottle.Limit, workers, total int, opts ...LearnOption) learnRun {
	t.Helper()
	b, err := rxthrottle.NewBucket(start)
	require.NoError(t, err)
	var mu sync.Mutex
	var run learnRun
	opts = append(opts, OnLearn(func(ev LearnEvent) {
		mu.Lock()
		run.events = append(run.events, ev)
		mu.Unlock()
	}))
	// One attempt a request: the loop below retries, and counts, each
	// refusal itself.
	opts = append(opts, LearnMaxAttempts(1))
	tr, err := NewTransport(b, WithBase(srv.Client().Transport), WithLearnLimits(opts...), OnHeaderError(nil))
	require.NoError(t, err)
	client := &http.Client{Transport: tr}
	var issued, accepted, refused atomic.Int64
	var wg sync.WaitGroup
	begin := time.Now()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for issued.Add(1) <= int64(total) {
				if !sendUntilAccepted(t, client, srv.URL+"/", &refused) {
					return
				}
				accepted.Add(1)
			}
		}()
	}
	wg.Wait()
	run.elapsed = time.Since(begin)
	run.accepted, run.refused = int(accepted.Load()), int(refused.Load())
	return run
}

// sendUntilAccepted sends GET url until it is not refused, counting the
// refusals; false when a request failed.
func sendUntilAccepted(t testing.TB, client *http.Client, url string, refused *atomic.Int64) bool {
	for {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
		resp, err := client.Do(req)
		if err != nil {
			t.Error(err)
			return false
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusTooManyRequests {
			return true
		}
		refused.Add(1)
	}
}

// idealTime is the time total requests take at n per w, sent as early as
// the quota allows: the last window's batch goes at (ceil(total/n)-1)*w.
func idealTime(total, n int, w time.Duration) time.Duration {
	return time.Duration((total+n-1)/n-1) * w
}

// learnDialects are the dialects the loopback tests speak.
var learnDialects = []throttletest.Dialect{throttletest.DialectIETF, throttletest.DialectIETFDraft, throttletest.DialectGitHub, throttletest.DialectDiscord, throttletest.DialectOpenAI}

// TestLearnLoopbackDialects: on the real clock, against loopback servers
// of each dialect and exact window, the server refuses nothing. The cases
// run all at once (RunAll).
func TestLearnLoopbackDialects(t *testing.T) {
	const n, total, workers = 10, 60, 32
	type tc struct {
		d   throttletest.Dialect
		alg throttletest.Algorithm
	}
	var cases []tc
	var names []string
	for _, d := range learnDialects {
		for _, alg := range []throttletest.Algorithm{throttletest.SlidingLog, throttletest.FixedWindow} {
			cases = append(cases, tc{d, alg})
			names = append(names, d.String()+"/"+alg.String())
		}
	}
	RunAll(t, names, func(t *testing.T, i int) {
		d, alg := cases[i].d, cases[i].alg
		srv, err := throttletest.NewServer(rxthrottle.Per(n, time.Second), throttletest.WithDialect(d), throttletest.WithAlgorithm(alg))
		require.NoError(t, err)
		defer srv.Close()
		run := learnLoad(t, srv, rxthrottle.Per(1000, time.Second), workers, total)
		t.Logf("%v/%v: accepted %d refused %d in %v (ideal %v, %.2fx); %d changes, last %v", d, alg, run.accepted, run.refused, run.elapsed,
			idealTime(total, n, time.Second), float64(run.elapsed)/float64(idealTime(total, n, time.Second)), len(run.events), lastEvent(run.events))
		require.Zero(t, srv.Stats().Refused, "the server refused requests")
	})
}

// TestLearnLoopbackCounter: the same load at a sliding-window counter in
// each dialect, on the real clock. Its refusals depend on how the
// machine's delays fall against the counter's windows, so they are logged
// (BenchmarkLearn measures them); what must hold is the window at the
// server from the first arrival on. Until the first reset the time to it,
// at least LearnProbeWindow, stands in for the window (issue 28: with the
// time to it alone, a first answer read late in the server's window let
// 11 arrive in 869 ms; TestLearnSlowFirstAnswer). A window inferred from
// resets read late came out short under load (984 ms, 982 ms: 11 arrived
// in 927 ms, in 992 ms): it is now the gap plus the round trip of the
// reading it starts from (TestInferredWindowLateReading). The cases run
// all at once (RunAll).
func TestLearnLoopbackCounter(t *testing.T) {
	const n, total, workers = 10, 60, 32
	var names []string
	for _, d := range learnDialects {
		names = append(names, d.String())
	}
	RunAll(t, names, func(t *testing.T, i int) {
		d := learnDialects[i]
		srv, err := throttletest.NewServer(rxthrottle.Per(n, time.Second), throttletest.WithDialect(d), throttletest.WithAlgorithm(throttletest.SlidingWindowCounter))
		require.NoError(t, err)
		defer srv.Close()
		run := learnLoad(t, srv, rxthrottle.Per(1000, time.Second), workers, total)
		t.Logf("%v at a sliding-window counter: accepted %d refused %d in %v (%.1f%% of the quota); last %v", d, run.accepted, run.refused, run.elapsed,
			100*float64(total)/run.elapsed.Seconds()/n, lastEvent(run.events))
		log := srv.Log()
		for i := range log {
			if j := i + n; j < len(log) {
				require.GreaterOrEqual(t, log[j].At.Sub(log[i].At), time.Second, "arrivals %d and %d: more than %d in a window", i, j, n)
			}
		}
	})
}

func lastEvent(evs []LearnEvent) LearnEvent {
	if len(evs) == 0 {
		return LearnEvent{}
	}
	return evs[len(evs)-1]
}

// TestLearnLoopbackProbe: with nothing published but 429 and Retry-After,
// on the real clock against loopback servers of each algorithm, every
// request is delivered and the refusals stay within the bound of
// 10 (the slow start's run-up is refused, 2 on a quiet machine); the time
// and the share of the quota are logged, not asserted. The cases run all
// at once (RunAll).
func TestLearnLoopbackProbe(t *testing.T) {
	const n, total, workers = 10, 60, 32
	algs := []throttletest.Algorithm{throttletest.SlidingLog, throttletest.FixedWindow, throttletest.SlidingWindowCounter}
	var names []string
	for _, alg := range algs {
		names = append(names, alg.String())
	}
	RunAll(t, names, func(t *testing.T, i int) {
		alg := algs[i]
		srv, err := throttletest.NewServer(rxthrottle.Per(n, time.Second), throttletest.WithAlgorithm(alg))
		require.NoError(t, err)
		defer srv.Close()
		run := learnLoad(t, srv, rxthrottle.Per(1000, time.Second), workers, total)
		t.Logf("429s only, %v: accepted %d refused %d in %v (%.1f%% of the quota); last %v", alg, run.accepted, run.refused, run.elapsed,
			100*float64(total)/run.elapsed.Seconds()/n, lastEvent(run.events))
		require.Equal(t, total, run.accepted)
		require.Equal(t, run.refused, srv.Stats().Refused)
		require.LessOrEqual(t, run.refused, 10, "refused by the server")
	})
}

// TestLearnLoopbackLiars: on the real clock, at loopback servers that
// announce more than they enforce, reset in Unix milliseconds, or change
// dialect on every answer (issue 26's hostile cases), every request is
// done, and the refusals the server counts stay within issue 26's bounds:
// 10 for a liar or a reset no clock reads as it is, 5 for a flipping
// dialect. Only these invariants are asserted on the real clock; the
// stall bound is TestLearnLiars's, on virtual time, which also tells the
// distrust of a liar from spreading alone (here both stay within 10 in
// 4 s: spreading alone was refused 4-5 times, 10 in 8 s). The cases run
// all at once (RunAll).
func TestLearnLoopbackLiars(t *testing.T) {
	const n, total, workers = 10, 40, 4
	cases := []struct {
		name       string
		opts       []throttletest.Option
		maxRefused int
	}{
		{"announcing 1000", []throttletest.Option{throttletest.WithDialect(throttletest.DialectGitHub), throttletest.WithAnnouncedLimit(1000)}, 10},
		{"announcing 1000 in IETF fields", []throttletest.Option{throttletest.WithDialect(throttletest.DialectIETF), throttletest.WithAnnouncedLimit(1000)}, 10},
		{"reset in Unix milliseconds", []throttletest.Option{throttletest.WithDialect(throttletest.DialectGitHub), throttletest.WithQuirks(throttletest.QuirkMillisReset)}, 10},
		{"a dialect an answer", []throttletest.Option{throttletest.WithQuirks(throttletest.QuirkFlipDialect)}, 5},
	}
	var names []string
	for _, c := range cases {
		names = append(names, c.name)
	}
	RunAll(t, names, func(t *testing.T, i int) {
		c := cases[i]
		srv, err := throttletest.NewServer(rxthrottle.Per(n, time.Second), c.opts...)
		require.NoError(t, err)
		defer srv.Close()
		run := learnLoad(t, srv, rxthrottle.Per(1000, time.Second), workers, total)
		t.Logf("%s: accepted %d refused %d in %v; last %v", c.name, run.accepted, run.refused, run.elapsed, lastEvent(run.events))
		require.Equal(t, total, run.accepted)
		require.Equal(t, run.refused, srv.Stats().Refused)
		require.LessOrEqual(t, run.refused, c.maxRefused, "refused by the server")
	})
}
