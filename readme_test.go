package rxthrottle_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/guard"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle/throttletest"
)

// The code of README.md's snippets, compiled and run. TestREADMESnippets
// checks that every snippet of README.md is code of a test file.

type request struct{ path string }

// readmeInTenLines is README's "In ten lines".
func readmeInTenLines(ctx context.Context, requests []request, call func(context.Context, request) error) error {
	bucket, err := rxthrottle.NewBucket(rxthrottle.Per(5, time.Second),
		rxthrottle.WithLimit(rxthrottle.Per(100, time.Minute))) // both at once
	if err != nil {
		return err // e.g. "rxthrottle: limit 0 per 1s: N must be at least 1: invalid limit"
	}
	for _, req := range requests {
		token, err := bucket.Acquire(ctx) // waits its turn for a token
		if err != nil {
			return err // ctx ended; this request took no token
		}
		err = call(ctx, req)
		token.Release() // the token renews one window after the call ended
		if err != nil {
			return err
		}
	}
	return nil
}

func TestREADMEInTenLines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var (
			at    []time.Duration
			paths []string
		)
		call := func(_ context.Context, req request) error {
			at = append(at, time.Since(start))
			paths = append(paths, req.path)
			time.Sleep(100 * time.Millisecond) // the call takes 100ms
			return nil
		}
		var requests []request
		for _, p := range strings.Split("a b c d e f g", " ") {
			requests = append(requests, request{path: "/" + p})
		}
		require.NoError(t, readmeInTenLines(context.Background(), requests, call))
		require.Equal(t, []string{"/a", "/b", "/c", "/d", "/e", "/f", "/g"}, paths)
		// 5 at once, one after the other; the 6th when the first token
		// renews, a window after the first call ended (100ms + 1s).
		ms := time.Millisecond
		require.Equal(t, []time.Duration{0, 100 * ms, 200 * ms, 300 * ms, 400 * ms, 1100 * ms, 1200 * ms}, at)
	})
}

// readmeOperators is README's rxgo snippet.
func readmeOperators(requests rxgo.Observable, callAPI rxgo.Func) (rxgo.Observable, rxgo.Observable) {
	out := rxthrottle.Throttle(rxthrottle.Per(5, time.Second))(requests)
	// callAPI(ctx, item) runs while the item's token is held; results keep the input order
	results := rxthrottle.ThrottleMap(rxthrottle.Per(5, time.Second), callAPI)(requests)
	return out, results
}

func TestREADMEOperators(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		double := func(_ context.Context, v any) (any, error) { return 2 * v.(int), nil }
		out, results := readmeOperators(rxgo.Just(1, 2, 3)(), double)
		got, err := out.ToSlice(0)
		require.NoError(t, err)
		require.Equal(t, []any{1, 2, 3}, got)
		got, err = results.ToSlice(0)
		require.NoError(t, err)
		require.Equal(t, []any{2, 4, 6}, got)
	})
}

// readmeCallAPI is README's ThrottleMap function with an HTTP call.
func readmeCallAPI() rxgo.Func {
	callAPI := func(ctx context.Context, item any) (any, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, item.(string), nil)
		if err != nil {
			return nil, rxthrottle.NotSent(err) // nothing was sent: the token comes back
		}
		// Held until the answer; a re-send of net/http takes a token of its
		// own, and a timeout holds it until the request can no longer arrive.
		resp, err := httpthrottle.ForCall(ctx).Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		return io.ReadAll(resp.Body)
	}
	return callAPI
}

func TestREADMECallAPI(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, r.URL.Path) }))
	defer srv.Close()
	bucket, err := rxthrottle.NewBucket(rxthrottle.Per(2, 100*time.Millisecond))
	require.NoError(t, err)
	got, err := rxthrottle.ThrottleMapWith(bucket, readmeCallAPI())(rxgo.Just(srv.URL+"/a", srv.URL+"/b", srv.URL+"/c")()).ToSlice(0)
	require.NoError(t, err)
	require.Equal(t, []any{[]byte("/a"), []byte("/b"), []byte("/c")}, got)
	require.Eventually(t, func() bool { return bucket.Stats().Released == 3 }, 10*time.Second, time.Millisecond,
		"each call's token released at its answer")
}

// readmeIterators is README's iterator snippet.
func readmeIterators(ctx context.Context, bucket *rxthrottle.Bucket, pages []string, fetch func(context.Context, string)) error {
	urls, done := rxthrottle.ThrottleSeq(ctx, bucket, slices.Values(pages))
	for url := range urls {
		fetch(ctx, url) // runs while url's token is held
	}
	if err := done(); err != nil {
		return err // ctx ended first, or the limiter failed
	}
	return nil
}

func TestREADMEIterators(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bucket, err := rxthrottle.NewBucket(rxthrottle.Per(2, time.Second))
		require.NoError(t, err)
		start := time.Now()
		var got []string
		var at []time.Duration
		fetch := func(_ context.Context, url string) {
			got = append(got, url)
			at = append(at, time.Since(start))
			time.Sleep(100 * time.Millisecond)
		}
		require.NoError(t, readmeIterators(t.Context(), bucket, []string{"/a", "/b", "/c"}, fetch))
		require.Equal(t, []string{"/a", "/b", "/c"}, got)
		// /c waits for /a's token, which renews a window after /a's body ended.
		require.Equal(t, []time.Duration{0, 100 * time.Millisecond, 1100 * time.Millisecond}, at)

		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		require.ErrorIs(t, readmeIterators(ctx, bucket, []string{"/d"}, fetch), context.Canceled)
	})
}

// readmeAttemptTimeout is README's client that times only the network.
func readmeAttemptTimeout(bucket *rxthrottle.Bucket) (*http.Client, error) {
	transport, err := httpthrottle.NewTransport(bucket,
		httpthrottle.WithAttemptTimeout(2*time.Second)) // from the token's grant to the response headers
	if err != nil {
		return nil, err
	}
	client := &http.Client{Transport: transport}
	return client, nil
}

// readmeLearning is README's client of an API that announces its quota.
func readmeLearning() (*http.Client, error) {
	transport, err := httpthrottle.NewLearningTransport() // one request first, then the announced quota
	if err != nil {
		return nil, err
	}
	client := &http.Client{Transport: transport}
	return client, nil
}

func TestREADMEHTTPClients(t *testing.T) {
	srv, err := throttletest.NewServer(rxthrottle.Per(5, time.Second), throttletest.WithDialect(throttletest.DialectIETF))
	require.NoError(t, err)
	defer srv.Close()
	bucket, err := rxthrottle.NewBucket(rxthrottle.Per(5, time.Second))
	require.NoError(t, err)
	timed, err := readmeAttemptTimeout(bucket)
	require.NoError(t, err)
	learning, err := readmeLearning()
	require.NoError(t, err)
	for _, client := range []*http.Client{timed, learning} {
		for range 3 {
			resp, err := client.Get(srv.URL)
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, resp.StatusCode)
			resp.Body.Close()
		}
	}
	require.Zero(t, srv.Stats().Refused)
}

// readmeServer is README's server snippet.
func readmeServer(mux *http.ServeMux, api http.Handler) error {
	g, err := guard.New(guard.Policy{Limit: rxthrottle.Per(30, time.Minute), Block: 5 * time.Minute})
	if err != nil {
		return err
	}
	middleware, err := httpthrottle.Middleware(g, httpthrottle.WithKey(httpthrottle.KeyByHeader("X-Api-Key")))
	if err != nil {
		return err
	}
	mux.Handle("/api/", middleware(api)) // 429 with Retry-After for a key over its quota
	return nil
}

func TestREADMEServer(t *testing.T) {
	mux := http.NewServeMux()
	api := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	require.NoError(t, readmeServer(mux, api))
	codes := map[int]int{}
	for range 31 {
		req := httptest.NewRequest(http.MethodGet, "/api/items", nil)
		req.Header.Set("X-Api-Key", "alice")
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		codes[rec.Code]++
	}
	require.Equal(t, map[int]int{200: 30, 429: 1}, codes)
}

// TestREADMEThrottletest is README's test against a strict server.
func TestREADMEThrottletest(t *testing.T) {
	bucket, err := rxthrottle.NewBucket(rxthrottle.Per(10, time.Second))
	require.NoError(t, err)

	srv, err := throttletest.NewServer(rxthrottle.Per(10, time.Second),
		throttletest.WithLatency(20*time.Millisecond)) // 0-20 ms on the way in
	require.NoError(t, err)
	defer srv.Close()
	tr, err := httpthrottle.NewTransport(bucket, httpthrottle.WithBase(srv.Client().Transport))
	require.NoError(t, err)
	client := &http.Client{Transport: tr}
	for range 10 {
		resp, err := client.Get(srv.URL)
		require.NoError(t, err)
		resp.Body.Close()
	}
	if st := srv.Stats(); st.Refused > 0 {
		t.Errorf("the server refused %d requests", st.Refused) // srv.Log() says when
	}
}

// TestREADMESnippets: every ```go block of README.md is code of a test
// file of the repository (this one for most), so that README shows code
// that compiles and runs. Comment lines of a snippet ("// handle err") and
// trailing comments are not compared; the test file may have lines between
// a snippet's lines (the error handling a snippet leaves out), at most as
// many as the snippet has, plus 8.
func TestREADMESnippets(t *testing.T) {
	snippets := readmeSnippets(t, "README.md")
	require.NotEmpty(t, snippets)
	var files [][]string
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files = append(files, codeLines(string(b)))
		return nil
	})
	require.NoError(t, err)
	for i, s := range snippets {
		lines := codeLines(s)
		found := false
		for _, f := range files {
			if containsInOrder(f, lines, 2*len(lines)+8) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("README.md's go snippet #%d is in no test file (put its code in readme_test.go):\n%s", i+1, s)
		}
	}
}

// readmeSnippets returns the ```go blocks of the Markdown file at path.
func readmeSnippets(t *testing.T, path string) []string {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var (
		blocks []string
		cur    *strings.Builder
	)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case cur == nil && strings.TrimSpace(line) == "```go":
			cur = new(strings.Builder)
		case cur != nil && strings.TrimSpace(line) == "```":
			blocks = append(blocks, cur.String())
			cur = nil
		case cur != nil:
			cur.WriteString(line + "\n")
		}
	}
	require.NoError(t, sc.Err())
	require.Nil(t, cur, "%s: a ```go block is not closed", path)
	return blocks
}

// codeLines returns the lines of Go source s that hold code, trimmed, with
// trailing comments cut.
func codeLines(s string) []string {
	var out []string
	for line := range strings.Lines(s) {
		line = strings.TrimSpace(line)
		if i := strings.LastIndex(line, " // "); i >= 0 && strings.Count(line[:i], `"`)%2 == 0 {
			line = strings.TrimSpace(line[:i])
		}
		if line == "" || strings.HasPrefix(line, "//") {
			continue
		}
		out = append(out, line)
	}
	return out
}

// containsInOrder reports whether want's lines appear in have in order,
// starting at a line equal to want[0] and within span lines of it.
func containsInOrder(have, want []string, span int) bool {
	for start := range have {
		if have[start] != want[0] {
			continue
		}
		j := 1
		for k := start + 1; k < len(have) && k <= start+span && j < len(want); k++ {
			if have[k] == want[j] {
				j++
			}
		}
		if j == len(want) {
			return true
		}
	}
	return false
}
