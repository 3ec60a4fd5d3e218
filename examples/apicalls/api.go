package main

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/guard"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
)

// clientHeader names the client of a request: the API keeps one quota per
// client, the way a real API keys its quota by user or API token.
const clientHeader = "X-Client"

// api is the local API both clients call: GET /items/{id} answers
// {"id": "..."}. In front of it stands httpthrottle's Middleware,
// enforcing the guard policy per client; around both, a recorder keeps the
// server's view of each client's requests (when each arrived, and whether it
// was refused), which the timeline draws.
type api struct {
	cfg     config
	guard   *guard.Guard
	handler http.Handler
	out     *printer

	mu      sync.Mutex
	clients map[string]*clientLog
}

// clientLog is what the API saw of one client.
type clientLog struct {
	start    time.Time // when the client started its batch
	arrivals []arrival
}

// arrival is one request as the API saw it.
type arrival struct {
	at      time.Duration // demo time since the client's start
	refused bool
}

func newAPI(cfg config, out *printer) (*api, error) {
	a := &api{cfg: cfg, out: out, clients: map[string]*clientLog{}}
	policy := guard.Policy{Limit: rxthrottle.Per(cfg.rate, cfg.real(cfg.window)), Block: cfg.real(cfg.block)}
	g, err := guard.New(policy,
		guard.OnBlocked(a.blocked),
		// The guard's own warning ("key is over the usage limit") would
		// go to stderr with real timestamps; the demo tells the same
		// story in demo time through OnBlocked.
		guard.WithLogger(slog.New(slog.DiscardHandler)),
	)
	if err != nil {
		return nil, fmt.Errorf("apicalls: the API's guard: %w", err)
	}
	middleware, err := httpthrottle.Middleware(g, httpthrottle.WithKey(httpthrottle.KeyByHeader(clientHeader)))
	if err != nil {
		return nil, fmt.Errorf("apicalls: the API's middleware: %w", err)
	}
	a.guard = g
	mux := http.NewServeMux()
	mux.HandleFunc("GET /items/{id}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"id": r.PathValue("id")})
	})
	a.handler = a.record(middleware(mux))
	return a, nil
}

// begin marks now as the start of p's client's batch, for p and for the
// API's log of that client, and returns p.
func (a *api) begin(p *progress) *progress {
	a.mu.Lock()
	defer a.mu.Unlock()
	p.start = time.Now()
	a.clients[p.name] = &clientLog{start: p.start}
	return p
}

// log returns a copy of what the API saw of client.
func (a *api) log(client string) []arrival {
	a.mu.Lock()
	defer a.mu.Unlock()
	if c := a.clients[client]; c != nil {
		return append([]arrival(nil), c.arrivals...)
	}
	return nil
}

// since returns the demo time from client's start to t.
func (a *api) since(client string, t time.Time) time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	if c := a.clients[client]; c != nil {
		return a.cfg.demo(t.Sub(c.start))
	}
	return 0
}

// record wraps next so that every request's arrival and outcome is logged.
func (a *api) record(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, r)
		a.mu.Lock()
		defer a.mu.Unlock()
		if c := a.clients[r.Header.Get(clientHeader)]; c != nil {
			c.arrivals = append(c.arrivals, arrival{
				at:      a.cfg.demo(arrived.Sub(c.start)),
				refused: sw.status == http.StatusTooManyRequests,
			})
		}
	})
}

// blocked is the guard's OnBlocked hook: the moment a client goes over the
// quota and the cool-down starts.
func (a *api) blocked(client string, until time.Time) {
	now := time.Now()
	a.out.event(a.since(client, now), "429 Too Many Requests: %q is blocked until %s", client, clock(a.since(client, until)))
}

// statusWriter remembers the status code a handler answered with.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

// clock formats a demo duration, rounded to the second, as a clock
// reading: "0:00", "4:30", "1:02:03".
func clock(d time.Duration) string {
	neg := ""
	if d < 0 {
		neg, d = "-", -d
	}
	d = d.Round(time.Second)
	h, m, s := int(d/time.Hour), int(d/time.Minute)%60, int(d/time.Second)%60
	if h > 0 {
		return fmt.Sprintf("%s%d:%02d:%02d", neg, h, m, s)
	}
	return fmt.Sprintf("%s%d:%02d", neg, m, s)
}

// plural returns "1 request", "2 requests".
func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
