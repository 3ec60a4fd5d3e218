package throttletest

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/rxthrottle/rxthrottle/internal/seconds"
)

// Dialect is the set of rate-limit headers a Handler announces its first
// limit in, on every answer (accepted or refused), the way the API it
// imitates does. The default, DialectNone, announces nothing: a refusal's
// Retry-After is all a client learns.
type Dialect int

const (
	// DialectNone sends no quota headers.
	DialectNone Dialect = iota
	// DialectIETF sends the IETF fields RateLimit-Policy
	// (`"default";q=10;w=1`) and RateLimit (`"default";r=7;t=1`), with
	// pk=:name: when WithBucketName is given.
	DialectIETF
	// DialectIETFDraft sends the fields of the IETF drafts up to -06:
	// RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset in whole
	// seconds from now.
	DialectIETFDraft
	// DialectGitHub sends X-RateLimit-Limit, -Remaining, -Used and -Reset,
	// the reset in whole Unix seconds, as GitHub and go-chi/httprate do.
	DialectGitHub
	// DialectDiscord sends X-RateLimit-Limit, -Remaining, -Reset (Unix
	// seconds with milliseconds), -Reset-After (seconds, decimal) and
	// -Bucket (WithBucketName, "default" without it).
	DialectDiscord
	// DialectOpenAI sends x-ratelimit-limit-requests,
	// x-ratelimit-remaining-requests and x-ratelimit-reset-requests (a Go
	// duration to the millisecond: "850ms").
	DialectOpenAI
)

// String returns the dialect's name: "none", "ietf", "ietf-draft",
// "github", "discord" or "openai".
func (d Dialect) String() string {
	switch d {
	case DialectNone:
		return "none"
	case DialectIETF:
		return "ietf"
	case DialectIETFDraft:
		return "ietf-draft"
	case DialectGitHub:
		return "github"
	case DialectDiscord:
		return "discord"
	case DialectOpenAI:
		return "openai"
	}
	return fmt.Sprintf("Dialect(%d)", int(d))
}

// Algorithm is how a Handler counts its first limit. Further limits
// (WithLimit) are always kept as an exact sliding log.
type Algorithm int

const (
	// SlidingLog, the default, keeps the instant of every accepted
	// arrival and refuses the (N+1)-th in any window [t, t+W): the
	// strictest count.
	SlidingLog Algorithm = iota
	// FixedWindow counts arrivals in windows aligned on multiples of W
	// (of the Unix epoch, for W dividing a day) and refuses the (N+1)-th
	// of a window, as GitHub does.
	FixedWindow
	// SlidingWindowCounter is go-chi/httprate's algorithm (and that of
	// many gateways, after Cloudflare's): a request at d into the current
	// fixed window is refused when round(prev*(W-d)/W + curr) + 1 > N,
	// prev and curr the accepted counts of the previous and the current
	// window; a refusal's Retry-After is W in whole seconds.
	SlidingWindowCounter
)

// String returns the algorithm's name.
func (a Algorithm) String() string {
	switch a {
	case SlidingLog:
		return "sliding-log"
	case FixedWindow:
		return "fixed-window"
	case SlidingWindowCounter:
		return "sliding-window-counter"
	}
	return fmt.Sprintf("Algorithm(%d)", int(a))
}

type dialectOption Dialect

func (o dialectOption) apply(c *config) {
	if o < dialectOption(DialectNone) || o > dialectOption(DialectOpenAI) {
		c.errs = append(c.errs, fmt.Errorf("throttletest: WithDialect(%v): unknown dialect", Dialect(o)))
		return
	}
	c.dialect = Dialect(o)
}

// WithDialect makes the Handler announce its first limit in d's headers.
func WithDialect(d Dialect) Option { return dialectOption(d) }

type algorithmOption Algorithm

func (o algorithmOption) apply(c *config) {
	if o < algorithmOption(SlidingLog) || o > algorithmOption(SlidingWindowCounter) {
		c.errs = append(c.errs, fmt.Errorf("throttletest: WithAlgorithm(%v): unknown algorithm", Algorithm(o)))
		return
	}
	c.algorithm = Algorithm(o)
}

// WithAlgorithm sets how the first limit is counted (default SlidingLog).
func WithAlgorithm(a Algorithm) Option { return algorithmOption(a) }

type bucketNameOption string

func (o bucketNameOption) apply(c *config) {
	if o == "" {
		c.errs = append(c.errs, fmt.Errorf("throttletest: WithBucketName(\"\"): a name is required"))
		return
	}
	c.bucket = string(o)
}

// WithBucketName names the Handler's quota: Discord's X-RateLimit-Bucket
// and the IETF partition key (pk) carry it, so that a client can tell
// several Handlers behind one host apart. The name must not be empty.
func WithBucketName(name string) Option { return bucketNameOption(name) }

// quotaState is what a Handler announces of its first limit.
type quotaState struct {
	limit     int
	window    time.Duration
	remaining int
	reset     time.Time // when the quota is whole again (or the next token is back)

	tokensUsed  int       // of the token budget's window (WithTokenBudget)
	tokensStart time.Time // that window's start
}

// announce writes st in the Handler's dialect onto hdr.
func (h *Handler) announce(hdr http.Header, st quotaState, now time.Time) {
	d := h.announceQuirks(&st)
	untilReset := max(0, st.reset.Sub(now))
	secs := seconds.Ceil(untilReset)
	switch d {
	case DialectIETF:
		pk := ""
		if h.bucket != "" {
			pk = ";pk=:" + base64.StdEncoding.EncodeToString([]byte(h.bucket)) + ":"
		}
		hdr.Set("RateLimit-Policy", fmt.Sprintf(`"default";q=%d;w=%d%s`, st.limit, seconds.Ceil(st.window), pk))
		hdr.Set("RateLimit", fmt.Sprintf(`"default";r=%d;t=%d%s`, st.remaining, secs, pk))
	case DialectIETFDraft:
		hdr.Set("RateLimit-Limit", strconv.Itoa(st.limit))
		hdr.Set("RateLimit-Remaining", strconv.Itoa(st.remaining))
		hdr.Set("RateLimit-Reset", strconv.FormatInt(secs, 10))
	case DialectGitHub:
		hdr.Set("X-RateLimit-Limit", strconv.Itoa(st.limit))
		hdr.Set("X-RateLimit-Remaining", strconv.Itoa(st.remaining))
		hdr.Set("X-RateLimit-Used", strconv.Itoa(st.limit-st.remaining))
		hdr.Set("X-RateLimit-Reset", h.unixReset(st.reset))
	case DialectDiscord:
		bucket := h.bucket
		if bucket == "" {
			bucket = "default"
		}
		hdr.Set("X-RateLimit-Limit", strconv.Itoa(st.limit))
		hdr.Set("X-RateLimit-Remaining", strconv.Itoa(st.remaining))
		hdr.Set("X-RateLimit-Reset", fmt.Sprintf("%.3f", float64(st.reset.UnixMilli())/1000))
		hdr.Set("X-RateLimit-Reset-After", fmt.Sprintf("%.3f", untilReset.Seconds()))
		hdr.Set("X-RateLimit-Bucket", bucket)
	case DialectOpenAI:
		hdr.Set("X-Ratelimit-Limit-Requests", strconv.Itoa(st.limit))
		hdr.Set("X-Ratelimit-Remaining-Requests", strconv.Itoa(st.remaining))
		hdr.Set("X-Ratelimit-Reset-Requests", untilReset.Round(time.Millisecond).String())
	}
}

// ceilUnix returns t in whole Unix seconds, rounded up: the reset is never
// announced earlier than it is.
func ceilUnix(t time.Time) int64 {
	s := t.Unix()
	if t.Nanosecond() > 0 {
		s++
	}
	return s
}
