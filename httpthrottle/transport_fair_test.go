package httpthrottle_test

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle/throttletest"
)

// A request's context carries its tenant (rxthrottle.WithTenant; SPEC.md,
// "Fair shares") to the Transport's limiter: tenant B's two requests, sent
// after A's ten, share the quota with A's instead of waiting behind them.
func TestTransportTenantsShareTheQuota(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var mu sync.Mutex
		sent := map[string][]time.Duration{}
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			sent[r.URL.Path] = append(sent[r.URL.Path], time.Since(start))
			mu.Unlock()
			return respond(r, http.StatusOK, nil), nil
		})
		tr, err := httpthrottle.NewTransport(newBucket(t, 2, time.Second, nil), httpthrottle.WithBase(base))
		require.NoError(t, err)
		var wg sync.WaitGroup
		send := func(tenant string) {
			wg.Go(func() {
				req := mustRequest(t, rxthrottle.WithTenant(context.Background(), tenant, 1), "GET", nil)
				req.URL.Path = "/" + tenant
				resp, err := tr.RoundTrip(req)
				require.NoError(t, err)
				resp.Body.Close()
			})
			synctest.Wait()
		}
		for range 10 {
			send("A")
		}
		send("B")
		send("B")
		wg.Wait()
		// 2 of A's at 0; then each second one of A's and one of B's
		// while B has requests waiting.
		require.Equal(t, []time.Duration{time.Second, 2 * time.Second}, sent["/B"])
		require.Equal(t, []time.Duration{0, 0, time.Second, 2 * time.Second, 3 * time.Second, 3 * time.Second,
			4 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}, sent["/A"])
	})
}

// A Transport whose Bucket learns its concurrency cap from latency
// (rxthrottle.WithAdaptiveConcurrency), at a quota-enforcing server whose
// latency rises past 6 requests in flight: the server refuses nothing,
// every request is answered, the quota is nearly all used, and the cap
// stays where the latency is low (its median from 2 s on: a snapshot may
// catch it probing above the knee, at 10 in 1 of 200 runs).
func TestTransportAdaptiveConcurrencyAtAStrictServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		quota := rxthrottle.Per(500, time.Second) // the server could take 600 a second at 6 in flight
		h, err := throttletest.NewHandler(quota)
		require.NoError(t, err)
		var mu sync.Mutex
		inFlight, most := 0, 0
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			mu.Lock()
			inFlight++
			c := inFlight
			most = max(most, c)
			mu.Unlock()
			lat := 10 * time.Millisecond
			if c > 6 {
				lat = lat * time.Duration(c*c) / 36
			}
			time.Sleep(lat)
			defer func() {
				mu.Lock()
				inFlight--
				mu.Unlock()
			}()
			return h.RoundTrip(r)
		})
		b, err := rxthrottle.NewBucket(quota, rxthrottle.WithAdaptiveConcurrency(1, 32))
		require.NoError(t, err)
		tr, err := httpthrottle.NewTransport(b, httpthrottle.WithBase(base))
		require.NoError(t, err)
		start := time.Now()
		var wg sync.WaitGroup
		var answered int
		for range 48 {
			wg.Go(func() {
				for time.Since(start) < 5*time.Second {
					resp, err := tr.RoundTrip(mustRequest(t, context.Background(), "GET", nil))
					require.NoError(t, err)
					require.Equal(t, http.StatusOK, resp.StatusCode)
					resp.Body.Close()
					mu.Lock()
					answered++
					mu.Unlock()
				}
			})
		}
		var caps []int // the cap every 50 ms from 2 s on, once it has had time to learn
		time.Sleep(2 * time.Second)
		for time.Since(start) < 5*time.Second {
			caps = append(caps, b.Stats().ConcurrencyCap)
			time.Sleep(50 * time.Millisecond)
		}
		wg.Wait()
		st := h.Stats()
		require.Zero(t, st.Refused, "refusals at the server")
		require.Equal(t, answered, st.Accepted)
		require.LessOrEqual(t, most, 32, "requests in flight")
		require.GreaterOrEqual(t, answered, 2250, "requests answered in 5 s, of a quota of 2500")
		// The cap probes above the knee and is cut back: its median is
		// where the latency is low (a snapshot may catch a probe).
		slices.Sort(caps)
		c := caps[len(caps)/2]
		require.True(t, c >= 3 && c <= 9, "the cap's median from 2 s to 5 s: %d (%v)", c, caps)
		t.Logf("%d requests in 5 s, at most %d in flight, the cap from 2 s to 5 s: median %d, %d to %d", answered, most, c, caps[0], caps[len(caps)-1])
	})
}
