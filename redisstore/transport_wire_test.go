package redisstore

import (
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle/throttletest"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
	"github.com/stretchr/testify/require"
)

// Issue 18 through a shared quota: three OS processes (this test binary,
// re-run as TestTransportWireChild) each send requests through an
// httpthrottle.Transport over one redisstore bucket with exactly the
// server's quota, to one throttletest server on loopback that counts every
// arrival in an exact sliding log. Two networks that bunch arrivals
// whatever the client's schedule:
//
//   - a delaying proxy (0-100 ms on the way in, delivered even after the
//     client gave up) and WithAttemptTimeout(50ms): about half the
//     requests time out on their way and still arrive; their tokens are
//     held in Redis past the error, for the in-flight bound;
//   - a server that drops the connection of every fourth request after
//     counting it: net/http sends the request again by itself, and the
//     re-send takes a token of the shared bucket of its own.
//
// The server refuses nothing and never sees more than N arrivals in a
// window. The in-flight bound (2 s) is twenty times the proxy's largest
// delay, so a loaded machine cannot break what is asserted.

const wireChildEnv = "RXTHROTTLE_TRANSPORT_WIRE_CHILD"

const (
	wireProcs    = 3
	wireN        = 5
	wireW        = 500 * time.Millisecond
	wireEach     = 8 // requests per process
	wireBound    = 2 * time.Second
	wireMaxDelay = 100 * time.Millisecond
)

type wireChildConfig struct {
	Addr    string // Redis
	URL     string // the server, or the proxy in front of it
	Timeout bool   // WithAttemptTimeout(50ms)
	Out     string
}

type wireChildReport struct {
	OK, Refused, Failed int
	Stats               httpthrottle.TransportStats
}

func TestTransportWireChild(t *testing.T) {
	raw := os.Getenv(wireChildEnv)
	if raw == "" {
		t.Skip("run by TestTransportWireSharedBucket only")
	}
	var cfg wireChildConfig
	require.NoError(t, json.Unmarshal([]byte(raw), &cfg))
	rdb := redis.NewClient(&redis.Options{Addr: cfg.Addr, ContextTimeoutEnabled: true})
	defer rdb.Close()
	b, err := NewBucket(rdb, "wire", rxthrottle.Per(wireN, wireW), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	netBase := &http.Transport{MaxIdleConnsPerHost: 16}
	defer netBase.CloseIdleConnections()
	opts := []httpthrottle.TransportOption{httpthrottle.WithBase(netBase), httpthrottle.OnHeaderError(nil),
		httpthrottle.WithInFlightBound(wireBound)}
	if cfg.Timeout {
		opts = append(opts, httpthrottle.WithAttemptTimeout(50*time.Millisecond))
	}
	tr, err := httpthrottle.NewTransport(b, opts...)
	require.NoError(t, err)
	client := &http.Client{Transport: tr}

	var report wireChildReport
	var mu sync.Mutex
	var jobs atomic.Int32
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for int(jobs.Add(1)) <= wireEach {
				resp, err := client.Get(cfg.URL + "/v1/items")
				mu.Lock()
				switch {
				case err != nil:
					report.Failed++
				case resp.StatusCode == http.StatusOK:
					report.OK++
				case resp.StatusCode == http.StatusTooManyRequests:
					report.Refused++
				default:
					t.Errorf("status %d", resp.StatusCode)
				}
				mu.Unlock()
				if err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}
		})
	}
	wg.Wait()
	// The tokens held past their errors end before this process does: a
	// request that may still arrive keeps its token in Redis until then.
	require.Eventually(t, func() bool { return tr.Stats().HoldingPastError == 0 }, 30*time.Second, 5*time.Millisecond)
	report.Stats = tr.Stats()
	out, err := json.Marshal(report)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(cfg.Out, out, 0o600))
}

func TestTransportWireSharedBucket(t *testing.T) {
	for _, c := range []struct {
		name  string
		proxy bool
	}{
		{"delaying proxy, WithAttemptTimeout", true},
		{"server drops connections after counting", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			redisSrv := redistest.Start(t)
			var sopts []throttletest.Option
			if !c.proxy {
				var accepted atomic.Int32
				sopts = append(sopts, throttletest.WithDropFunc(func() bool {
					i := accepted.Add(1)
					return i > 2*wireN && i%4 == 0
				}))
			}
			srv, err := throttletest.NewServer(rxthrottle.Per(wireN, wireW), sopts...)
			require.NoError(t, err)
			defer srv.Close()
			url := srv.URL
			var proxy *throttletest.Proxy
			if c.proxy {
				proxy, err = throttletest.NewProxy(srv.URL, func() time.Duration { return rand.N(wireMaxDelay + 1) })
				require.NoError(t, err)
				defer proxy.Close()
				url = proxy.URL
			}
			reports := runWireChildren(t, wireChildConfig{Addr: redisSrv.Addr(), URL: url, Timeout: c.proxy})
			if proxy != nil {
				require.Eventually(t, func() bool { return proxy.Queued() == 0 }, 30*time.Second, 5*time.Millisecond)
			}

			var total wireChildReport
			for _, r := range reports {
				total.OK += r.OK
				total.Refused += r.Refused
				total.Failed += r.Failed
				total.Stats.Attempts += r.Stats.Attempts
				total.Stats.Resends += r.Stats.Resends
				total.Stats.ErrorsAfterWrite += r.Stats.ErrorsAfterWrite
				total.Stats.HeldPastError += r.Stats.HeldPastError
			}
			t.Logf("%d processes: %d ok, %d refused, %d failed; attempts %d, re-sends %d, errors after write %d; server %+v",
				wireProcs, total.OK, total.Refused, total.Failed, total.Stats.Attempts, total.Stats.Resends, total.Stats.ErrorsAfterWrite, srv.Stats())
			require.Zero(t, srv.Stats().Refused, "requests the server refused")
			require.Zero(t, total.Refused)
			require.Equal(t, wireProcs*wireEach, total.OK+total.Failed, "every request answered or failed once")
			log := srv.Log()
			var at []time.Duration
			for _, a := range log {
				at = append(at, a.At.Sub(log[0].At))
			}
			sort.Slice(at, func(i, j int) bool { return at[i] < at[j] })
			for i := 0; i+wireN < len(at); i++ {
				require.GreaterOrEqual(t, at[i+wireN]-at[i], wireW, "arrivals %d and %d: more than %d in a window", i, i+wireN, wireN)
			}
			if c.proxy {
				require.Positive(t, total.Stats.ErrorsAfterWrite, "no request timed out in flight: the test proves nothing")
			} else {
				require.Positive(t, total.Stats.Resends, "the base never sent a request again: the test proves nothing")
			}
		})
	}
}

// runWireChildren runs wireProcs children with cfg and returns their
// reports.
func runWireChildren(t *testing.T, cfg wireChildConfig) []wireChildReport {
	t.Helper()
	dir := t.TempDir()
	var children []*exec.Cmd
	var outs []string
	for p := range wireProcs {
		c := cfg
		c.Out = filepath.Join(dir, "child"+strconv.Itoa(p)+".json")
		raw, err := json.Marshal(c)
		require.NoError(t, err)
		cmd := exec.Command(os.Args[0], "-test.run=^TestTransportWireChild$", "-test.count=1", "-test.timeout=120s")
		cmd.Env = append(os.Environ(), wireChildEnv+"="+string(raw))
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		children = append(children, cmd)
		outs = append(outs, c.Out)
	}
	var wg sync.WaitGroup
	outputs := make([][]byte, len(children))
	errs := make([]error, len(children))
	for i, cmd := range children {
		wg.Go(func() { outputs[i], errs[i] = cmd.CombinedOutput() })
	}
	wg.Wait()
	var reports []wireChildReport
	for i := range children {
		require.NoError(t, errs[i], "child %d: %s", i, outputs[i])
		raw, err := os.ReadFile(outs[i])
		require.NoError(t, err, "child %d wrote no report: %s", i, outputs[i])
		var r wireChildReport
		require.NoError(t, json.Unmarshal(raw, &r))
		reports = append(reports, r)
	}
	return reports
}
