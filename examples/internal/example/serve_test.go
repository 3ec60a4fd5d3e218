package example

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// hello answers with the request's path and remote address.
var hello = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	_, _ = io.WriteString(w, r.URL.Path+" from "+r.RemoteAddr)
})

// get GETs url+path through rt and returns the body.
func get(t *testing.T, rt http.RoundTripper, url, path string) string {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url+path, nil)
	require.NoError(t, err)
	resp, err := rt.RoundTrip(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(body)
}

func TestLoopback(t *testing.T) {
	rt, url, stop, err := Loopback("demo")(hello)
	require.NoError(t, err)
	defer stop()
	assert.True(t, strings.HasPrefix(url, "http://127.0.0.1:"), url)
	assert.True(t, strings.HasPrefix(get(t, rt, url, "/x"), "/x from 127.0.0.1:"))
}

func TestInMemory(t *testing.T) {
	rt, url, stop, err := InMemory("http://api.example")(hello)
	require.NoError(t, err)
	defer stop()
	assert.Equal(t, "http://api.example", url)
	assert.Equal(t, "/x from 192.0.2.1:1234", get(t, rt, url, "/x"))
}
