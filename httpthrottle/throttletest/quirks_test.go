package throttletest_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle/throttletest"
)

// quirkAnswers sends a request to a Handler of 2 per second (a sliding
// log) with opts at each offset of ats from start, and returns the
// answers.
func quirkAnswers(t *testing.T, ats []time.Duration, opts ...throttletest.Option) []*httptest.ResponseRecorder {
	t.Helper()
	mock := clock.NewMock()
	h, err := throttletest.NewHandler(rxthrottle.Per(2, time.Second), append([]throttletest.Option{throttletest.WithClock(mock)}, opts...)...)
	require.NoError(t, err)
	var out []*httptest.ResponseRecorder
	for _, at := range ats {
		mock.Set(start.Add(at))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
		out = append(out, rec)
	}
	return out
}

func TestQuirkResets(t *testing.T) {
	// The oldest arrival of the window, at 300 ms, leaves it at 1.3 s.
	at := []time.Duration{300 * time.Millisecond}
	reset := func(opts ...throttletest.Option) string {
		return quirkAnswers(t, at, append(opts, throttletest.WithDialect(throttletest.DialectGitHub))...)[0].Header().Get("X-RateLimit-Reset")
	}
	unix := start.Add(1300 * time.Millisecond)
	assert.Equal(t, strconv.FormatInt(unix.Unix()+1, 10), reset(), "rounded up by default")
	assert.Equal(t, strconv.FormatInt(unix.Unix(), 10), reset(throttletest.WithQuirks(throttletest.QuirkTruncatedReset)))
	assert.Equal(t, strconv.FormatInt(unix.UnixMilli(), 10), reset(throttletest.WithQuirks(throttletest.QuirkMillisReset)))
}

func TestQuirkRefuse503(t *testing.T) {
	recs := quirkAnswers(t, []time.Duration{0, 0, 0}, throttletest.WithQuirks(throttletest.QuirkRefuse503))
	assert.Equal(t, http.StatusOK, recs[1].Code)
	assert.Equal(t, http.StatusServiceUnavailable, recs[2].Code)
	assert.Empty(t, recs[2].Header().Get("Retry-After"))
	assert.Empty(t, recs[2].Header().Get(throttletest.ExactRetryAfterHeader))
}

func TestQuirkFlipDialect(t *testing.T) {
	recs := quirkAnswers(t, []time.Duration{0, 10 * time.Millisecond, 2 * time.Second, 3 * time.Second, 4 * time.Second, 5 * time.Second},
		throttletest.WithQuirks(throttletest.QuirkFlipDialect))
	for i, name := range []string{"RateLimit-Policy", "RateLimit-Limit", "X-RateLimit-Used", "X-RateLimit-Reset-After", "X-Ratelimit-Limit-Requests", "RateLimit-Policy"} {
		assert.NotEmpty(t, recs[i].Header().Get(name), "answer %d: %s", i, name)
	}
	assert.Empty(t, recs[1].Header().Get("RateLimit-Policy"), "one dialect an answer")
}

func TestAnnouncedLimit(t *testing.T) {
	recs := quirkAnswers(t, []time.Duration{0, 0, 0}, throttletest.WithDialect(throttletest.DialectGitHub), throttletest.WithAnnouncedLimit(1000))
	assert.Equal(t, "1000", recs[0].Header().Get("X-RateLimit-Limit"))
	assert.Equal(t, "999", recs[0].Header().Get("X-RateLimit-Remaining"))
	assert.Equal(t, http.StatusTooManyRequests, recs[2].Code, "the first limit is still enforced")
	assert.Equal(t, "998", recs[2].Header().Get("X-RateLimit-Remaining"), "a refusal that says much is left")
}

func TestQuirkOptionErrors(t *testing.T) {
	_, err := throttletest.NewHandler(rxthrottle.Per(2, time.Second), throttletest.WithQuirks(throttletest.Quirk(99)))
	assert.ErrorContains(t, err, "unknown quirk")
	_, err = throttletest.NewHandler(rxthrottle.Per(2, time.Second), throttletest.WithAnnouncedLimit(0))
	assert.ErrorContains(t, err, "at least 1")
	assert.Equal(t, "refuse-503", throttletest.QuirkRefuse503.String())
}
