package httpthrottle_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle/throttletest"
)

// The server-side test of a keyed Transport: several real servers on
// loopback, each with its own quota and its own exact sliding log of
// arrivals (throttletest), one Transport over a Keyed limiter keyed by
// host, so each server is a key, and workers sending to all of them at
// once over a network that delays each request on its way in. No server
// refuses a request: every key's held tokens keep its server's window,
// whatever the other keys do on the same Keyed.

const keyedArrivalHosts = 3

// byHost is the base RoundTripper of the keyed run: each request goes out
// through the client of the server it names, whose connections add that
// server's latency.
type byHost map[string]http.RoundTripper

func (b byHost) RoundTrip(req *http.Request) (*http.Response, error) {
	rt, ok := b[req.URL.Host]
	if !ok {
		return nil, fmt.Errorf("no server at %q", req.URL.Host)
	}
	return rt.RoundTrip(req)
}

// keyedArrivalResult is what the clients and each server saw.
type keyedArrivalResult struct {
	ok, refused int
	servers     []throttletest.Stats
}

// runKeyedArrivals sends arrivalTotal requests to each of keyedArrivalHosts
// servers with Per(arrivalN, arrivalW) from workers goroutines, through a
// Transport over NewKeyed(Per(arrivalN, arrivalW)) keyed by host.
func runKeyedArrivals(t *testing.T, workers int, fresh bool, latency func() throttletest.Option, opts ...httpthrottle.TransportOption) keyedArrivalResult {
	t.Helper()
	base := byHost{}
	servers := make([]*throttletest.Server, keyedArrivalHosts)
	for i := range servers {
		sopts := []throttletest.Option{latency()}
		if fresh {
			sopts = append(sopts, throttletest.WithFreshConnections())
		}
		srv, err := throttletest.NewServer(rxthrottle.Per(arrivalN, arrivalW), sopts...)
		require.NoError(t, err)
		defer srv.Close()
		servers[i] = srv
		base[srv.URL[len("http://"):]] = srv.Client().Transport
	}
	keyed, err := rxthrottle.NewKeyed(rxthrottle.Per(arrivalN, arrivalW))
	require.NoError(t, err)
	tr, err := httpthrottle.NewKeyedTransport(keyed, httpthrottle.KeyByHost,
		append([]httpthrottle.TransportOption{httpthrottle.WithBase(base), httpthrottle.OnHeaderError(nil)}, opts...)...)
	require.NoError(t, err)
	client := &http.Client{Transport: tr}

	// Job j goes to server j mod hosts: every server gets arrivalTotal
	// requests, interleaved with the others'.
	var res keyedArrivalResult
	res.ok, res.refused = sendJobs(t, client, workers, keyedArrivalHosts*arrivalTotal, func(_, job int) (*http.Request, error) {
		return http.NewRequest("GET", servers[job%keyedArrivalHosts].URL+"/v1/items", nil)
	})
	for _, srv := range servers {
		res.servers = append(res.servers, srv.Stats())
	}
	assert.Equal(t, keyedArrivalHosts, keyed.Stats().KeysLive, "one key per server")
	return res
}

func TestTransportServerKeyedArrivalsNeverRefused(t *testing.T) {
	t.Parallel() // about 3 s of real time: with the other runs, not after them
	random := func() throttletest.Option { return throttletest.WithLatency(20 * time.Millisecond) }
	// Two runs rather than the four combinations: each takes about 3 s of
	// real time, and the Bucket's test covers the combinations.
	for _, run := range []struct {
		workers int
		fresh   bool
	}{{8, false}, {32, true}} {
		t.Run(fmt.Sprintf("%d workers, %s", run.workers, connections(run.fresh)), func(t *testing.T) {
			t.Parallel()
			res := runKeyedArrivals(t, run.workers, run.fresh, random)
			assert.Zero(t, res.refused, "requests refused")
			assert.Equal(t, keyedArrivalHosts*arrivalTotal, res.ok, "requests delivered")
			for i, st := range res.servers {
				assert.Equal(t, throttletest.Stats{Accepted: arrivalTotal}, st, "server %d", i)
			}
		})
	}
}

// TestTransportServerKeyedDepartureRenewalIsRefused is the control of the
// keyed run: with the delay that breaks departure renewal on every server
// (each one's first window arrives 400 ms late, the next on time), the
// same keyed Transport renewing at departure is refused, and with held
// tokens it is not. Without it the test above could pass for a client
// that only happens to be slow enough.
func TestTransportServerKeyedDepartureRenewalIsRefused(t *testing.T) {
	t.Parallel()
	late := func() throttletest.Option { return firstDelayed(arrivalN, 400*time.Millisecond) }
	for _, s := range renewalCases {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			res := runKeyedArrivals(t, 8, false, late, s.opts...)
			var refused []int
			for _, st := range res.servers {
				refused = append(refused, st.Refused)
			}
			t.Logf("refused by each server: %v", refused)
			if s.refused {
				for i, n := range refused {
					assert.Positive(t, n, "server %d refused none: the test proves nothing", i)
				}
				return
			}
			assert.Equal(t, make([]int, keyedArrivalHosts), refused)
			assert.Equal(t, keyedArrivalHosts*arrivalTotal, res.ok)
		})
	}
}
