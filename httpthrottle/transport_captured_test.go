package httpthrottle_test

import (
	"bufio"
	"bytes"
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

// readCapturedAnswer reads internal/learn/testdata/name, less its leading
// comment lines (where it came from).
func readCapturedAnswer(t *testing.T, name string) *http.Response {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("internal", "learn", "testdata", name))
	require.NoError(t, err)
	for bytes.HasPrefix(b, []byte("#")) {
		_, b, _ = bytes.Cut(b, []byte("\n"))
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(b)), nil)
	require.NoError(t, err)
	return resp
}

// TestTransportCapturedRetryAfterMs: api.openai.com's real 429 of
// captured/openai-429-retry-after-ms.http says its wait twice,
// retry-after: 46 and retry-after-ms: 45175. A Transport, learning or
// not, pauses until the milliseconds' instant and sends its retry of the
// refused request then, not at the whole seconds' (which are the same
// wait rounded up), and the caller gets the retry's answer.
func TestTransportCapturedRetryAfterMs(t *testing.T) {
	captured := readCapturedAnswer(t, "captured/openai-429-retry-after-ms.http")
	const want = 45175 * time.Millisecond
	transports := []struct {
		name string
		make func(base http.RoundTripper, onPushback func(int, time.Time)) (*httpthrottle.Transport, error)
	}{
		{"Transport", func(base http.RoundTripper, on func(int, time.Time)) (*httpthrottle.Transport, error) {
			b, err := rxthrottle.NewBucket(rxthrottle.Per(100, time.Second))
			if err != nil {
				return nil, err
			}
			return httpthrottle.NewTransport(b, httpthrottle.WithBase(base), httpthrottle.OnPushback(on))
		}},
		{"NewLearningTransport", func(base http.RoundTripper, on func(int, time.Time)) (*httpthrottle.Transport, error) {
			return httpthrottle.NewLearningTransport(httpthrottle.WithBase(base), httpthrottle.OnPushback(on))
		}},
	}
	for _, tc := range transports {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				toPresent()
				start := time.Now()
				var rec recorder
				var pushbacks []time.Duration
				tr, err := tc.make(pushbackThenOK(&rec, captured.StatusCode, captured.Header.Clone),
					func(status int, until time.Time) {
						assert.Equal(t, http.StatusTooManyRequests, status)
						pushbacks = append(pushbacks, until.Sub(start))
					})
				require.NoError(t, err)
				resp, err := (&http.Client{Transport: tr}).Get("http://api.test/")
				require.NoError(t, err)
				assert.Equal(t, http.StatusOK, resp.StatusCode, "the retry's answer")
				resp.Body.Close()
				assert.Equal(t, []time.Duration{want}, pushbacks, "the pause, from retry-after-ms")
				assert.Equal(t, []time.Duration{0, want}, rec.offsets("", start), "the refused request, then its retry at the pause's end")
			})
		})
	}
}
