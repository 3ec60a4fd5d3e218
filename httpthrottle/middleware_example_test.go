package httpthrottle_test

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/guard"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
)

// A server that allows each user 3 requests a minute and then shuts the user
// out for 5 minutes. The virtual clock and the log handler without
// timestamps only make the output deterministic; a server leaves them out.
func ExampleMiddleware() {
	mock := clock.NewMock()
	mock.Set(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey && len(groups) == 0 {
				return slog.Attr{}
			}
			return a
		},
	}))
	g, err := guard.New(guard.Policy{Limit: rxthrottle.Per(3, time.Minute), Block: 5 * time.Minute},
		guard.WithClock(mock), guard.WithLogger(logger))
	if err != nil {
		panic(err)
	}
	mw, err := httpthrottle.Middleware(g, httpthrottle.WithKey(httpthrottle.KeyByHeader("X-User-ID")))
	if err != nil {
		panic(err)
	}
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "hello\n")
	})
	srv := httptest.NewServer(mw(api))
	defer srv.Close()

	get := func() {
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		req.Header.Set("X-User-ID", "alice")
		resp, err := srv.Client().Do(req)
		if err != nil {
			panic(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		fmt.Printf("%d remaining=%s reset=%s retry-after=%q %s", resp.StatusCode,
			resp.Header.Get("RateLimit-Remaining"), resp.Header.Get("RateLimit-Reset"),
			resp.Header.Get("Retry-After"), body)
	}
	for range 4 {
		get()
		mock.Add(10 * time.Second)
	}
	mock.Add(4*time.Minute + 20*time.Second) // 5 min after the 1st request
	get()
	mock.Add(30 * time.Second) // 5 min after the 4th: the block ends
	get()
	// Output:
	// 200 remaining=2 reset=60 retry-after="" hello
	// 200 remaining=1 reset=50 retry-after="" hello
	// 200 remaining=0 reset=40 retry-after="" hello
	// level=WARN msg="key is over the usage limit" key=alice count=4 limit=3 window=1m0s until=2026-03-01T12:05:30.000Z
	// 429 remaining=0 reset=300 retry-after="300" {"message":"Too many requests: retry in 300 seconds."}
	// 429 remaining=0 reset=30 retry-after="30" {"message":"Too many requests: retry in 30 seconds."}
	// 200 remaining=2 reset=60 retry-after="" hello
}

// Keys can come from anything the request carries. The same KeyFunc serves
// a client (NewKeyedTransport) and a server (WithKey), where a key that
// cannot be found falls back to the client's IP address.
func ExampleKeyFunc() {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = "[::ffff:192.0.2.7]:54321"
	byUser := httpthrottle.KeyByHeader("X-User-ID")
	fmt.Println(httpthrottle.KeyByRemoteIP(r))
	fmt.Println(byUser(r))
	r.Header.Set("X-User-ID", "u-42")
	fmt.Println(byUser(r))
	// Output:
	// 192.0.2.7 <nil>
	//  httpthrottle: KeyByHeader("X-User-ID"): the request has no X-User-ID header
	// u-42 <nil>
}

// One quota per network: a /24 for IPv4 and a /48 for IPv6 (a site's
// allocation), so that neither a client nor its neighbours can rotate
// addresses to get more.
func ExampleKeyByRemotePrefix() {
	key, err := httpthrottle.KeyByRemotePrefix(24, 48)
	if err != nil {
		panic(err)
	}
	for _, remote := range []string{"192.0.2.7:1234", "[2001:db8:1:2::7]:443", "[2001:db8:1:ffff::1]:443"} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = remote
		fmt.Println(key(r))
	}
	// Output:
	// 192.0.2.0/24 <nil>
	// 2001:db8:1::/48 <nil>
	// 2001:db8:1::/48 <nil>
}
