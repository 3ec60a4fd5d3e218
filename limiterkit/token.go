package limiterkit

import (
	"github.com/rxthrottle/rxthrottle"
)

// TokenReleaser is what a limiter gives NewToken to make the Tokens of its
// Acquire: it ends each hold, known by an id of the limiter's own.
type TokenReleaser interface {
	// ReleaseToken records the completion of hold id now; a hold already
	// ended (released, cancelled or timed out) is left alone.
	ReleaseToken(id uint64)
	// CancelToken gives hold id back unused, as if its caller had
	// cancelled before departing; a hold already ended is left alone.
	CancelToken(id uint64)
}

// TokenReleaserN is a TokenReleaser whose holds can also end with the
// number of tokens the work turned out to use (rxthrottle.Token.ReleaseN).
// Implement it to support ReleaseN; NewToken takes a plain TokenReleaser,
// and Token.ReleaseN finds this method if it is there (without it,
// ReleaseN releases the token and says the usage was not recorded).
type TokenReleaserN interface {
	TokenReleaser
	// ReleaseTokenN records the completion of hold id now, as having used
	// used tokens (SPEC.md, "Cost known after the call"); used is at least
	// 0. A hold already ended is left alone and the error wraps
	// rxthrottle.ErrTokenEnded.
	ReleaseTokenN(id uint64, used int) error
}

// NewToken returns the rxthrottle.Token for hold id of r: what a limiter
// built outside rxthrottle returns from Acquire. The Token's Release,
// Cancel and ReleaseN call r's methods with id. A nil r makes the zero
// Token, a no-op.
func NewToken(r TokenReleaser, id uint64) rxthrottle.Token {
	if r == nil {
		return rxthrottle.Token{}
	}
	return rxthrottle.Kit().NewToken(r, id)
}
