package httpthrottle_test

import (
	"bufio"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
)

// TestLearnCapturedDialects: a learning Transport answered with each
// captured response (internal/learn/testdata/captured), its resets moved
// to the bubble's clock, keeps the quota it announces (the window Kong's
// and tollbooth's headers name, or the time to the reset until it moves
// on).
func TestLearnCapturedDialects(t *testing.T) {
	cases := []struct {
		file   string
		limits []rxthrottle.Limit
	}{
		{"x.http", []rxthrottle.Limit{rxthrottle.Per(900, 15*time.Minute)}},
		{"tollbooth.http", []rxthrottle.Limit{rxthrottle.Per(10, time.Second)}},
		{"kong.http", []rxthrottle.Limit{rxthrottle.Per(5, time.Second), rxthrottle.Per(10, time.Minute)}},
		{"reddit.http", []rxthrottle.Limit{rxthrottle.Per(600, 412*time.Second)}},
		{"anthropic.http", []rxthrottle.Limit{rxthrottle.Per(50, 12*time.Second)}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			f, err := os.Open(filepath.Join("internal", "learn", "testdata", "captured", c.file))
			require.NoError(t, err)
			defer f.Close()
			captured, err := http.ReadResponse(bufio.NewReader(f), nil)
			require.NoError(t, err)
			date, err := http.ParseTime(captured.Header.Get("Date"))
			require.NoError(t, err)
			synctest.Test(t, func(t *testing.T) {
				// The bubble's clock stands where the response was captured.
				time.Sleep(time.Until(date))
				base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
					return respond(req, captured.StatusCode, captured.Header.Clone()), nil
				})
				var learned []rxthrottle.Limit // the route's own schedule's, not a token budget's
				tr, err := httpthrottle.NewLearningTransport(httpthrottle.WithBase(base), httpthrottle.OnHeaderError(nil),
					httpthrottle.WithMaxPause(time.Hour), httpthrottle.WithLearnLimits(httpthrottle.OnLearn(func(ev httpthrottle.LearnEvent) {
						if ev.Bucket == "" && ev.Limits != nil {
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
