package httpthrottle

import (
	"errors"
	"time"

	"github.com/rxthrottle/rxthrottle"
)

// WithLearnLimits makes the Transport set its limiter's limits from what
// the server announces, and keep them current, so that a client needs no
// number to start with. It reads every dialect in use:
//
//   - the IETF fields RateLimit-Policy (q, w, the unit qu, the partition
//     key pk) and RateLimit (r, t, pk), and the older RateLimit-Limit,
//     -Remaining, -Reset;
//   - X-RateLimit-Limit, -Remaining, -Reset (GitHub and most others; the
//     reset in Unix seconds, seconds from now, or an HTTP-date as
//     sethvargo/go-limiter sends it), with Discord's
//     X-RateLimit-Reset-After and X-RateLimit-Bucket;
//   - OpenAI's x-ratelimit-limit-requests, -remaining-requests and
//     -reset-requests (a Go duration such as "850ms").
//
// A quota that says its window (w) is kept as it is. One that does not
// (X-RateLimit-*, OpenAI) gets a window inferred from its resets: at first
// the time left until the reset, which covers the rest of the server's
// current window; then, once the reset moves on, the gap between two
// successive resets (plus twice the jitter seen between readings of one
// reset, and 1%). Several quotas at once become several limits.
//
// Resets in whole Unix seconds rounded up (a sliding log's, never early)
// say up to a second more than the window, and a client that resumes at
// each reset makes every gap between them the window plus a second. So
// once such a quota is spent at a server that accepts bursts, one request
// goes alone before its reset, at the instant the window would end were it
// a whole number of seconds (the reset less the window's first request
// rounded up to a whole second), a few milliseconds after: accepted, the
// window is at most the time from the window's first request to that
// answer, the quota is kept over it, and a spent quota's reset no longer
// pauses; refused, the resets stand, and the refusal is not taken for a
// counter's (nothing is spread), and no other check is made: it costs at
// most that one refusal. A check answered late finds the window that much
// long, and the next spent windows check again (at most 3 checks a
// schedule). A fixed window of 2 s or more looks alike once the client
// resumes at each reset (its check is refused) unless a first answer was
// read less than the window guessed before its reset: it is then not
// checked.
//
// How the server counts is found out too. A fixed window or a sliding log
// accepts the quota in a burst once its window has moved on; a
// sliding-window counter (go-chi/httprate, many gateways) estimates the
// last window from two fixed ones, prev*(W-d)/W + curr, and refuses such a
// burst at a window's start although no window held more than the quota.
// Where the resets mark the windows (Unix seconds, fractions, durations),
// requests are held at the next boundary for one request's share of the
// window (W/N), then one goes alone: a fixed window counts it alone, a
// counter also counts most of the last window, and says so in what it
// announces is left. Where they do not (the IETF fields' whole seconds
// from now), the first request after a spent quota's tokens renew goes
// alone, when nothing else of the client's is in the last window: a counter
// still counts part of it. A counter found so, or a server that refuses
// although its announced quota was kept, is called evenly: requests
// arrive at least W/(N*share) apart, share = 1/(1+0.75/N) (93% for N = 10),
// at which such a counter never refuses, with a quarter of a request's
// share to spare for its own delays; a refusal lowers the share by 5%.
// While spreading, a spent-quota header does not pause (the estimate
// decays continuously), a refusal's Retry-After still does. Each check
// costs a round trip of one request at a time (and W/N at a boundary);
// at most 4 boundaries or 8 renewals are checked per schedule.
//
// A quota counted in another unit is
// reported to OnLearn and not applied, except OpenAI's token budget: a
// request whose context carries WithTokenEstimate also waits for that many
// tokens of the learned budget, held until ReportTokens says what it used.
//
// Until the first answer's headers are read, at most one request is in
// flight, so nothing is refused because the quota was not yet known. A
// server that names its buckets (Discord's X-RateLimit-Bucket, the IETF
// pk) gets a schedule per bucket: a request whose route (the Transport's
// key: "" for NewTransport) was last answered from a bucket also waits for
// a token of that bucket's schedule, a Bucket of the learned limits.
//
// An announcement is believed as far as the answers bear it out: until
// the requests it accepted reach its N, no more are in flight on it than
// were accepted, in powers of two (a limit of k per 1ns holds k in
// flight), so that a server announcing far more than it accepts refuses at
// most about what it accepted, not every request in flight.
//
// When nothing usable is published, the Transport finds the rate from the
// server's refusals: a slow start paces its requests at W/n (never a
// burst: a leaky bucket without one, nginx's limit_req, refuses the second
// request of a burst whatever its rate) and grows n by half once half a
// window went at that pace (from 1, over LearnProbeWindow). The first
// refusal sets the rate to what the server accepted in the window before
// it (ending where a Retry-After shorter than LearnProbeWindow says the
// server's window ends). When it refused the first request at a new pace
// with no Retry-After longer than the gap before, as a leaky bucket does
// (nginx's limit_req: a request closer than W/N to the last accepted is
// refused), the gap is refined instead: one request at a time, a few at
// the last pace accepted, then 2% closer after each accepted answer, until
// one is refused; the gap kept is the shortest between an accepted
// request's sending and the next accepted answer (never refused by a
// bucket without a burst, whatever the round trips do), with a count per
// window to match. Refused at the last pace accepted, the server was full
// (a bucket with a burst let the run-up through): half that pace is kept,
// or, if the window before held the same count at both refusals, as a
// sliding log's does, that count. A later refusal widens the gap by 5%, or
// to the gap the server kept between the last two refusals (at most
// twice). Otherwise, when the refusal asked for a pause (Retry-After) and
// one request at a time carries the rate, the rate found is first kept as
// a sliding log takes it, from the pause's end: N per W, not spread (a
// log's quota in a burst after the pause, its window empty), one request
// in flight so that a server refusing it refuses one. The first refusal
// ends that (a sliding-window counter refuses it: one refusal more), and
// lowers the rate found to the most the server can accept by what it
// accepted: its last window's count for a log, the largest estimate plus
// a half of a counter at any phase of its windows. The rate found is then
// kept spread evenly (one request per W/N: a burst at a window's start is what
// an estimating server refuses), from one request's gap after the
// refusal's pause (when a sliding-window counter no longer carries the
// run-up's burst), at the share such a counter accepts (N/(N+0.75): 93%
// for N = 10). A quiet stretch raises the share by 0.5%, beyond 100%
// raising the rate itself: after two windows, and above that first share
// after a stretch twice the last, up to 16 windows, since each such rise
// probes a rate an estimating server may refuse, at the cost of a pause. A
// refusal caps the share below the level refused and lowers it by 5%
// (never below half), or, if the server accepted fewer than the rate found
// in the window before it, sets the rate to what it accepted: the
// run-up counted two windows of a fixed-window server, or the quota fell
// (after a refusal of the sliding log's schedule, the count accepted at
// that refusal, if a fixed window of it would have refused the same).
//
// The limits learned are never looser than the ceiling (LearnCeiling):
// the Transport's limiter keeps it from the start (per key for a keyed
// one), and it joins every learned set. A window is never longer than the
// Transport's maximum pause (WithMaxPause): a longer one is scaled down to
// it, at the same rate. Every change is reported to OnLearn and counted in
// LearnStats. Memory is bounded: at most LearnMaxBuckets server buckets
// and routes are kept, the least recently used forgotten first, and at
// most 8 quotas per schedule.
//
// A refusal a learning Transport meets is its own doing as often as not
// (the slow start's run-up, a rise of the share probed, a liar believed):
// it is retried, a new attempt with a token of its own after the pause
// the refusal set, up to WithMaxAttempts' attempts in all (by default
// DefaultMaxAttempts, the same for every refusal: 3), or LearnMaxAttempts'
// if given, unless the server says x-should-retry: false or the body
// cannot be sent again.
//
// Learning needs held tokens: it is an error with WithDepartureRenewal.
func WithLearnLimits(opts ...LearnOption) TransportOption {
	c := learnConfig{maxBuckets: DefaultLearnMaxBuckets, probeWindow: time.Second}
	for _, o := range opts {
		if o == nil {
			c.err = errors.New("httpthrottle: WithLearnLimits: nil LearnOption")
			break
		}
		o.applyLearn(&c)
	}
	return learnOption{c}
}

// DefaultLearnMaxBuckets is how many server-named buckets (and routes
// pointing at them) a learning Transport keeps unless LearnMaxBuckets says
// otherwise.
const DefaultLearnMaxBuckets = 256

// LearnOption configures WithLearnLimits.
type LearnOption interface {
	applyLearn(*learnConfig)
}

type learnConfig struct {
	ceiling     []rxthrottle.Limit
	onLearn     func(LearnEvent)
	maxBuckets  int
	probeWindow time.Duration
	maxAttempts int // LearnMaxAttempts; 0: WithMaxAttempts'
	attemptsSet bool
	window      time.Duration // LearnWindow; 0 for none
	windowSet   bool
	err         error
}

type learnAttemptsOption int

func (o learnAttemptsOption) applyLearn(c *learnConfig) { c.maxAttempts, c.attemptsSet = int(o), true }

// LearnMaxAttempts sets how many attempts in all a learning Transport
// makes for a refused request, in place of WithMaxAttempts' (whose default,
// DefaultMaxAttempts, every adapter shares); 1 returns every refusal to
// the caller. It does not change the retries of timed-out attempts,
// which WithMaxAttempts sets. n must be at least 1.
func LearnMaxAttempts(n int) LearnOption { return learnAttemptsOption(n) }

type learnOption struct{ c learnConfig }

func (o learnOption) apply(c *transportConfig) {
	lc := o.c
	c.learn = &lc
}

type ceilingOption struct{ limits []rxthrottle.Limit }

func (o ceilingOption) applyLearn(c *learnConfig) { c.ceiling = append(c.ceiling, o.limits...) }

// LearnCeiling sets limits the learned ones never exceed: each joins every
// set of limits the Transport learns, so the schedule keeps them all. An
// invalid limit makes NewTransport fail.
func LearnCeiling(limit rxthrottle.Limit, more ...rxthrottle.Limit) LearnOption {
	return ceilingOption{append([]rxthrottle.Limit{limit}, more...)}
}

type onLearnOption struct{ f func(LearnEvent) }

func (o onLearnOption) applyLearn(c *learnConfig) { c.onLearn = o.f }

// OnLearn sets a hook called after every change of a learned schedule and
// for every announced quota the Transport will not apply. It runs on the
// goroutine of the request whose answer caused it, outside the Transport's
// locks, and must be safe for concurrent use.
func OnLearn(f func(LearnEvent)) LearnOption { return onLearnOption{f} }

type maxBucketsOption int

func (o maxBucketsOption) applyLearn(c *learnConfig) { c.maxBuckets = int(o) }

// LearnMaxBuckets bounds how many server-named buckets, and routes that
// point at one, are kept (default DefaultLearnMaxBuckets); beyond it the
// least recently used is forgotten (its requests then wait on the route's
// limiter alone until the server names the bucket again). n must be at
// least 1.
func LearnMaxBuckets(n int) LearnOption { return maxBucketsOption(n) }

type probeWindowOption time.Duration

func (o probeWindowOption) applyLearn(c *learnConfig) { c.probeWindow = time.Duration(o) }

// LearnProbeWindow sets the window the slow start counts in when a server
// publishes nothing (default one second): the rate found from the first
// refusal replaces it. d must be positive.
func LearnProbeWindow(d time.Duration) LearnOption { return probeWindowOption(d) }

type windowOption time.Duration

func (o windowOption) applyLearn(c *learnConfig) { c.window, c.windowSet = time.Duration(o), true }

// LearnWindow states the server's window, d, for the quotas it announces
// without one (X-RateLimit-*, OpenAI's, Anthropic's): they are kept over d
// instead of a window inferred from their resets, and a spent quota's
// reset no longer pauses the Transport (a Retry-After still does): the
// learned limit holds the quota, and a reset in whole seconds rounded up
// (a sliding log's, never early) would cost up to a second a window
// (without it, one request before such a reset finds a window of whole
// seconds; see WithLearnLimits). Use it for a server whose window is known
// and that the Transport does not share. d must be positive.
func LearnWindow(d time.Duration) LearnOption { return windowOption(d) }
