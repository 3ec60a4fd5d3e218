package marble

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A subscription marble without ^ means "never subscribed", as in rxjs,
// alone or among others.
func TestSubscriptionMarbleWithoutCaretIsNoSubscription(t *testing.T) {
	Run(t, func(s *Scheduler) {
		never := s.Cold("a-b|", nil)
		s.ExpectSubscriptions(never).ToBe("----------")
		alsoNever := s.Hot("a-b|", nil)
		s.ExpectSubscriptions(alsoNever).ToBe("--!")
		none := s.Cold("a|", nil)
		s.ExpectSubscriptions(none).ToBe()

		once := s.Cold("a-b-c|", nil)
		s.ExpectObservable(once, "^--!").ToBe("a-b", nil)
		s.ExpectSubscriptions(once).ToBe("-----", "^--!", "   ")
	})
}

func TestSubscriptionMarbleWithoutCaretFailsWhenSubscribed(t *testing.T) {
	msgs := runFake(t, func(s *Scheduler) {
		src := s.Cold("a|", nil)
		s.ExpectObservable(src).ToBe("a|", nil)
		s.ExpectSubscriptions(src).ToBe("----------")
	})
	require.Len(t, msgs, 1)
	assert.Contains(t, msgs[0], "subscriptions differ\n  want: (no subscription)\n  got : ^!")
}
