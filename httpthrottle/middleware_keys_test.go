package httpthrottle_test

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/guard"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
)

// Issue 17, item 5: the server's default key is an IPv4 address or an
// IPv6 /64, so that a client cannot escape its quota by rotating through
// the addresses of its network; KeyByRemotePrefix sets other lengths.

func TestKeyByRemoteIP(t *testing.T) {
	tests := []struct{ remote, want string }{
		{"192.0.2.7:1234", "192.0.2.7"},
		{"[2001:DB8::0:1]:443", "2001:db8::/64"},
		{"[2001:db8:1:2:aaaa:bbbb:cccc:dddd]:443", "2001:db8:1:2::/64"},
		{"[::ffff:192.0.2.7]:80", "192.0.2.7"},
		{"[fe80::1%eth0]:80", "fe80::/64"},
		{"192.0.2.7", "192.0.2.7"},
		{"2001:db8::1", "2001:db8::/64"}, // no port
		{"@", "@"},                       // a unix socket peer
	}
	for i, tt := range tests {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = tt.remote
		got, err := httpthrottle.KeyByRemoteIP(r)
		require.NoError(t, err, "step %d", i)
		assert.Equal(t, tt.want, got, "step %d: KeyByRemoteIP(%q)", i, tt.remote)
	}
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = ""
	_, err := httpthrottle.KeyByRemoteIP(r)
	assert.EqualError(t, err, "httpthrottle: KeyByRemoteIP: the request has no remote address")
}

func TestKeyByRemotePrefix(t *testing.T) {
	tests := []struct {
		v4, v6       int
		remote, want string
	}{
		{24, 48, "192.0.2.7:1", "192.0.2.0/24"},
		{24, 48, "[2001:db8:1:2::7]:1", "2001:db8:1::/48"},
		{32, 128, "[2001:db8:1:2::7]:1", "2001:db8:1:2::7"},
		{32, 128, "192.0.2.7:1", "192.0.2.7"},
		{16, 56, "[::ffff:10.1.2.3]:1", "10.1.0.0/16"},
		{0, 0, "[2001:db8::1]:1", "::/0"},
		{0, 0, "192.0.2.7:1", "0.0.0.0/0"},
		{32, 64, "[fe80::1%eth0]:1", "fe80::/64"},
	}
	for i, tt := range tests {
		key, err := httpthrottle.KeyByRemotePrefix(tt.v4, tt.v6)
		require.NoError(t, err, "step %d", i)
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = tt.remote
		got, err := key(r)
		require.NoError(t, err, "step %d", i)
		assert.Equal(t, tt.want, got, "step %d: KeyByRemotePrefix(%d, %d)(%q)", i, tt.v4, tt.v6, tt.remote)
	}
	for _, bad := range [][2]int{{-1, 64}, {33, 64}, {32, -1}, {32, 129}} {
		key, err := httpthrottle.KeyByRemotePrefix(bad[0], bad[1])
		assert.Nil(t, key)
		assert.EqualError(t, err, fmt.Sprintf("httpthrottle: KeyByRemotePrefix(%d, %d): the lengths must be 0 to 32 for IPv4 and 0 to 128 for IPv6", bad[0], bad[1]))
	}
}

// TestMiddlewareRotatingAddressesWithinA64: the run. One client
// with a /64 sends 300 requests, each from a random address of its
// network, against a quota of 30 per minute: 30 go through, 270 are
// refused. A client of another /64 keeps its own quota.
func TestMiddlewareRotatingAddressesWithinA64(t *testing.T) {
	g, err := guard.New(guard.Policy{Limit: rxthrottle.Per(30, time.Minute), Block: time.Minute},
		guard.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	mw, err := httpthrottle.Middleware(g)
	require.NoError(t, err)
	h := mw(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	prefix := netip.MustParsePrefix("2001:db8:1:2::/64")
	random := func(p netip.Prefix) string {
		a := p.Addr().As16()
		for i := 8; i < 16; i++ {
			a[i] = byte(rand.N(256))
		}
		return netip.AddrPortFrom(netip.AddrFrom16(a), 443).String()
	}
	codes := map[int]int{}
	for range 300 {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = random(prefix)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		codes[rec.Code]++
	}
	assert.Equal(t, map[int]int{200: 30, 429: 270}, codes)

	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = random(netip.MustParsePrefix("2001:db8:1:3::/64"))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	assert.Equal(t, http.StatusOK, rec.Code, "the next /64 is another client")
	assert.Equal(t, 2, g.Stats().KeysLive, "one key per /64")
}

func TestMiddlewareFullStoreRefusesNewKeys(t *testing.T) {
	// A guard whose store holds one key: a second client is refused with
	// 429 and told when there will be room, not answered 503 and not let
	// through unguarded.
	g, err := guard.New(guard.Policy{Limit: rxthrottle.Per(30, time.Minute)}, guard.WithMaxKeys(1),
		guard.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	mw, err := httpthrottle.Middleware(g)
	require.NoError(t, err)
	h := mw(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	serve := func(remote string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = remote
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		return rec
	}
	assert.Equal(t, http.StatusOK, serve("192.0.2.1:1").Code)
	rec := serve("192.0.2.2:1")
	assert.Equal(t, http.StatusTooManyRequests, rec.Code)
	assert.Equal(t, "60", rec.Header().Get("Retry-After"), "room when the first key's window ends")
	assert.Equal(t, http.StatusOK, serve("192.0.2.1:2").Code, "the live key keeps its quota")
}
