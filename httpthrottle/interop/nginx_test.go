package interop

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle/httpthrottle"
)

// nginxConf is nginx's configuration for a loopback server of static
// files whose limit_req allows rate requests per second (a leaky bucket:
// one request per 1/rate, and with burst=B nodelay B more at once once
// it drained), refusing with status, and that logs every request's end
// ($msec) and status.
const nginxConf = `daemon off;
master_process off;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;
events { worker_connections 256; }
http {
	log_format arrivals '$msec $status';
	access_log %[1]s/access.log arrivals;
	client_body_temp_path %[1]s/tmp;
	proxy_temp_path %[1]s/tmp;
	fastcgi_temp_path %[1]s/tmp;
	uwsgi_temp_path %[1]s/tmp;
	scgi_temp_path %[1]s/tmp;
	limit_req_zone $server_name zone=z:1m rate=%[2]dr/s;
	limit_req_status %[3]d;
	server {
		listen 127.0.0.1:%[4]d;
		server_name interop;
		root %[1]s/www;
		location / { limit_req zone=z%[5]s; }
	}
}
`

// startNginx starts nginx on loopback with limit_req at rate per second
// (with burst=B nodelay if burst is B > 0), refusing with status, and
// returns its URL and a reader of its log. The test is skipped when nginx
// is not installed (CI installs it).
func startNginx(t testing.TB, rate, burst, status int) (string, func() []arrival) {
	bin, err := exec.LookPath("nginx")
	if err != nil {
		if _, err = os.Stat("/usr/sbin/nginx"); err != nil {
			t.Skip("nginx is not installed")
		}
		bin = "/usr/sbin/nginx"
	}
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "www"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "tmp"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "www", "index.html"), []byte("ok\n"), 0o644))
	port := freePort(t)
	conf := filepath.Join(dir, "nginx.conf")
	opt := ""
	if burst > 0 {
		opt = fmt.Sprintf(" burst=%d nodelay", burst)
	}
	require.NoError(t, os.WriteFile(conf, fmt.Appendf(nil, nginxConf, dir, rate, status, port, opt), 0o644))
	cmd := exec.Command(bin, "-p", dir, "-c", conf, "-e", filepath.Join(dir, "error.log"))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	url := fmt.Sprintf("http://127.0.0.1:%d/", port)
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 100*time.Millisecond)
		if err == nil {
			_ = c.Close()
			break
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Fatalf("nginx did not listen on %d: %s", port, log)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return url, func() []arrival { return readNginxLog(t, filepath.Join(dir, "access.log")) }
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// readNginxLog reads the access log's "$msec $status" lines.
func readNginxLog(t testing.TB, path string) []arrival {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out []arrival
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		at, status, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		secs, err := strconv.ParseFloat(at, 64)
		require.NoError(t, err)
		code, err := strconv.Atoi(status)
		require.NoError(t, err)
		out = append(out, arrival{time.UnixMilli(int64(secs * 1000)), code})
	}
	return out
}

// TestLearnAtNginx: the learning Transport at nginx's limit_req (10
// requests per second, one per 100 ms), refusing with its default 503 and
// with 429, neither with Retry-After nor quota headers, without a burst
// and with burst=5 nodelay: the rate is found from the refusals (the gap
// refined, httpthrottle/internal/learn/pace.go). Every request is
// delivered; nginx logged at most 2 refusals without a burst (issue 26),
// 3 with one. A CI run at 25d5b2c took 3 in a burst cell with timers 12 ms
// late: a late arrival moved the refinement's refusal just below the
// run-up's gap, where it was read as a bucket's without a burst; such a
// refusal is a burst's now (pace.go's burstSteps; TestLearnPaceBurstLate,
// and no 3 in 3000 virtual runs at 3-30 ms). The bound stays 3 because
// with both cores busy (two yes loops and other work, -race, timers late
// by 8-829 ms, median 118) 3 of 66 burst cells still took 3 (BENCHMARKS.md):
// the run-up's refusal falls inside a pace and the spreading is refused
// again before two acceptances prove a floor (probe_floor.go; not fixed),
// or late sends drain the burst during the refinement and its refusal
// falls far below the run-up's gap (now read as a burst's when the
// refinement's requests went late by two of the run-up's gaps in all:
// TestLearnPaceBurstLater). Without a burst, no second at nginx
// holds more than its 10 and the refusals; and nothing
// stalls: no two arrivals are further apart than the longest window
// learned (nginx sends no Retry-After to add, issue 26: no client is
// stalled longer than one real window plus the largest Retry-After seen),
// plus what the machine's load delays a timer meanwhile (schedLateness),
// three times (a request's wake-up, nginx's own and its log's), plus a
// second for the slack: a fixed 3 s failed at a load average of 24, where
// the client's timers alone ran late by seconds. Both starts: a wrong
// limit with WithLearnLimits, and NewLearningTransport.
func TestLearnAtNginx(t *testing.T) {
	// 100 requests (about 11 s at the 10 per second the refined gap
	// keeps); BENCHMARKS.md has the 200-request runs.
	const total = 100
	for _, burst := range []int{0, 5} {
		maxRefused := 2
		if burst > 0 {
			maxRefused = 3 // 3 of 66 burst cells took 3 with both cores busy: not yet issue 26's 2
		}
		for _, status := range []int{http.StatusServiceUnavailable, http.StatusTooManyRequests} {
			for _, start := range []string{"Per(1000,1s)", "NewLearningTransport"} {
				for _, workers := range []int{8, 32} {
					t.Run(fmt.Sprintf("burst=%d/%d/%s/c%d", burst, status, start, workers), func(t *testing.T) {
						t.Parallel()
						url, log := startNginx(t, n, burst, status)
						tr := newTransport(t, &http.Transport{}, start)
						checkNginx(t, tr, url, log, burst, workers, total, maxRefused)
					})
				}
			}
		}
	}
}

// checkNginx sends total requests from workers goroutines through tr to
// nginx at url, whose log log reads, and checks TestLearnAtNginx's
// invariants.
func checkNginx(t *testing.T, tr *httpthrottle.Transport, url string, log func() []arrival, burst, workers, total, maxRefused int) {
	begin := time.Now()
	late := schedLateness()
	refused := load(t, tr, url, workers, total)
	maxLate := late()
	arrivals := log()
	for wait := time.Now().Add(2 * time.Second); len(arrivals) < total && time.Now().Before(wait); arrivals = log() {
		time.Sleep(10 * time.Millisecond) // nginx writes its log after the answer
	}
	t.Logf("%d arrivals, %d refused, in %v; last %v", len(arrivals), refused, time.Since(begin), tr.LearnStats().Last)
	require.GreaterOrEqual(t, len(arrivals), total+refused, "nginx logged every arrival")
	assert.LessOrEqual(t, len(arrivals)-total, maxRefused, "refused as nginx logged them")
	if burst == 0 {
		// nginx logs an answer's end in whole milliseconds: a second
		// holds the arrivals logged less than 1 s after the first.
		for i := range arrivals {
			if j := i + n + maxRefused; j < len(arrivals) {
				assert.GreaterOrEqual(t, arrivals[j].at.Sub(arrivals[i].at), time.Second, "arrivals %d and %d: more than %d in a second", i, j, n+maxRefused)
			}
		}
	}
	window := time.Second // LearnProbeWindow's default: the window of the rate found
	for _, l := range tr.LearnStats().Last.Limits {
		window = max(window, l.Window)
	}
	bound := window + 3*maxLate + time.Second
	t.Logf("no-stall bound %v: window %v, timers late by up to %v", bound, window, maxLate)
	for i := 1; i < len(arrivals); i++ {
		assert.LessOrEqual(t, arrivals[i].at.Sub(arrivals[i-1].at), bound, "arrivals %d and %d: a stall", i-1, i)
	}
}

// schedLateness starts measuring how late a sleeping goroutine wakes (a
// 10 ms sleep, over and over) and returns the function that stops it and
// returns the worst lateness seen: what the machine's load adds to every
// wait of the client's.
func schedLateness() func() time.Duration {
	stop := make(chan struct{})
	done := make(chan time.Duration)
	go func() {
		var worst time.Duration
		for {
			select {
			case <-stop:
				done <- worst
				return
			default:
			}
			start := time.Now()
			time.Sleep(10 * time.Millisecond)
			worst = max(worst, time.Since(start)-10*time.Millisecond)
		}
	}()
	return func() time.Duration {
		close(stop)
		return <-done
	}
}
