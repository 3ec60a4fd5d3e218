package httpthrottle

import (
	"context"
	"net/http"

	"github.com/rxthrottle/rxthrottle/httpthrottle/internal/learn"
)

// WithTokenEstimate returns a copy of ctx for a request expected to use n
// tokens of a token budget the server announces (OpenAI's
// x-ratelimit-limit-tokens, -remaining-tokens, -reset-tokens). A learning
// Transport then also waits, before the request goes, for n tokens of that
// budget, learned like the request quota, and holds them until the caller
// reports what the request used with ReportTokens (or closes the response
// body, which counts the estimate as used). An estimate above the budget
// takes the whole budget. Use one such context per request; n < 1 asks
// for nothing. Until the first answer has announced the budget, requests
// wait for the request quota only.
func WithTokenEstimate(ctx context.Context, n int) context.Context {
	return learn.WithTokenEstimate(ctx, n)
}

// ReportTokens reports that the request resp answers used used tokens of
// the server's token budget: the held tokens renew one window from now, an
// overrun counting as a debt (rxthrottle.Token.ReleaseN). Call it before
// closing resp.Body. It returns nil when the request took no budget tokens
// (the budget was not yet known), and an error when the request had no
// WithTokenEstimate context, when used is negative, or when the tokens were
// already released (a second report, a closed body).
func ReportTokens(resp *http.Response, used int) error {
	return learn.ReportTokens(resp, used)
}
