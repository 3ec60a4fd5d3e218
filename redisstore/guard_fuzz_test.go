package redisstore

import (
	"fmt"
	"math"
	"math/big"
	"testing"
	"time"
)

// FuzzGuardResult: guardScript's reply carries the time left until a
// key's stored end (its hash, which any client of the Redis can write) as
// seconds and nanoseconds. guardResult either refuses the reply (of the
// wrong shape) or gives a Result whose Reset is that time exactly, clamped
// to [0, the longest Duration]: never a wrapped one, which would tell the
// guard's callers to retry in the past.
func FuzzGuardResult(f *testing.F) {
	for _, c := range [][6]int64{
		{0, 1, 0, 1, 59, 999999999}, // counted, as the script answers
		{0, 0, 1, 2, 30, 0},         // blocked
		{1, 0, 0, 5, 0, 1},
		// Stored ends the script does not write give times left it
		// does not either: out of range, or summing to a negative one.
		{0, 1, 0, 1, -1, 0},
		{0, 1, 0, 1, 0, -1},
		{0, 1, 0, 1, 0, 1e9},
		{0, 1, 0, 1, 1, -4e9},
		{0, 1, 0, 1, 1 << 40, -1},
		{0, 1, 0, 1, 1<<40 + 1, math.MinInt64},
		{0, 1, 0, 1, -(1 << 40), math.MaxInt64},
		// A stored end 317 years ahead: Reset wrapped around to -267 years.
		{0, 1, 0, 1, 1e10, 0},
		{0, 1, 0, 1, math.MaxInt64 / int64(time.Second), 854775807},
		{0, 1, 0, 1, math.MaxInt64 / int64(time.Second), 854775808},
		{0, 1, 0, 1, math.MaxInt64, math.MaxInt64},
		{0, 1, 0, 1, math.MinInt64, math.MinInt64},
		{0, 1, 0, math.MaxInt64, 1, 0},
		{1, 1, 0, 1, 1, 0}, // not 5 elements
		{2, 1, 0, 1, 1, 0}, // an element of another type
		{3, 1, 0, 1, 1, 0}, // not an array
	} {
		f.Add(uint8(c[0]), c[1], c[2], c[3], c[4], c[5])
	}
	f.Fuzz(func(t *testing.T, shape uint8, a, b, n, s, ns int64) {
		var v any = []any{a, b, n, s, ns}
		switch shape % 4 {
		case 1:
			v = []any{a, b, n, s}
		case 2:
			v = []any{a, b, fmt.Sprint(n), s, ns}
		case 3:
			v = fmt.Sprint(a)
		}
		r, err := guardResult(v)
		r2, err2 := guardResult(v)
		if r != r2 || (err == nil) != (err2 == nil) {
			t.Fatalf("guardResult(%v) not deterministic: %+v, %v then %+v, %v", v, r, err, r2, err2)
		}
		if err != nil {
			return
		}
		if shape%4 != 0 {
			t.Fatalf("guardResult(%v) accepted a reply of the wrong shape: %+v", v, r)
		}
		exact := new(big.Int).Mul(big.NewInt(s), big.NewInt(int64(time.Second)))
		exact.Add(exact, big.NewInt(ns))
		want := time.Duration(math.MaxInt64)
		switch {
		case exact.Sign() < 0:
			want = 0
		case exact.IsInt64():
			want = time.Duration(exact.Int64())
		}
		if r.Reset != want || r.Allowed != (a == 1) || r.Blocked != (b == 1) || int64(r.Count) != n {
			t.Fatalf("guardResult(%v) = %+v, want Reset %v", v, r, want)
		}
	})
}
