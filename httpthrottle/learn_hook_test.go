package httpthrottle

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle/httpthrottle/internal/learn"
)

func TestHeaderErrorMessage(t *testing.T) {
	_, _, prob := learn.RetryAfter(http.Header{"Retry-After": {"-5"}}, time.Now())
	require.NotNil(t, prob)
	herr := problemError(prob)
	assert.EqualError(t, herr, `httpthrottle: header Retry-After "-5": negative delay`)
	assert.ErrorIs(t, herr, ErrMalformedHeader)
}
