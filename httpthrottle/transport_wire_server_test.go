package httpthrottle_test

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle/throttletest"
)

// Issue 18: strict at the server when requests time out in flight and
// connections drop. A throttletest server on loopback counts every
// arrival in an exact sliding log; the client's bucket has exactly its
// quota. Two networks that bunch arrivals whatever the client's schedule:
//
//   - a delaying proxy (0-100 ms on the way in, delivered even after the
//     client gave up) and an attempt timeout of 50 ms: about half the
//     requests time out on their way and still arrive;
//   - a server that drops the connection of every fourth request after
//     counting it: net/http sends the request again by itself, on a new
//     connection, inside one RoundTrip.
//
// The server refuses nothing and never sees more than N arrivals in a
// window. What is asserted holds on any machine, however loaded: the
// in-flight bound (2 s) is twenty times the proxy's largest delay.

const (
	wireN     = 5
	wireW     = 500 * time.Millisecond
	wireTotal = 20
	wireDelay = 100 * time.Millisecond
	wireBound = 2 * time.Second
)

// wireCase is one network of the wire tests.
type wireCase struct {
	name string
	// server returns the server's options.
	server func() []throttletest.Option
	// proxy is true for the delaying proxy in front of the server.
	proxy bool
	// opts are the Transport's, besides its base.
	opts []httpthrottle.TransportOption
	// wrap, if set, wraps the base (a timeout of the user's own).
	wrap func(http.RoundTripper) http.RoundTripper
	// released is what must have released tokens before the bound (issue
	// 27): "late" answers of given-up attempts, "peer" closes, or "".
	released string
}

// dropEvery drops the connection of every k-th accepted request after the
// first skip, so that the drops fall on connections already used.
func dropEvery(k, skip int) func() bool {
	var n atomic.Int32
	return func() bool {
		i := int(n.Add(1))
		return i > skip && i%k == 0
	}
}

func uniformDelay(maxDelay time.Duration) func() time.Duration {
	return func() time.Duration { return rand.N(maxDelay + 1) }
}

var wireCases = []wireCase{
	{
		name:     "delaying proxy, WithAttemptTimeout",
		proxy:    true,
		opts:     []httpthrottle.TransportOption{httpthrottle.WithAttemptTimeout(50 * time.Millisecond), httpthrottle.WithInFlightBound(wireBound)},
		released: "late",
	},
	{
		// The Transport retries each timeout itself; a late answer that
		// comes while the retry waits is the call's (issue 27).
		name:  "delaying proxy, WithAttemptTimeout and WithMaxAttempts",
		proxy: true,
		opts: []httpthrottle.TransportOption{httpthrottle.WithAttemptTimeout(50 * time.Millisecond),
			httpthrottle.WithMaxAttempts(5), httpthrottle.WithInFlightBound(wireBound)},
		released: "late",
	},
	{
		name:  "delaying proxy, a timeout under WithBase",
		proxy: true,
		opts:  []httpthrottle.TransportOption{httpthrottle.WithInFlightBound(wireBound)},
		wrap:  func(rt http.RoundTripper) http.RoundTripper { return &timeoutBase{rt, 50 * time.Millisecond} },
	},
	{
		name: "server drops connections after counting",
		server: func() []throttletest.Option {
			return []throttletest.Option{throttletest.WithDropFunc(dropEvery(4, 2*wireN))}
		},
		opts:     []httpthrottle.TransportOption{httpthrottle.WithInFlightBound(wireBound)},
		released: "peer",
	},
}

// wireResult is what the client and the server saw.
type wireResult struct {
	ok, refused, failed int
	arrivals            []time.Duration // every arrival at the server, from the first, sorted
	server              throttletest.Stats
	transport           httpthrottle.TransportStats
}

// runWire sends wireTotal requests from 8 workers through a Transport
// built by newTransport(base) to a server with the client's quota, and
// waits until nothing is on its way or held before reading the server's
// log.
func runWire(t *testing.T, c wireCase, newTransport func(base http.RoundTripper, opts ...httpthrottle.TransportOption) (*httpthrottle.Transport, error)) wireResult {
	t.Helper()
	var sopts []throttletest.Option
	if c.server != nil {
		sopts = c.server()
	}
	srv, err := throttletest.NewServer(rxthrottle.Per(wireN, wireW), sopts...)
	require.NoError(t, err)
	defer srv.Close()
	url := srv.URL
	var proxy *throttletest.Proxy
	if c.proxy {
		proxy, err = throttletest.NewProxy(srv.URL, uniformDelay(wireDelay))
		require.NoError(t, err)
		defer proxy.Close()
		url = proxy.URL
	}
	netBase := &http.Transport{MaxIdleConnsPerHost: 64}
	defer netBase.CloseIdleConnections()
	var base http.RoundTripper = netBase
	if c.wrap != nil {
		base = c.wrap(netBase)
	}
	tr, err := newTransport(base, append([]httpthrottle.TransportOption{httpthrottle.OnHeaderError(nil)}, c.opts...)...)
	require.NoError(t, err)

	var res wireResult
	res.ok, res.refused, res.failed = sendWireJobs(t, &http.Client{Transport: tr}, 8, wireTotal, url+"/v1/items")
	// Wait out what is still on its way: the proxy's queue, and the tokens
	// held past their errors (whose requests can arrive until then).
	require.Eventually(t, func() bool {
		return (proxy == nil || proxy.Queued() == 0) && tr.Stats().HoldingPastError == 0
	}, 30*time.Second, 5*time.Millisecond)
	res.server, res.transport = srv.Stats(), tr.Stats()
	log := srv.Log()
	for _, a := range log {
		res.arrivals = append(res.arrivals, a.At.Sub(log[0].At))
	}
	sort.Slice(res.arrivals, func(i, j int) bool { return res.arrivals[i] < res.arrivals[j] })
	return res
}

// sendWireJobs is sendJobs for a network where requests may fail: it
// returns how many were answered 200, how many 429, and how many failed
// with an error (any other status fails the test).
func sendWireJobs(t *testing.T, client *http.Client, workers, total int, url string) (ok, refused, failed int) {
	t.Helper()
	var oks, refusals, fails, jobs atomic.Int32
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for int(jobs.Add(1)) <= total {
				resp, err := client.Get(url)
				if err != nil {
					fails.Add(1)
					continue
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
	return int(oks.Load()), int(refusals.Load()), int(fails.Load())
}

// checkWire asserts what must always hold at the server, and that the
// case did what it is about (timeouts, re-sends).
func checkWire(t *testing.T, c wireCase, res wireResult) {
	t.Helper()
	t.Logf("%d ok, %d failed; server %+v; transport %+v", res.ok, res.failed, res.server, res.transport)
	assert.Zero(t, res.server.Refused, "requests the server refused")
	assert.Zero(t, res.refused)
	requireWindow(t, res.arrivals, wireN, wireW)
	assert.Equal(t, wireTotal, res.ok+res.failed, "every request answered or failed once")
	assert.LessOrEqual(t, uint64(len(res.arrivals)), res.transport.Attempts-res.transport.ErrorsUnwritten,
		"arrivals: at most one per attempt with a token that may have been written")
	if c.proxy {
		assert.Positive(t, res.transport.ErrorsAfterWrite, "no request timed out in flight: the test proves nothing")
	} else {
		assert.Positive(t, res.transport.Resends, "the base never sent a request again: the test proves nothing")
	}
	switch c.released {
	case "late":
		assert.Positive(t, res.transport.LateAnswers, "no token was released at its late answer, before the bound")
	case "peer":
		assert.Positive(t, res.transport.PeerCloses, "no token was released at the peer's close, before the bound")
	}
}

// wireTransports are the two Transports the wire tests run: over a Bucket
// and, keyed by host, over a Keyed.
var wireTransports = []struct {
	name string
	new  func(t *testing.T) func(base http.RoundTripper, opts ...httpthrottle.TransportOption) (*httpthrottle.Transport, error)
}{
	{"NewTransport", func(t *testing.T) func(http.RoundTripper, ...httpthrottle.TransportOption) (*httpthrottle.Transport, error) {
		b, err := rxthrottle.NewBucket(rxthrottle.Per(wireN, wireW))
		require.NoError(t, err)
		return func(base http.RoundTripper, opts ...httpthrottle.TransportOption) (*httpthrottle.Transport, error) {
			return httpthrottle.NewTransport(b, append(opts, httpthrottle.WithBase(base))...)
		}
	}},
	{"NewKeyedTransport", func(t *testing.T) func(http.RoundTripper, ...httpthrottle.TransportOption) (*httpthrottle.Transport, error) {
		k, err := rxthrottle.NewKeyed(rxthrottle.Per(wireN, wireW))
		require.NoError(t, err)
		return func(base http.RoundTripper, opts ...httpthrottle.TransportOption) (*httpthrottle.Transport, error) {
			return httpthrottle.NewKeyedTransport(k, httpthrottle.KeyByHost, append(opts, httpthrottle.WithBase(base))...)
		}
	}},
}

// TestTransportServerWireNeverRefused runs each case of the wire on the
// real clock, all at once (RunAll).
func TestTransportServerWireNeverRefused(t *testing.T) {
	var names []string
	var run []func(t *testing.T)
	for _, tr := range wireTransports {
		for _, c := range wireCases {
			names = append(names, tr.name+", "+c.name)
			run = append(run, func(t *testing.T) { checkWire(t, c, runWire(t, c, tr.new(t))) })
		}
	}
	httpthrottle.RunAll(t, names, func(t *testing.T, i int) { run[i](t) })
}

// timeoutBase is the timeout a user writes under WithBase to time only the
// network: a deadline from the moment the Transport hands it the request
// (its token granted) until the response headers, the body read under the
// same context until it is closed.
type timeoutBase struct {
	base http.RoundTripper
	d    time.Duration
}

func (b *timeoutBase) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithTimeout(req.Context(), b.d)
	resp, err := b.base.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = &cancelCloser{resp.Body, cancel}
	return resp, nil
}

type cancelCloser struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelCloser) Close() error {
	defer c.cancel()
	return c.ReadCloser.Close()
}

// TestTransportServerWireControl: the same delaying proxy with the token
// released at the error (WithInFlightBound(0), what the Transport did
// before issue 18): the server refuses. On Per(5, 1s), what the clients
// send in the first 400 ms is delayed 900 ms and times out at 200 ms; those
// tokens renew about 1.2 s in, and the next window's requests, not
// delayed, arrive within a second of the first window's: only a machine
// that stalls the second window by most of a second could hide it.
func TestTransportServerWireControl(t *testing.T) {
	t.Parallel()
	start := time.Now()
	firstLate := func() time.Duration {
		if time.Since(start) < 400*time.Millisecond {
			return 900 * time.Millisecond
		}
		return 0
	}
	srv, err := throttletest.NewServer(rxthrottle.Per(wireN, time.Second))
	require.NoError(t, err)
	defer srv.Close()
	proxy, err := throttletest.NewProxy(srv.URL, firstLate)
	require.NoError(t, err)
	defer proxy.Close()
	netBase := &http.Transport{MaxIdleConnsPerHost: 64}
	defer netBase.CloseIdleConnections()
	b, err := rxthrottle.NewBucket(rxthrottle.Per(wireN, time.Second))
	require.NoError(t, err)
	tr, err := httpthrottle.NewTransport(b, httpthrottle.WithBase(netBase),
		httpthrottle.WithAttemptTimeout(200*time.Millisecond), httpthrottle.WithInFlightBound(0))
	require.NoError(t, err)
	ok, _, failed := sendWireJobs(t, &http.Client{Transport: tr}, wireN, 2*wireN, proxy.URL)
	require.Eventually(t, func() bool { return proxy.Queued() == 0 }, 30*time.Second, 5*time.Millisecond)
	t.Logf("%d ok, %d failed; server %+v; transport %+v", ok, failed, srv.Stats(), tr.Stats())
	assert.Positive(t, srv.Stats().Refused, "the server refused none: the test proves nothing")
	assert.Zero(t, tr.Stats().HeldPastError)
}
