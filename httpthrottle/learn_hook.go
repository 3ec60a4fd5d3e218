package httpthrottle

import (
	"context"
	"errors"
	"fmt"
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
	if tcfg.departure {
		return nil, errors.New("httpthrottle: WithLearnLimits needs held tokens: it cannot be used with WithDepartureRenewal")
	}
	lc := learn.Config{
		Ceiling: cfg.ceiling, MaxBuckets: cfg.maxBuckets, ProbeWindow: cfg.probeWindow,
		MaxPause: tcfg.maxPause, Clock: tcfg.clock,
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
// pauses they ask for (Retry-After only on 429 and 503: on a redirect it
// means something else) and, for a learner, the quotas announced. Unusable
// headers are reported.
func (t *Transport) readHeaders(resp *http.Response, key string, now time.Time) []learn.Pause {
	var pauses []learn.Pause
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		p, ok, prob := learn.RetryAfter(resp.Header, now)
		t.reportProblem(prob)
		if ok {
			pauses = append(pauses, p)
		}
	}
	rd := learn.Read(resp.Header, now)
	for _, prob := range rd.Problems {
		t.reportProblem(prob)
	}
	pauses = append(pauses, rd.Pauses...)
	if t.learn != nil {
		pauses = t.learn.Observe(resp, key, now, rd, pauses)
	}
	return pauses
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
