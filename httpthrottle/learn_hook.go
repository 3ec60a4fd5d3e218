package httpthrottle

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle/internal/learn"
)

// The Transport's hook points for learning (the learner itself is
// internal/learn): its gate, its reading of the headers, its reports.

// newLearner builds the learner of cfg for a Transport of tcfg over g.
func newLearner(cfg learnConfig, tcfg transportConfig, g gate) (*learn.Learner, error) {
	if cfg.err != nil {
		return nil, cfg.err
	}
	if cfg.window < 0 || (cfg.window == 0 && cfg.windowSet) {
		return nil, fmt.Errorf("httpthrottle: LearnWindow(%v): the window must be positive", cfg.window)
	}
	if cfg.attemptsSet && cfg.maxAttempts < 1 {
		return nil, fmt.Errorf("httpthrottle: LearnMaxAttempts(%d): at least 1 attempt is required", cfg.maxAttempts)
	}
	if tcfg.departure {
		return nil, errors.New("httpthrottle: WithLearnLimits needs held tokens: it cannot be used with WithDepartureRenewal")
	}
	lc := learn.Config{
		Ceiling: cfg.ceiling, MaxBuckets: cfg.maxBuckets, ProbeWindow: cfg.probeWindow,
		MaxPause: tcfg.policy.MaxPause, Clock: tcfg.clock, Window: cfg.window,
	}
	if f := cfg.onLearn; f != nil {
		lc.OnEvent = func(ev learn.Event) { f(LearnEvent(ev)) }
	}
	if sg, ok := g.(singleGate); ok {
		lc.Single = sg.l
	}
	l, err := learn.New(lc)
	if err != nil {
		return nil, err
	}
	if err := applyCeiling(cfg.ceiling, g); err != nil {
		return nil, err
	}
	return l, nil
}

// applyCeiling adds the ceiling to the Transport's limiter, which every
// request waits on, so that it holds across buckets from the first request
// on (for a keyed limiter: per key).
func applyCeiling(ceiling []rxthrottle.Limit, g gate) error {
	if len(ceiling) == 0 {
		return nil
	}
	var lim interface {
		SetLimit(rxthrottle.Limit, ...rxthrottle.Limit) error
		Limits() []rxthrottle.Limit
	}
	switch g := g.(type) {
	case singleGate:
		lim = g.l
	case keyedGate:
		lim = g.kl
	default:
		return nil
	}
	limits := lim.Limits()
	for _, c := range ceiling {
		if !slices.Contains(limits, c) {
			limits = append(limits, c)
		}
	}
	if err := lim.SetLimit(limits[0], limits[1:]...); err != nil {
		return fmt.Errorf("httpthrottle: LearnCeiling: %w", err)
	}
	return nil
}

// learnGate is the Transport's gate with a learner in front: one request
// at a time until the first answer, and the learned schedules taken
// before the Transport's limiter.
type learnGate struct {
	inner gate
	l     *learn.Learner
}

func (g learnGate) key(req *http.Request) (string, error) { return g.inner.key(req) }

func (g learnGate) wait(ctx context.Context, key string) error {
	return errors.New("httpthrottle: a learning Transport holds its tokens") // newLearner refuses departure renewal
}

func (g learnGate) acquire(ctx context.Context, key string) (rxthrottle.Token, error) {
	return g.l.Acquire(ctx, key, func(ctx context.Context) (rxthrottle.Token, error) { return g.inner.acquire(ctx, key) })
}

func (g learnGate) pause(key string, until time.Time) {
	g.inner.pause(key, until)
	g.l.Pause(key, until)
}

// readHeaders reads resp's pushback and quota headers once, at now: the
// pauses they ask for (Retry-After only on a refusal, learn.Refused: on a
// redirect it means something else) and, for a learner, the quotas
// announced, its request having gone out at sent. Unusable headers are
// reported.
func (t *Transport) readHeaders(resp *http.Response, key string, now, sent time.Time) []learn.Pause {
	var pauses []learn.Pause
	refused := learn.Refused(resp.StatusCode, problemType(resp))
	rd := learn.Read(resp.Header, now)
	rd.Refused, rd.Sent = refused, sent
	if refused {
		t.reportProblem(rd.RetryAfterProblem)
		if rd.RetryAfter != nil {
			pauses = append(pauses, *rd.RetryAfter)
		}
	}
	for _, prob := range rd.Problems {
		t.reportProblem(prob)
	}
	pauses = append(pauses, rd.Pauses...)
	if t.learn != nil {
		pauses = t.learn.Observe(resp, key, now, rd, pauses)
	}
	return pauses
}

// problemType returns the problem type of resp's problem+json body, ""
// for none: the body's start is read (at most learn.MaxProblemBody) and
// put back in front of the rest, so the caller reads the body whole.
func problemType(resp *http.Response) string {
	if resp.Body == nil || resp.Body == http.NoBody || !learn.IsProblem(resp) {
		return ""
	}
	start, err := io.ReadAll(io.LimitReader(resp.Body, learn.MaxProblemBody))
	resp.Body = &peekedBody{Reader: io.MultiReader(bytes.NewReader(start), &errReader{err}, resp.Body), body: resp.Body}
	return learn.ProblemType(start)
}

// peekedBody is a response body whose start was read: it reads the start,
// then the rest, and closes the original.
type peekedBody struct {
	io.Reader
	body io.ReadCloser
}

func (b *peekedBody) Close() error { return b.body.Close() }

// errReader returns err, if any, where the peeked start ended: a body that
// failed while its start was read fails there for the caller too.
type errReader struct{ err error }

func (r *errReader) Read([]byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	return 0, io.EOF
}

func (t *Transport) reportProblem(p *learn.Problem) {
	if p != nil {
		t.report(problemError(p))
	}
}

// problemError is the HeaderError of a header the Transport ignores.
func problemError(p *learn.Problem) *HeaderError {
	return &HeaderError{Header: p.Header, Value: p.Value, Reason: p.Reason, Err: ErrMalformedHeader}
}

// mayRetry reports whether RoundTrip may make attempt n+1 of a refused
// request: WithMaxAttempts allows it (DefaultMaxAttempts by default), or,
// for a learning Transport given LearnMaxAttempts, that does.
func (t *Transport) mayRetry(n int) bool {
	if t.learn != nil && t.cfg.learn.attemptsSet {
		return n < t.cfg.learn.maxAttempts
	}
	return t.cfg.policy.Retry(n)
}

// retryable reports whether RoundTrip may try resp's request again
// (WithMaxAttempts): a 429, or for a learning Transport any refusal it
// learns from (a 503 too: nginx's limit_req refuses so), unless the server
// says x-should-retry: false.
func (t *Transport) retryable(resp *http.Response) bool {
	switch {
	case !learn.ShouldRetry(resp.Header):
		return false
	case resp.StatusCode == http.StatusTooManyRequests:
		return true
	}
	return t.learn != nil && resp.StatusCode == http.StatusServiceUnavailable
}
