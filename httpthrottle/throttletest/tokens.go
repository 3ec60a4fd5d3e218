package throttletest

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/rxthrottle/rxthrottle"
)

// TokensHeader is the request header that says how many tokens a request
// costs against the token budget of WithTokenBudget (1 when absent): the
// test's stand-in for what a model would use.
const TokensHeader = "Throttletest-Tokens"

type tokenBudgetOption struct{ l rxthrottle.Limit }

func (o tokenBudgetOption) apply(c *config) {
	if err := o.l.Validate(); err != nil {
		c.errs = append(c.errs, fmt.Errorf("throttletest: WithTokenBudget(%v): %w", o.l, err))
		return
	}
	c.tokens = o.l
}

// WithTokenBudget adds a budget of l.N tokens per fixed window of
// l.Window, as OpenAI's token limits: a request costs what its
// TokensHeader says, and is refused (429, Retry-After to the window's end)
// when its cost would take the window's total beyond l.N. DialectOpenAI
// announces it in x-ratelimit-limit-tokens, -remaining-tokens and
// -reset-tokens.
func WithTokenBudget(l rxthrottle.Limit) Option { return tokenBudgetOption{l} }

// tokenCost reads r's cost; a missing or bad header costs 1.
func tokenCost(r *http.Request) int {
	n, err := strconv.Atoi(r.Header.Get(TokensHeader))
	if err != nil || n < 0 {
		return 1
	}
	return n
}

// tokenWaitLocked rolls the budget's window to now and returns how long
// until cost tokens fit (0: now). It requires h.mu to be held.
func (h *Handler) tokenWaitLocked(now time.Time, cost int) time.Duration {
	if h.tokens.N == 0 {
		return 0
	}
	start := now.Truncate(h.tokens.Window)
	if !start.Equal(h.tokStart) {
		h.tokStart, h.tokUsed = start, 0
	}
	if h.tokUsed+cost > h.tokens.N {
		return start.Add(h.tokens.Window).Sub(now)
	}
	return 0
}

// announceTokens writes the budget's state in OpenAI's headers.
func (h *Handler) announceTokens(hdr http.Header, used int, start, now time.Time) {
	if h.tokens.N == 0 || h.dialect != DialectOpenAI {
		return
	}
	hdr.Set("X-Ratelimit-Limit-Tokens", strconv.Itoa(h.tokens.N))
	hdr.Set("X-Ratelimit-Remaining-Tokens", strconv.Itoa(max(0, h.tokens.N-used)))
	hdr.Set("X-Ratelimit-Reset-Tokens", start.Add(h.tokens.Window).Sub(now).Round(time.Millisecond).String())
}
