package redisstore

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The stored configuration (config.go) is a HASH any client of the Redis
// can write, and confScript hands its fields back as they are: parseConf
// and decodeLimits are the only guard between them and the schedule. These
// fuzz targets check that whatever is stored, they return an error or a
// limit set the scripts can enforce exactly, and never panic.

// FuzzDecodeLimits: decodeLimits (a stored "l" field, or a key's recorded
// tier, tiers.go) either fails or returns limits that hold exactly the
// N and W µs written, W from 1 to maxWindow, that encode back to limits
// that decode equal. N is newLimitSet's to check (FuzzParseConf).
func FuzzDecodeLimits(f *testing.F) {
	for _, s := range []string{
		"4/3600000000", "10/1000000", "3/1000000,100/60000000", "1/1",
		"", ",", "/", "1/", "/1", "1/0", "0/1", "-1/1", "1/-1", "+5/100", "1 /100",
		"1/9007199254740992", "1/9007199254740993", "1/1e309", "1/NaN", "1.5/100",
		"9223372036854775807/1", "9223372036854775808/1", "1/-9223372036854775808",
		// Negative windows whose nanoseconds wrap around int64 to a small
		// positive Duration (616 ns, 232 ns): decodeLimits took them, and
		// newLimitSet then found a valid window under a microsecond.
		"1/-18446744073709551", "1/-36893488147419103",
		"4/3600000000,", "4/3600000000,1", strings.Repeat("1/1,", 100) + "1/1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		limits, err := decodeLimits(s)
		again, err2 := decodeLimits(s)
		if fmt.Sprint(limits, err) != fmt.Sprint(again, err2) {
			t.Fatalf("decodeLimits(%q) not deterministic: %v, %v then %v, %v", s, limits, err, again, err2)
		}
		if err != nil {
			return
		}
		fields := strings.Split(s, ",")
		if len(limits) != len(fields) || len(limits) == 0 {
			t.Fatalf("decodeLimits(%q) = %d limits for %d fields", s, len(limits), len(fields))
		}
		for i, l := range limits {
			ns, ws, _ := strings.Cut(fields[i], "/")
			n, _ := strconv.Atoi(ns)
			w, _ := strconv.ParseInt(ws, 10, 64)
			if w < 1 || w > maxWindow || l.Window != time.Duration(w)*time.Microsecond || l.N != n {
				t.Fatalf("decodeLimits(%q): limit #%d is %d per %v, written %q", s, i+1, l.N, l.Window, fields[i])
			}
		}
		enc := encodeLimits(limits)
		back, err := decodeLimits(enc)
		if err != nil || fmt.Sprint(back) != fmt.Sprint(limits) {
			t.Fatalf("decodeLimits(%q) = %v encodes as %q, which decodes to %v, %v", s, limits, enc, back, err)
		}
	})
}

// confReply builds a confScript reply of the fields, then bends its shape
// by shape: 0 leaves it as the script gives it; every other shape swaps
// one element's type or changes the length, as a reply from another
// script or a stored value of another type would, and must be refused.
func confReply(shape uint8, ver int64, l, sp, h, k string, now int64) any {
	r := []any{ver, l, sp, h, k, now}
	i := int(shape>>3) % len(r)
	switch shape & 7 {
	case 1: // an integer as a bulk string, a string as an integer
		if _, ok := r[i].(int64); ok {
			r[i] = fmt.Sprint(r[i])
		} else {
			r[i] = ver
		}
	case 2:
		r[i] = float64(ver)
	case 3:
		r[i] = nil
	case 4:
		r[i] = []any{r[i]}
	case 5:
		r = r[:i] // a Lua table cut at a nil
	case 6:
		r = append(r, now)
	case 7:
		return l // not an array at all
	}
	return r
}

// FuzzParseConf: parseConf either fails or returns a limit set the
// scripts can enforce: valid limits of whole µs windows within maxWindow,
// spacing and hold timeout within range, a cap that is not negative, its
// derived fields agreeing with them, and the reply's stamp.
func FuzzParseConf(f *testing.F) {
	hour := strconv.FormatInt(time.Hour.Microseconds(), 10)
	for _, c := range []struct {
		shape      uint8
		ver        int64
		l, s, h, k string
		now        int64
	}{
		{0, 1733600000000000, "4/3600000000", "0", "60000000", "0", 1733600000000001},
		{0, 1, "50/" + hour, "1000", "60000000", "1", 2},
		{0, 7, "3/1000000,100/60000000", "0", "1", "10", 7},
		{0, 0, "", "", "", "", 0},
		{0, -1, "1/-18446744073709551", "0", "60000000", "0", -1},
		{0, math.MaxInt64, "1/9007199254740992", "9007199254740992", "9007199254740992", "9223372036854775807", math.MinInt64},
		{0, 1, "1/1", "9007199254740993", "1", "0", 1},
		{0, 1, "1/1", "-1", "0", "-1", 1},
		{0, 1, "1/1", "1e309", "NaN", "1.5", 1},
		{0, 1, "4/3600000000", "0", "60000000", "9223372036854775808", 1},
		{0, 1, "{\"l\":\"4/1\"", "0", "60000000", "0", 1},
		{1 << 3, 1, "4/3600000000", "0", "60000000", "0", 1},
		{2 | 1<<3, 1, "4/3600000000", "0", "60000000", "0", 1},
		{3, 1, "4/3600000000", "0", "60000000", "0", 1},
		{4 | 5<<3, 1, "4/3600000000", "0", "60000000", "0", 1},
		{5 | 2<<3, 1, "4/3600000000", "0", "60000000", "0", 1},
		{6, 1, "4/3600000000", "0", "60000000", "0", 1},
		{7, 1, "4/3600000000", "0", "60000000", "0", 1},
	} {
		f.Add(c.shape, c.ver, c.l, c.s, c.h, c.k, c.now)
	}
	f.Fuzz(func(t *testing.T, shape uint8, ver int64, l, sp, h, k string, now int64) {
		v := confReply(shape, ver, l, sp, h, k, now)
		ls, err := parseConf(v)
		again, err2 := parseConf(confReply(shape, ver, l, sp, h, k, now))
		if (err == nil) != (err2 == nil) || err != nil && err.Error() != err2.Error() {
			t.Fatalf("parseConf(%#v) not deterministic: %v then %v", v, err, err2)
		}
		if err != nil {
			if err.Error() == "" {
				t.Fatalf("parseConf(%#v): an empty error", v)
			}
			return
		}
		if ls.describe() != again.describe() || ls.enc != again.enc || ls.stamp != again.stamp {
			t.Fatalf("parseConf(%#v) not deterministic: %s then %s", v, ls.describe(), again.describe())
		}
		if shape&7 != 0 {
			t.Fatalf("parseConf(%#v) (shape %d) accepted a reply of the wrong shape: %s", v, shape, ls.describe())
		}
		checkParsedConf(t, v, ls, l, ver, now)
	})
}

// checkParsedConf checks what parseConf made of the reply v, whose limits
// field was l.
func checkParsedConf(t *testing.T, v any, ls *limitSet, l string, ver, now int64) {
	t.Helper()
	want, err := decodeLimits(l)
	if err != nil || fmt.Sprint(want) != fmt.Sprint(ls.limits) || ls.enc != encodeLimits(want) {
		t.Fatalf("parseConf(%#v): limits %v, enc %q; the field decodes to %v, %v", v, ls.limits, ls.enc, want, err)
	}
	minN, maxW := math.MaxInt, int64(0)
	for i, lim := range ls.limits {
		w := micros(lim.Window)
		if lim.N < 1 || lim.Window <= 0 || w > maxWindow || lim.Window != time.Duration(w)*time.Microsecond {
			t.Fatalf("parseConf(%#v): limit #%d, %d per %v, cannot be enforced exactly", v, i+1, lim.N, lim.Window)
		}
		if ls.tail[2*i] != lim.N || ls.tail[2*i+1] != w {
			t.Fatalf("parseConf(%#v): tail %v for limits %v", v, ls.tail, ls.limits)
		}
		minN, maxW = min(minN, lim.N), max(maxW, w)
	}
	if ls.minN != minN || ls.maxW != maxW || len(ls.tail) != 2*len(ls.limits) {
		t.Fatalf("parseConf(%#v): minN %d, maxW %d, tail %v for limits %v", v, ls.minN, ls.maxW, ls.tail, ls.limits)
	}
	if ls.spacing < 0 || ls.spacing > maxWindow || ls.hold < 1 || ls.hold > maxWindow || ls.concurrency < 0 {
		t.Fatalf("parseConf(%#v): spacing %d µs, hold %d µs, concurrency %d out of range", v, ls.spacing, ls.hold, ls.concurrency)
	}
	if ls.stamp != (confStamp{version: ver, readAt: now}) {
		t.Fatalf("parseConf(%#v): stamp %+v", v, ls.stamp)
	}
	// What a schedule does next with a set read (readConfLocked) must not
	// panic either.
	ls.prebuild(&schedule{})
	_ = ls.describe()
	_ = defaultPoll(ls.limits)
	_ = ls.minW()
}
