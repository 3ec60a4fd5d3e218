// Package tokenlink links package rxthrottle's Token to package
// limiterkit, which makes Tokens for limiters built outside rxthrottle.
// limiterkit imports rxthrottle, so rxthrottle cannot import it;
// rxthrottle sets NewToken in its init instead, and limiterkit calls it
// (as internal/optlink does for options). Nothing else should use this
// package.
package tokenlink

// Releaser ends the holds of a limiter's Tokens: limiterkit.TokenReleaser.
type Releaser interface {
	ReleaseToken(id uint64)
	CancelToken(id uint64)
}

// ReleaserN is a Releaser that records usage: limiterkit.TokenReleaserN.
type ReleaserN interface {
	Releaser
	ReleaseTokenN(id uint64, used int) error
}

// NewToken is func(Releaser, uint64) rxthrottle.Token: the Token for hold
// id of a Releaser.
var NewToken any
