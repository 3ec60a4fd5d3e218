package limiterkit_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/limiterkit"
)

// holds is a TokenReleaser that logs what its Tokens do.
type holds struct{ log []string }

func (h *holds) ReleaseToken(id uint64) { h.log = append(h.log, fmt.Sprint("release ", id)) }
func (h *holds) CancelToken(id uint64)  { h.log = append(h.log, fmt.Sprint("cancel ", id)) }

// usageHolds also records usage.
type usageHolds struct{ holds }

func (h *usageHolds) ReleaseTokenN(id uint64, used int) error {
	h.log = append(h.log, fmt.Sprint("release ", id, " used ", used))
	return nil
}

var (
	_ limiterkit.TokenReleaser  = (*holds)(nil)
	_ limiterkit.TokenReleaserN = (*usageHolds)(nil)
)

// A limiter built outside rxthrottle hands out Tokens whose Release,
// Cancel and ReleaseN reach its own TokenReleaser with its own hold id.
func ExampleNewToken() {
	h := &holds{}
	a, b := limiterkit.NewToken(h, 1), limiterkit.NewToken(h, 2)
	a.Release()
	b.Cancel()
	fmt.Println(h.log, a)
	// Output:
	// [release 1 cancel 2] rxthrottle.Token(#1)
}

// usageReleaser is a limiter's own hold book that also records usage.
type usageReleaser struct{}

func (usageReleaser) ReleaseToken(id uint64) { fmt.Println("release", id) }
func (usageReleaser) CancelToken(id uint64)  { fmt.Println("cancel", id) }
func (usageReleaser) ReleaseTokenN(id uint64, used int) error {
	fmt.Println("release", id, "having used", used)
	return nil
}

// If the releaser also has ReleaseTokenN, Token.ReleaseN reaches it.
func ExampleTokenReleaserN() {
	var r limiterkit.TokenReleaserN = usageReleaser{}
	tok := limiterkit.NewToken(r, 7)
	fmt.Println(tok.ReleaseN(3))
	// Output:
	// release 7 having used 3
	// <nil>
}

func TestNewToken(t *testing.T) {
	h := &usageHolds{}
	tok := limiterkit.NewToken(h, 7)
	require.NoError(t, tok.ReleaseN(3))
	assert.Equal(t, []string{"release 7 used 3"}, h.log, "ReleaseN finds ReleaseTokenN")

	plain := &holds{}
	err := limiterkit.NewToken(plain, 8).ReleaseN(3)
	assert.ErrorContains(t, err, "usage not recorded")
	assert.Equal(t, []string{"release 8"}, plain.log, "without ReleaseTokenN, ReleaseN releases")

	zero := limiterkit.NewToken(nil, 9)
	assert.Equal(t, rxthrottle.Token{}, zero, "a nil TokenReleaser makes the zero Token")
	zero.Release()
	zero.Cancel()
	assert.NoError(t, zero.ReleaseN(1))
	assert.False(t, errors.Is(err, rxthrottle.ErrTokenEnded))
}
