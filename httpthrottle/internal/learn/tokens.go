package learn

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/rxthrottle/rxthrottle"
)

// WithTokenEstimate is httpthrottle.WithTokenEstimate.
func WithTokenEstimate(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, tokenEstimateKey{}, &tokenHold{n: n})
}

// ReportTokens is httpthrottle.ReportTokens.
func ReportTokens(resp *http.Response, used int) error {
	if resp == nil || resp.Request == nil {
		return errors.New("httpthrottle: ReportTokens: a response with its request is required")
	}
	h, ok := resp.Request.Context().Value(tokenEstimateKey{}).(*tokenHold)
	if !ok {
		return errors.New("httpthrottle: ReportTokens: the request's context has no WithTokenEstimate")
	}
	tok, ok := h.current()
	if !ok {
		return nil
	}
	return tok.ReleaseN(used)
}

type tokenEstimateKey struct{}

// tokenHold is one request's claim on the token budget: its estimate and
// the budget tokens its latest attempt holds.
type tokenHold struct {
	n   int
	mu  sync.Mutex
	tok rxthrottle.Token
	has bool
}

// replace gives back the tokens of an earlier attempt (its answer was a
// refusal or never came: the server charged nothing) and keeps tok.
func (h *tokenHold) replace(tok rxthrottle.Token) {
	h.mu.Lock()
	old, had := h.tok, h.has
	h.tok, h.has = tok, true
	h.mu.Unlock()
	if had {
		old.Cancel()
	}
}

// cancelBudget gives back the budget tokens ctx's request took, when the
// request is not sent after all.
func cancelBudget(ctx context.Context) {
	if h, ok := ctx.Value(tokenEstimateKey{}).(*tokenHold); ok {
		if tok, has := h.current(); has {
			tok.Cancel()
		}
	}
}

func (h *tokenHold) current() (rxthrottle.Token, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.tok, h.has
}

// tokenBudget is a route's learned token budget: a Bucket of its own.
type tokenBudget struct {
	b       *rxthrottle.Bucket
	mu      sync.Mutex
	track   quotaTrack
	applied rxthrottle.Limit
}

// learn applies a tokens announcement a read at now; it returns the event
// to report, if the limit changed. The window is inferred as the request
// quota's is, and scaled to maxPause like it.
func (tb *tokenBudget) learn(a announcement, now time.Time, maxPause time.Duration, key string) (Event, bool) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.track.observe(a, now, false)
	w, why := tb.track.effectiveWindow()
	n := tb.track.limit
	if w <= 0 || n < 1 {
		return Event{}, false
	}
	if w > maxPause {
		n, w = max(1, int64(float64(n)*float64(maxPause)/float64(w))), maxPause
	}
	l := rxthrottle.Per(int(min(n, 1<<30)), w)
	if l == tb.applied {
		return Event{}, false
	}
	if err := tb.b.SetLimit(l); err != nil {
		return Event{Key: key, Source: a.header, Reason: "not applied: " + err.Error()}, true
	}
	tb.applied = l
	return Event{Key: key, Bucket: "tokens", Limits: []rxthrottle.Limit{l}, Source: a.header, Reason: "token budget; " + why}, true
}

// acquireBudget takes the budget tokens of ctx's estimate, if it has one
// and key's route knows a budget, and returns them (the zero Token if
// none).
func (l *Learner) acquireBudget(ctx context.Context, key string) (rxthrottle.Token, error) {
	h, ok := ctx.Value(tokenEstimateKey{}).(*tokenHold)
	if !ok || h.n < 1 {
		return rxthrottle.Token{}, nil
	}
	l.mu.Lock()
	var tb *tokenBudget
	if r, ok := l.routes[key]; ok {
		tb = r.tokens
	}
	l.mu.Unlock()
	if tb == nil {
		return rxthrottle.Token{}, nil
	}
	tb.mu.Lock()
	n := min(h.n, tb.applied.N)
	tb.mu.Unlock()
	tok, err := tb.b.AcquireN(ctx, n)
	if err != nil {
		return rxthrottle.Token{}, err
	}
	h.replace(tok)
	return tok, nil
}

// budgetLocked returns key's route's token budget, made if new. Requires
// l.mu.
func (l *Learner) budgetLocked(r *learnRoute) *tokenBudget {
	if r.tokens == nil {
		b, _ := rxthrottle.NewBucket(rxthrottle.Per(1<<30, time.Second), rxthrottle.WithClock(l.cfg.Clock))
		r.tokens = &tokenBudget{b: b}
	}
	return r.tokens
}

// seedBudget counts, in a budget just learned from resp, the estimate of
// resp's request, which went before the budget was known: until the first
// answer it went alone, so counting it from now covers its arrival's
// window. Best effort: AllowN takes nothing from a budget already full.
func seedBudget(tb *tokenBudget, resp *http.Response) {
	if resp.Request == nil {
		return
	}
	h, ok := resp.Request.Context().Value(tokenEstimateKey{}).(*tokenHold)
	if !ok || h.n < 1 {
		return
	}
	tb.mu.Lock()
	n := min(h.n, tb.applied.N)
	tb.mu.Unlock()
	if n > 0 {
		_, _ = tb.b.AllowN(context.Background(), n)
	}
}

// releaseOnClose makes closing resp's body release the request's budget
// tokens as estimated, if ReportTokens has not reported them first.
func releaseOnClose(resp *http.Response) {
	if resp.Request == nil || resp.Body == nil {
		return
	}
	h, ok := resp.Request.Context().Value(tokenEstimateKey{}).(*tokenHold)
	if !ok {
		return
	}
	if tok, has := h.current(); has {
		resp.Body = &budgetBody{ReadCloser: resp.Body, tok: tok}
	}
}

// budgetBody releases, at Close, the budget tokens of the attempt whose
// answer it is, taken when the answer was read: not whichever attempt's
// the request holds by then. An earlier attempt's answer can be closed
// after a retry took tokens of its own (a late answer of an attempt kept
// open, drained after the caller went on), and releasing the retry's
// would end them before its ReportTokens.
type budgetBody struct {
	io.ReadCloser
	tok rxthrottle.Token
}

func (b *budgetBody) Close() error {
	b.tok.Release()
	return b.ReadCloser.Close()
}
