package interop

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/httprate"
	"github.com/sethvargo/go-limiter/httplimit"
	"github.com/sethvargo/go-limiter/memorystore"
	"github.com/stretchr/testify/require"
)

// capturedDir is where the learner's tests read captured responses from.
const capturedDir = "../internal/learn/testdata/captured"

// TestCaptureRealLimiters records, byte for byte as they came off the
// wire, the answers of each real limiter of servers (and of nginx's
// limit_req, when installed) on loopback to n+1 requests:
// the first (accepted) and the last (refused), sent back to back. With
// RXTHROTTLE_RECORD_CAPTURES=1 it writes them to capturedDir, each headed
// by comment lines saying how it was produced; without, it checks that
// what each limiter sends today still carries the headers of its capture
// (a library upgrade that changes its dialect fails here).
func TestCaptureRealLimiters(t *testing.T) {
	record := os.Getenv("RXTHROTTLE_RECORD_CAPTURES") == "1"
	type target struct {
		name, module, url, how string
	}
	var targets []target
	for _, srv := range append(servers[:len(servers):len(servers)], captureOnly(t)...) {
		s := newCounted(t, srv.wrap)
		targets = append(targets, target{srv.name, serverModules[srv.name], s.URL, serverConfigs[srv.name]})
	}
	if u, ok := nginxURL(t); ok {
		targets = append(targets, target{"nginx-503", nginxVersion(), u, "limit_req_zone rate=10r/s, limit_req burst 0, limit_req_status 503 (nginx's default status)"})
	}
	for _, tg := range targets {
		raws := rawBurst(t, tg.url, n+1)
		for i, which := range map[int]string{0: "accepted", n: "refused"} {
			name := tg.name + "-" + which + ".http"
			if tg.name == "nginx-503" || tg.name == "httprate-503" {
				if i == 0 {
					continue // a static file's 200: nothing of the limiter in it
				}
				name = tg.name + ".http"
			}
			header := fmt.Sprintf("# Captured verbatim by TestCaptureRealLimiters (httpthrottle/interop, capture_test.go)\n"+
				"# on %s: %s, %s, on loopback;\n# answer %d of %d requests sent back to back, each on its own connection once the answer before was read.\n",
				time.Now().UTC().Format(time.DateOnly), tg.module, tg.how, i+1, n+1)
			path := filepath.Join(capturedDir, name)
			if record {
				require.NoError(t, os.WriteFile(path, append([]byte(header), raws[i]...), 0o644))
				continue
			}
			old, err := os.ReadFile(path)
			if os.IsNotExist(err) {
				t.Errorf("%s: no capture; run with RXTHROTTLE_RECORD_CAPTURES=1", path)
				continue
			}
			require.NoError(t, err)
			require.Equal(t, headerNames(t, old), headerNames(t, raws[i]), "%s: the headers %s sends changed; record again", name, tg.module)
		}
	}
}

// serverModules names each server's module and version as go.mod has it.
var serverModules = map[string]string{
	"httprate":     moduleVersion("github.com/go-chi/httprate"),
	"ulule":        moduleVersion("github.com/ulule/limiter/v3"),
	"tollbooth":    moduleVersion("github.com/didip/tollbooth/v7"),
	"golimiter":    moduleVersion("github.com/sethvargo/go-limiter"),
	"httprate-503": moduleVersion("github.com/go-chi/httprate"),
}

// serverConfigs says how each server of servers is set up.
var serverConfigs = map[string]string{
	"httprate":     "httprate.LimitBy(10, time.Second, httprate.Key(\"*\"))",
	"ulule":        "stdlib.NewMiddleware(limiter.New(memory.NewStore(), limiter.Rate{Period: time.Second, Limit: 10}))",
	"tollbooth":    "tollbooth.LimitHandler(tollbooth.NewLimiter(10, nil), h)",
	"golimiter":    "httplimit.NewMiddleware(memorystore.New(&memorystore.Config{Tokens: 10, Interval: time.Second}), httplimit.IPKeyFunc()).Handle(h)",
	"httprate-503": "httprate.LimitBy(10, time.Second, httprate.Key(\"*\"), httprate.WithLimitHandler(a 503: http.Error(w, http.StatusText(503), 503))) (its headers, Retry-After among them, are set before the limit handler runs)",
}

// captureOnly returns the limiters whose answers are captured (their
// dialect tested in internal/learn) but that are not among servers (so
// that TestLearnAtRealLimiters and the benchmarks do not run at them):
// sethvargo/go-limiter, whose X-RateLimit-Reset and Retry-After are HTTP
// dates in "UTC" (TestLearnAtGoLimiter), and go-chi/httprate refusing
// with 503 through its WithLimitHandler (a 503 with Retry-After, which no
// recorded answer of a hosted API was found to carry).
func captureOnly(t *testing.T) []struct {
	name  string
	wrap  func(http.Handler) http.Handler
	exact bool
} {
	store, err := memorystore.New(&memorystore.Config{Tokens: n, Interval: time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { _ = store.Close(context.Background()) })
	mw, err := httplimit.NewMiddleware(store, httplimit.IPKeyFunc())
	require.NoError(t, err)
	return []struct {
		name  string
		wrap  func(http.Handler) http.Handler
		exact bool
	}{{"golimiter", mw.Handle, false}, {"httprate-503", httprate.LimitBy(n, time.Second, httprate.Key("*"),
		httprate.WithLimitHandler(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, http.StatusText(http.StatusServiceUnavailable), http.StatusServiceUnavailable)
		})), false}}
}

func moduleVersion(path string) string {
	mod, err := os.ReadFile("go.mod")
	if err != nil {
		return path
	}
	for _, line := range strings.Split(string(mod), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == path {
			return path + " " + f[1]
		}
	}
	return path
}

// rawBurst sends k GET requests one after another, each on its own
// connection and each once the answer to the one before is read (so the
// limiter has counted it), and returns the bytes of each answer as they
// came off the wire.
func rawBurst(t *testing.T, rawURL string, k int) [][]byte {
	u, err := url.Parse(rawURL)
	require.NoError(t, err)
	out := make([][]byte, k)
	for i := range out {
		c, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
		require.NoError(t, err)
		_, err = fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: %s\r\nUser-Agent: rxthrottle-capture\r\nConnection: close\r\n\r\n", u.Host)
		require.NoError(t, err)
		require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
		out[i], err = io.ReadAll(c)
		_ = c.Close()
		require.NoError(t, err)
	}
	return out
}

// headerNames returns the canonical names of the header fields of the
// raw response b (comment lines first left out), sorted.
func headerNames(t *testing.T, b []byte) []string {
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(stripComments(b))), nil)
	require.NoError(t, err)
	var names []string
	for k := range resp.Header {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// stripComments drops the leading lines that start with '#'.
func stripComments(b []byte) []byte {
	for bytes.HasPrefix(b, []byte("#")) {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return nil
		}
		b = b[i+1:]
	}
	return b
}

// nginxURL starts nginx's limit_req at 10 per second with its default
// 503, if nginx is installed.
func nginxURL(t *testing.T) (string, bool) {
	if _, err := os.Stat("/usr/sbin/nginx"); err != nil {
		return "", false
	}
	u, _ := startNginx(t, n, 0, http.StatusServiceUnavailable)
	return u, true
}

func nginxVersion() string {
	out, err := exec.Command("/usr/sbin/nginx", "-v").CombinedOutput()
	if err != nil {
		return "nginx"
	}
	return strings.TrimSpace(strings.TrimPrefix(string(out), "nginx version: "))
}
