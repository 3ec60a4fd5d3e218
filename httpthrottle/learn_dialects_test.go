package httpthrottle_test

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
)

// TestLearnCapturedDialects: a learning Transport answered with each
// real response (internal/learn/testdata/captured), at the instant of its
// Date on the bubble's clock (capturedAsOf for a paste without one), keeps
// the quota it announces (the window Kong's, tollbooth's and the IETF
// policies' headers name, or the time to the reset until it moves on), on
// the server's bucket where it names one.
func TestLearnCapturedDialects(t *testing.T) {
	cases := []struct {
		file   string
		limits []rxthrottle.Limit
	}{
		{"captured/x.http", []rxthrottle.Limit{rxthrottle.Per(300, 15*time.Minute)}},
		{"captured/tollbooth-refused.http", []rxthrottle.Limit{rxthrottle.Per(10, time.Second)}},
		// sethvargo/go-limiter: X-RateLimit-Reset an HTTP-date in UTC.
		{"captured/golimiter-accepted.http", []rxthrottle.Limit{rxthrottle.Per(10, time.Second)}},
		// Kong: RateLimit-Reset's 10 s to the end of the clock's minute
		// stands in for the unnamed quota's window until it moves on.
		{"captured/kong-accepted.http", []rxthrottle.Limit{rxthrottle.Per(5, 10*time.Second), rxthrottle.Per(5, time.Minute)}},
		{"captured/express-draft6-accepted.http", []rxthrottle.Limit{rxthrottle.Per(5, time.Minute)}},
		{"captured/express-draft7-accepted.http", []rxthrottle.Limit{rxthrottle.Per(5, time.Minute)}},
		{"captured/express-draft8-accepted.http", []rxthrottle.Limit{rxthrottle.Per(5, time.Minute)}},
		{"captured/express-draft8-two-accepted.http", []rxthrottle.Limit{rxthrottle.Per(20, time.Hour), rxthrottle.Per(5, time.Minute)}},
		{"captured/huggingface-accepted.http", []rxthrottle.Limit{rxthrottle.Per(500, 5*time.Minute)}},
		// Discord's bucket of 50000 per 28.5 h, scaled to the maximum pause.
		{"captured/discord-accepted.http", []rxthrottle.Limit{rxthrottle.Per(1752, time.Hour)}},
		{"captured/reddit.http", []rxthrottle.Limit{rxthrottle.Per(1000, 375*time.Second)}},
		// Anthropic's full buckets reset a second in the past: the
		// window is the minute its documentation says (2 per 1 s, the
		// 429 learner's slow start, before).
		{"captured/anthropic.http", []rxthrottle.Limit{rxthrottle.Per(4000, time.Minute)}},
		// OpenAI's full bucket resets in 2 ms: LearnProbeWindow stands in,
		// 60 times its per-minute rate (left as found: evidence before
		// trust catches the first refusal inside the quota).
		{"captured/openai.http", []rxthrottle.Limit{rxthrottle.Per(30000, time.Second)}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			captured := readCapturedAnswer(t, c.file)
			date, err := http.ParseTime(captured.Header.Get("Date"))
			if at, ok := capturedAsOf[c.file]; ok {
				date, err = at, nil
			} else if err != nil {
				date, err = time.Parse(time.RFC1123, captured.Header.Get("Date")) // X's is in UTC
			}
			require.NoError(t, err)
			synctest.Test(t, func(t *testing.T) {
				// The bubble's clock stands where the response was captured.
				time.Sleep(time.Until(date))
				base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
					return respond(req, captured.StatusCode, captured.Header.Clone()), nil
				})
				var learned []rxthrottle.Limit // the route's own schedule's (or the server's bucket's), not a token budget's
				tr, err := httpthrottle.NewLearningTransport(httpthrottle.WithBase(base), httpthrottle.OnHeaderError(nil),
					httpthrottle.WithMaxPause(time.Hour), httpthrottle.WithLearnLimits(httpthrottle.OnLearn(func(ev httpthrottle.LearnEvent) {
						if ev.Bucket == capturedBuckets[c.file] && ev.Limits != nil {
							learned = ev.Limits
						}
					})))
				require.NoError(t, err)
				req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://api.example/", nil)
				resp, err := tr.RoundTrip(req)
				require.NoError(t, err)
				_ = resp.Body.Close()
				// A refusal (tollbooth's, Anthropic's 429) also spreads
				// the requests evenly: a limit of 1 per gap follows.
				require.GreaterOrEqual(t, len(learned), len(c.limits), "%v", tr.LearnStats().Last)
				assert.Equal(t, c.limits, learned[:len(c.limits)], "%v", tr.LearnStats().Last)
			})
		})
	}
}

// capturedBuckets names the server's bucket a captured answer's quota is
// learned for: Discord's id, the IETF partition key; the route's own
// schedule ("") for the others.
var capturedBuckets = map[string]string{
	"captured/discord-accepted.http":            "d1240eeffb4c549bd62b579ece0ffd01",
	"captured/express-draft8-accepted.http":     "MTJjYTE3YjQ5YWYy",
	"captured/express-draft8-two-accepted.http": "MTJjYTE3YjQ5YWYy",
}

// capturedAsOf is when each captured paste without a Date was answered:
// Discord's at X-RateLimit-Reset less -Reset-After; Hugging Face's fields
// are relative, so any instant.
var capturedAsOf = map[string]time.Time{
	"captured/discord-accepted.http":     time.UnixMilli(1668617849925),
	"captured/discord-refused.http":      time.UnixMilli(1668618050167),
	"captured/huggingface-accepted.http": time.Date(2025, 11, 18, 12, 0, 0, 0, time.UTC),
	"captured/huggingface-refused.http":  time.Date(2025, 11, 18, 12, 0, 0, 0, time.UTC),
}
