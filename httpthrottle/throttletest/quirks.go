package throttletest

import (
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Quirk is a way the rate-limit answers of servers in use differ from a
// Handler's exact ones. A Handler keeps counting exactly (its Algorithm);
// only what it says, and how it refuses, change.
type Quirk int

const (
	// QuirkTruncatedReset writes DialectGitHub's X-RateLimit-Reset in
	// Unix seconds truncated, up to a second early (ulule/limiter does),
	// instead of rounded up.
	QuirkTruncatedReset Quirk = iota + 1
	// QuirkMillisReset writes DialectGitHub's X-RateLimit-Reset in Unix
	// milliseconds.
	QuirkMillisReset
	// QuirkRefuse503 refuses with 503 Service Unavailable and no
	// Retry-After, as nginx's limit_req does by default.
	QuirkRefuse503
	// QuirkFlipDialect announces in another dialect on every answer, in
	// turn IETF, IETF draft, GitHub, Discord and OpenAI, each with the
	// Handler's numbers.
	QuirkFlipDialect
)

// String returns the quirk's name.
func (q Quirk) String() string {
	switch q {
	case QuirkTruncatedReset:
		return "truncated-reset"
	case QuirkMillisReset:
		return "millis-reset"
	case QuirkRefuse503:
		return "refuse-503"
	case QuirkFlipDialect:
		return "flip-dialect"
	}
	return fmt.Sprintf("Quirk(%d)", int(q))
}

type quirkOption []Quirk

func (o quirkOption) apply(c *config) {
	for _, q := range o {
		if q < QuirkTruncatedReset || q > QuirkFlipDialect {
			c.errs = append(c.errs, fmt.Errorf("throttletest: WithQuirks(%v): unknown quirk", q))
			return
		}
		c.quirks |= 1 << q
	}
}

// WithQuirks makes the Handler answer with the quirks qs.
func WithQuirks(qs ...Quirk) Option { return quirkOption(qs) }

type announcedOption int

func (o announcedOption) apply(c *config) {
	if o < 1 {
		c.errs = append(c.errs, fmt.Errorf("throttletest: WithAnnouncedLimit(%d): at least 1 is required", int(o)))
		return
	}
	c.announced = int(o)
}

// WithAnnouncedLimit makes the Handler announce a quota of n in its
// dialect while it keeps enforcing its first limit: a liar when n is
// above it (its remaining is n less what the first limit counts used),
// as GitHub's secondary limits refuse while X-RateLimit-Remaining is in
// the thousands. n must be at least 1.
func WithAnnouncedLimit(n int) Option { return announcedOption(n) }

func (h *Handler) has(q Quirk) bool { return h.quirks&(1<<q) != 0 }

// flipOrder is QuirkFlipDialect's turn of dialects.
var flipOrder = []Dialect{DialectIETF, DialectIETFDraft, DialectGitHub, DialectDiscord, DialectOpenAI}

// announceQuirks applies the announcing quirks to st and returns the
// dialect to announce in.
func (h *Handler) announceQuirks(st *quotaState) Dialect {
	if h.announced > 0 {
		used := st.limit - st.remaining
		st.limit, st.remaining = h.announced, max(0, h.announced-used)
	}
	if h.has(QuirkFlipDialect) {
		return flipOrder[int(h.flips.Add(1)-1)%len(flipOrder)]
	}
	return h.dialect
}

// unixReset writes DialectGitHub's reset: Unix seconds rounded up (never
// early), or as QuirkTruncatedReset and QuirkMillisReset say.
func (h *Handler) unixReset(t time.Time) string {
	switch {
	case h.has(QuirkMillisReset):
		return strconv.FormatInt(t.UnixMilli(), 10)
	case h.has(QuirkTruncatedReset):
		return strconv.FormatInt(t.Unix(), 10)
	}
	return strconv.FormatInt(ceilUnix(t), 10)
}

// refuse writes a refusal: 429 with Retry-After and ExactRetryAfterHeader,
// or, with QuirkRefuse503, a bare 503.
func (h *Handler) refuse(w http.ResponseWriter, wait time.Duration) {
	hdr := w.Header()
	hdr.Set("Content-Type", "text/plain; charset=utf-8")
	if h.has(QuirkRefuse503) {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = fmt.Fprintln(w, "throttletest: service temporarily unavailable")
		return
	}
	hdr.Set("Retry-After", strconv.FormatInt(secondsCeil(wait), 10))
	hdr.Set(ExactRetryAfterHeader, formatSeconds(wait))
	w.WriteHeader(http.StatusTooManyRequests)
	_, _ = fmt.Fprintf(w, "throttletest: too many requests: retry in %v\n", wait)
}
