package learn

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
)

// TestClassifyRefusals: what a refusal says of the rate, from its headers.
func TestClassifyRefusals(t *testing.T) {
	cases := []struct {
		name    string
		refused bool
		h       http.Header
		want    refusalKind
	}{
		{"accepted", false, http.Header{"X-Ratelimit-Scope": {"shared"}}, notRefused},
		{"bare 429", true, nil, refusedRate},
		{"Discord user scope", true, http.Header{"X-Ratelimit-Scope": {"user"}}, refusedRate},
		{"Discord shared scope", true, http.Header{"X-Ratelimit-Scope": {" Shared "}}, refusedShared},
		{"Discord global scope", true, http.Header{"X-Ratelimit-Scope": {"global"}}, refusedGlobal},
		{"Discord global flag", true, http.Header{"X-Ratelimit-Global": {"true"}}, refusedGlobal},
		{"global flag false", true, http.Header{"X-Ratelimit-Global": {"false"}}, refusedRate},
		{"x-should-retry false", true, http.Header{"X-Should-Retry": {"false"}}, refusedFinal},
		{"x-should-retry false wins over scope", true, http.Header{"X-Should-Retry": {"false"}, "X-Ratelimit-Scope": {"shared"}}, refusedFinal},
		{"x-should-retry true", true, http.Header{"X-Should-Retry": {"true"}}, refusedRate},
		{"Anthropic unified rejected", true, http.Header{"Anthropic-Ratelimit-Unified-Status": {"rejected"}}, refusedUsage},
		{"Anthropic unified allowed", true, http.Header{"Anthropic-Ratelimit-Unified-Status": {"allowed"}}, refusedRate},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, classify(c.refused, c.h), c.name)
	}
}

// TestGlobalRefusalPausesEverything: Discord's global 429 (its documented
// example's headers, testdata/documented/discord-global.http, and a real
// one, captured/discord-global.http: Retry-After 1 where its body says
// 0.661) on one key pauses every schedule of a keyed learner until its
// Retry-After: a key answered before and a key first seen during the
// pause wait for its end; a shared-scope 429 pauses no other key.
// Without pauseAll another key's request went at once.
func TestGlobalRefusalPausesEverything(t *testing.T) {
	for _, c := range []struct {
		file string
		hold bool
	}{{"documented/discord-global.http", true}, {"captured/discord-global.http", true}, {"documented/discord-shared.http", false}} {
		t.Run(c.file, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l, err := New(Config{MaxBuckets: 8, ProbeWindow: time.Second, MaxPause: 10 * time.Minute, Clock: clock.New()})
				require.NoError(t, err)
				inner, err := rxthrottle.NewBucket(rxthrottle.Per(1000, time.Second))
				require.NoError(t, err)
				ctx := context.Background()
				take := func(key string) time.Time {
					tok, err := l.Acquire(ctx, key, func(ctx context.Context) (rxthrottle.Token, error) { return inner.Acquire(ctx) })
					require.NoError(t, err)
					tok.Release()
					return time.Now()
				}
				ok := &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody}
				take("before")
				l.Observe(ok, "before", time.Now(), Read(ok.Header, time.Now()), nil)
				take("refused")
				resp, _ := readCaptured(t, c.file)
				rd := Read(resp.Header, time.Now())
				rd.Refused = Refused(resp.StatusCode, "")
				require.NotNil(t, rd.RetryAfter)
				start := time.Now()
				end := rd.RetryAfter.Until
				l.Observe(resp, "refused", start, rd, nil)
				for _, key := range []string{"new", "before"} {
					at := take(key)
					if c.hold {
						assert.False(t, at.Before(end), "%s went %v after the global refusal, its Retry-After is %v", key, at.Sub(start), end.Sub(start))
					} else {
						// The probe's own pace only, not the Retry-After.
						assert.Less(t, at.Sub(start), 2*time.Second, "%s", key)
					}
				}
			})
		})
	}
}

// TestClassifyCaptured: what the captured and documented refusals say of
// the rate.
func TestClassifyCaptured(t *testing.T) {
	for file, want := range map[string]refusalKind{
		"captured/discord-refused.http":        refusedRate,   // no scope in the paste: the bucket's own
		"captured/anthropic-429.http":          refusedUsage,  // the weekly Opus budget rejected, x-should-retry: true
		"captured/anthropic-401.http":          notRefused,    // x-should-retry: false on no refusal
		"captured/nginx-503.http":              refusedRate,   // no header at all
		"captured/httprate-503.http":           refusedRate,   // a 503 with Retry-After
		"documented/retry-after-ms.http":       refusedFinal,  // x-should-retry: false on a 429
		"captured/discord-shared.http":         refusedShared, // discord-api-docs#6109's paste
		"documented/discord-shared.http":       refusedShared,
		"documented/discord-global.http":       refusedGlobal,
		"captured/discord-global.http":         refusedGlobal, // switchupcb/disgo#14's dump
		"captured/anthropic-429-requests.http": refusedRate,   // a bucket of requests spent, x-should-retry: true
		// A 429 of the token budget, refused for the request's size with tokens
		// left: no header says which budget refused, so it reads as the rate.
		"captured/openai-429-retry-after-ms.http": refusedRate,
	} {
		resp, _ := readCaptured(t, file)
		assert.Equal(t, want, classify(Refused(resp.StatusCode, ""), resp.Header), file)
	}
}
