package rxthrottle_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle/throttletest"
)

// Issue 18 through ThrottleMap, from the server's side: a throttletest
// server on loopback counts every arrival in an exact sliding log, and
// ThrottleMap's bucket has exactly its quota. fn sends one GET per item:
//
//   - through a delaying proxy (0-100 ms on the way in, delivered even
//     after the client gave up), with a per-attempt timeout of 20 ms in
//     fn: most requests time out on their way and still arrive (with the
//     token released at the error, WithInFlightBound(0), as before issue
//     18, the server refused 3-5 requests in 3 runs of 4);
//   - to a server that drops the connection of every fourth request after
//     counting it. fn's client has keep-alives off, so net/http never
//     sends a request again by itself (it does for a GET on a reused
//     connection that drops: a second arrival of one token, which
//     ThrottleMap cannot see inside fn; ThrottleMap's doc says so).
//
// fn returns the error of a failed request unmarked (it may have been
// sent) unless no byte of it was written (NotSent). The server refuses
// nothing and never sees more than N arrivals in a window. What is
// asserted holds however loaded the machine: the in-flight bound (2 s) is
// twenty times the proxy's largest delay.

const (
	mapWireN     = 5
	mapWireW     = 500 * time.Millisecond
	mapWireTotal = 30
	mapWireBound = 2 * time.Second
)

// mapWireFn returns ThrottleMap's function for the wire tests: a GET of
// url through client, bounded by timeout (0: none), and counters of the
// requests that failed.
func mapWireFn(client *http.Client, url string, timeout time.Duration, failed, unwritten *atomic.Int32) rxgo.Func {
	return func(ctx context.Context, _ any) (any, error) {
		if timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
		}
		var wrote atomic.Bool
		ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteHeaders: func() { wrote.Store(true) }})
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return nil, rxthrottle.NotSent(err)
		}
		resp, err := client.Do(req)
		if err != nil {
			failed.Add(1)
			if !wrote.Load() {
				unwritten.Add(1)
				return nil, rxthrottle.NotSent(err)
			}
			return nil, err // it may still arrive
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != http.StatusOK {
			return nil, rxthrottle.Answered(fmt.Errorf("status %d", resp.StatusCode))
		}
		return resp.StatusCode, nil
	}
}

func TestThrottleMapServerWireNeverRefused(t *testing.T) {
	for _, c := range []struct {
		name    string
		proxy   bool
		timeout time.Duration
		server  []throttletest.Option
	}{
		{name: "delaying proxy, a timeout in fn", proxy: true, timeout: 20 * time.Millisecond},
		{name: "server drops connections after counting", server: []throttletest.Option{throttletest.WithDropFunc(dropEveryAfter(4, 2*mapWireN))}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv, err := throttletest.NewServer(rxthrottle.Per(mapWireN, mapWireW), c.server...)
			require.NoError(t, err)
			defer srv.Close()
			url := srv.URL
			var proxy *throttletest.Proxy
			if c.proxy {
				proxy, err = throttletest.NewProxy(srv.URL, func() time.Duration { return rand.N(100*time.Millisecond + 1) })
				require.NoError(t, err)
				defer proxy.Close()
				url = proxy.URL
			}
			base := &http.Transport{MaxIdleConnsPerHost: 64, DisableKeepAlives: !c.proxy}
			defer base.CloseIdleConnections()
			var failed, unwritten atomic.Int32
			fn := mapWireFn(&http.Client{Transport: base}, url+"/v1/items", c.timeout, &failed, &unwritten)
			out := rxthrottle.ThrottleMap(rxthrottle.Per(mapWireN, mapWireW), fn,
				rxthrottle.WithInFlightBound(mapWireBound))(rxgo.Range(0, mapWireTotal)).Observe()
			ok, errs := 0, 0
			for item := range out {
				if item.Error() {
					errs++
				} else {
					ok++
				}
			}
			// What is still on its way arrives within the bound: wait for
			// the proxy's queue to drain and the server to have seen every
			// request written (a request between the proxy and the server's
			// log is in neither).
			written := mapWireTotal - int(unwritten.Load())
			arrived := func() bool {
				s := srv.Stats()
				return (proxy == nil || proxy.Queued() == 0) && s.Accepted+s.Refused >= written
			}
			for end := time.Now().Add(2 * mapWireBound); !arrived() && time.Now().Before(end); {
				time.Sleep(5 * time.Millisecond)
			}
			stats := srv.Stats()
			log := srv.Log()
			var arrivals []time.Duration
			for _, a := range log {
				arrivals = append(arrivals, a.At.Sub(log[0].At))
			}
			sort.Slice(arrivals, func(i, j int) bool { return arrivals[i] < arrivals[j] })
			t.Logf("%d ok, %d errors (%d unwritten); server %+v", ok, errs, unwritten.Load(), stats)
			assert.Zero(t, stats.Refused, "requests the server refused")
			assert.LessOrEqual(t, rxthrottle.MaxInWindow(arrivals, mapWireW), mapWireN, "arrivals in a window")
			assert.Equal(t, mapWireTotal, ok+errs, "every item has its output")
			if c.proxy {
				assert.Positive(t, int(failed.Load()-unwritten.Load()), "no request timed out in flight: the test proves nothing")
			} else {
				assert.Positive(t, stats.Dropped, "the server dropped nothing: the test proves nothing")
			}
		})
	}
}

// dropEveryAfter drops the connection of every k-th accepted request after
// the first skip.
func dropEveryAfter(k, skip int) func() bool {
	var n atomic.Int32
	return func() bool {
		i := int(n.Add(1))
		return i > skip && i%k == 0
	}
}
