package learn

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

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
