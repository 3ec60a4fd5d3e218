package throttletest

import (
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/internal/seconds"
)

// ExactRetryAfterHeader is the header in which a refusal carries the exact
// wait (Retry-After has whole seconds only), in decimal seconds with
// nanosecond precision: "0.123456789".
const ExactRetryAfterHeader = "Throttletest-Retry-After"

// Arrival is one request as the Handler saw it.
type Arrival struct {
	// At is the arrival: the Handler's clock, read under its lock when
	// the request reached it.
	At time.Time
	// Accepted is true when the request went on to the wrapped handler,
	// false when it was refused with 429.
	Accepted bool
	// RetryAfter is, for a refused request, the exact time from At until
	// it would have been accepted; 0 for an accepted one.
	RetryAfter time.Duration
	// Method and Path are the request's method and URL path (the query is
	// left out).
	Method, Path string
	// Dropped is true for an accepted request whose connection the Handler
	// then dropped without an answer (WithDropFunc, WithDropRate): it was
	// counted, and the client got no response.
	Dropped bool
}

// Stats counts the requests a Handler has seen.
type Stats struct {
	// Accepted is the number of requests passed to the wrapped handler.
	Accepted int
	// Refused is the number of requests answered 429.
	Refused int
	// Dropped is the number of accepted requests whose connection was
	// dropped without an answer; they count in Accepted too.
	Dropped int
}

// Handler is an http.Handler that enforces the quota (see the package
// documentation) before the wrapped handler runs, and keeps the log of
// arrivals. Build it with NewHandler; a Server wraps one. It is safe for
// concurrent use.
type Handler struct {
	limits  []rxthrottle.Limit
	maxN    int
	next    http.Handler
	clock   clock.Clock
	latency func() time.Duration
	drop    func() bool // nil: never

	dialect   Dialect
	algorithm Algorithm
	bucket    string
	quirks    uint         // WithQuirks: bit q set for each Quirk q
	announced int          // WithAnnouncedLimit; 0 without
	flips     atomic.Int64 // QuirkFlipDialect's turn

	mu       sync.Mutex
	log      []Arrival
	accepted []time.Time // the latest accepted arrivals, at most 2*maxN
	stats    Stats
	// The fixed windows of the first limit (FixedWindow and
	// SlidingWindowCounter): the current one's start and the accepted
	// counts of it and of the one before.
	winStart   time.Time
	curr, prev int
	// The token budget (WithTokenBudget): its window's start and use.
	tokens   rxthrottle.Limit
	tokStart time.Time
	tokUsed  int
}

// NewHandler returns a Handler that enforces limit, and every limit added
// with WithLimit, on the requests it serves. It reads the options
// WithLimit, WithHandler, WithClock, WithLatency and WithLatencyFunc (the
// latency applies to RoundTrip). A limit with N < 1 or Window <= 0 is an
// error wrapping rxthrottle.ErrInvalidLimit; a nil or bad option is an
// error, and so is WithFreshConnections, an option of NewServer only.
func NewHandler(limit rxthrottle.Limit, opts ...Option) (*Handler, error) {
	c, err := buildConfig(limit, opts)
	if err != nil {
		return nil, err
	}
	if c.fresh {
		return nil, errors.New("throttletest: NewHandler does not read WithFreshConnections: it is an option of NewServer (a Handler makes no connections)")
	}
	return newHandler(c), nil
}

func newHandler(c config) *Handler {
	h := &Handler{limits: c.limits, next: c.next, clock: c.clock, latency: c.latency,
		dialect: c.dialect, algorithm: c.algorithm, bucket: c.bucket, drop: c.drop, tokens: c.tokens,
		quirks: c.quirks, announced: c.announced}
	for _, l := range c.limits {
		h.maxN = max(h.maxN, l.N)
	}
	return h
}

// ServeHTTP stamps the request's arrival, then either passes it to the
// wrapped handler or answers 429 Too Many Requests with Retry-After and
// ExactRetryAfterHeader.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a, st := h.arrive(r)
	hdr := w.Header()
	h.announce(hdr, st, a.At)
	h.announceTokens(hdr, st.tokensUsed, st.tokensStart, a.At)
	if a.Dropped {
		// The server's way to close the connection (HTTP/1) or reset
		// the stream (HTTP/2) without an answer and without a log line.
		panic(http.ErrAbortHandler)
	}
	if a.Accepted {
		h.next.ServeHTTP(w, r)
		return
	}
	h.refuse(w, a.RetryAfter)
}

func secondsCeil(d time.Duration) int64 { return seconds.Ceil(d) }

// arrive decides on r and logs it. The clock is read under the lock, so
// that the log's instants are in the order of the decisions.
func (h *Handler) arrive(r *http.Request) (Arrival, quotaState) {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.clock.Now()
	a := Arrival{At: now, Method: r.Method}
	if r.URL != nil {
		a.Path = r.URL.Path
	}
	h.rollLocked(now)
	cost := tokenCost(r)
	a.RetryAfter = max(h.waitLocked(now), h.tokenWaitLocked(now, cost))
	a.Accepted = a.RetryAfter == 0
	if a.Accepted {
		h.curr++
		if h.tokens.N > 0 {
			h.tokUsed += cost
		}
		h.stats.Accepted++
		if h.drop != nil && h.drop() {
			a.Dropped = true
			h.stats.Dropped++
		}
		if len(h.accepted) == 2*h.maxN {
			h.accepted = append(h.accepted[:0], h.accepted[h.maxN:]...)
		}
		h.accepted = append(h.accepted, now)
	} else {
		h.stats.Refused++
	}
	h.log = append(h.log, a)
	st := h.quotaLocked(now)
	st.tokensUsed, st.tokensStart = h.tokUsed, h.tokStart
	return a, st
}

// waitLocked returns how long from now until one more arrival fits every
// limit: for each limit (N, W) that already has N accepted arrivals in
// (now-W, now], the time until the oldest of them leaves the window. 0
// means the request fits now. It requires h.mu to be held.
func (h *Handler) waitLocked(now time.Time) time.Duration {
	wait, limits := h.firstWaitLocked(now)
	for _, l := range limits {
		if len(h.accepted) < l.N {
			continue
		}
		oldest := h.accepted[len(h.accepted)-l.N]
		if d := oldest.Add(l.Window).Sub(now); d > wait {
			wait = d
		}
	}
	return wait
}

// Log returns a copy of the arrivals seen so far, in arrival order.
func (h *Handler) Log() []Arrival {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Arrival(nil), h.log...)
}

// Stats returns the counts of accepted and refused requests so far.
func (h *Handler) Stats() Stats {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.stats
}

// formatSeconds writes d in decimal seconds with nanosecond precision.
func formatSeconds(d time.Duration) string {
	return fmt.Sprintf("%d.%09d", d/time.Second, d%time.Second)
}
