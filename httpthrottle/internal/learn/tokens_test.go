package learn

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/rxthrottle/rxthrottle"
)

// TestEarlierAnswerClosedLate: an attempt's answer closed after a retry of
// its request took budget tokens of its own (a late answer of an attempt
// kept open, drained by the Transport once the caller had gone on) gives
// back its own attempt's tokens, not the retry's: the retry's ReportTokens
// still finds its tokens held (issue 28: under load ReportTokens failed
// with "token already ended").
func TestEarlierAnswerClosedLate(t *testing.T) {
	b, err := rxthrottle.NewBucket(rxthrottle.Per(1000, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	ctx := WithTokenEstimate(context.Background(), 10)
	h := ctx.Value(tokenEstimateKey{}).(*tokenHold)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://x/", nil)
	answer := func() *http.Response {
		tok, err := b.AcquireN(ctx, 10)
		if err != nil {
			t.Fatal(err)
		}
		h.replace(tok)
		resp := &http.Response{Request: req, Body: io.NopCloser(strings.NewReader("ok"))}
		releaseOnClose(resp)
		return resp
	}
	first := answer()
	retry := answer()
	_ = first.Body.Close()
	if err := ReportTokens(retry, 12); err != nil {
		t.Fatalf("the retry's report after the first attempt's answer was closed: %v", err)
	}
	_ = retry.Body.Close()
}

// TestCancelledAttemptGivesBudgetBack: an attempt never sent (its token
// cancelled: the caller's context ended before it went, the retry budget
// was spent, the base wrote nothing) gives its budget tokens back. They
// were held until the hold timeout, a minute: the budget's other callers
// stalled behind them, and a request held that long found its tokens
// ended at ReportTokens (issue 28).
func TestCancelledAttemptGivesBudgetBack(t *testing.T) {
	l, err := New(Config{MaxBuckets: 1, ProbeWindow: time.Second, MaxPause: time.Minute, Clock: clock.New()})
	if err != nil {
		t.Fatal(err)
	}
	budget := rxthrottle.Per(10, time.Hour)
	l.mu.Lock()
	r := l.routeLocked("k")
	r.first.open.Store(true)
	tb := l.budgetLocked(r)
	l.mu.Unlock()
	if err := tb.b.SetLimit(budget); err != nil {
		t.Fatal(err)
	}
	tb.applied = budget
	ctx := WithTokenEstimate(context.Background(), 10)
	tok, err := l.Acquire(ctx, "k", func(context.Context) (rxthrottle.Token, error) { return rxthrottle.Token{}, nil })
	if err != nil {
		t.Fatal(err)
	}
	tok.Cancel()
	if ok, err := tb.b.AllowN(context.Background(), 10); err != nil || !ok {
		t.Fatalf("the budget after the attempt was cancelled: AllowN(10) = %v, %v; its tokens were not given back", ok, err)
	}
}
