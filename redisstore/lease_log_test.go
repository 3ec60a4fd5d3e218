package redisstore

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
)

// An admission log records what a process's Bucket admitted, on Redis's
// clock, as lines: "W e" (a Wait of the normal path departing at e), "U id
// d j lb" (token j of lease id, granted at d, taken by a caller when
// Redis's clock was at least lb), "R id d now
// runs" (a report of lease id that Redis ran at now, runs as lua/report.lua
// takes them). spansOf turns a log into what Redis recorded of each
// admission: [e, e] for a Wait; for a leased token [d, c], c its reported
// completion (clamped to the report's now), or the lease deadline d + hold
// if no report of it came (the process died, or the report failed). A
// completion recorded before lb (earlier than the use) fails the test.

// admissionLog writes a Bucket's admissions to w (under mu).
type admissionLog struct {
	mu sync.Mutex
	w  io.Writer
}

// attach makes b log to l.
func (l *admissionLog) attach(b *Bucket) {
	b.s.trace = func(a admission) { l.printf("W %d\n", a.e) }
	if b.pool != nil {
		b.pool.used = func(id, d int64, j int, earliest int64) { l.printf("U %d %d %d %d\n", id, d, j, earliest) }
		b.pool.trace = func(id, d, now int64, runs string) { l.printf("R %d %d %d %s\n", id, d, now, runs) }
	}
}

func (l *admissionLog) printf(format string, args ...any) {
	l.mu.Lock()
	fmt.Fprintf(l.w, format, args...)
	l.mu.Unlock()
}

// spansOf parses a log (hold: the hold timeout, µs) into held spans.
func spansOf(t *testing.T, r io.Reader, hold int64) []heldSpan {
	t.Helper()
	type tok struct {
		id int64
		j  int
	}
	used := map[tok]int64{}  // token -> grant
	early := map[tok]int64{} // token -> the earliest Redis's clock was at its use
	done := map[tok]int64{}  // token -> completion recorded
	var spans []heldSpan
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<24)
	num := func(s string) int64 {
		v, err := strconv.ParseInt(s, 10, 64)
		require.NoError(t, err, "log field %q", s)
		return v
	}
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "W":
			e := num(f[1])
			spans = append(spans, heldSpan{e, e})
		case "U":
			k := tok{num(f[1]), int(num(f[3]))}
			used[k], early[k] = num(f[2]), num(f[4])
		case "R":
			id, d, now := num(f[1]), num(f[2]), num(f[3])
			for _, run := range f[4:] {
				p := strings.Split(run, ",")
				j, n, u, x := num(p[0]), num(p[1]), num(p[2]), num(p[3])
				if u < 0 {
					continue
				}
				c := min(d+u, now)
				for k := j; k < j+n; k++ {
					done[tok{id, int(k)}] = c
				}
				for range x {
					spans = append(spans, heldSpan{c, c})
				}
			}
		}
	}
	require.NoError(t, sc.Err())
	for k, d := range used {
		c, ok := done[k]
		if !ok {
			c = d + hold
		}
		require.GreaterOrEqual(t, c, early[k], "token %d of lease %d: completion recorded before its use", k.j, k.id)
		spans = append(spans, heldSpan{d, c})
	}
	return spans
}

// requireSpansFit is requireHeldSpansFit for many spans: for each
// completion c, the spans that may have reached a server in [c, c+W) (d <
// c+W and completion >= c) are at most N, for every limit.
func requireSpansFit(t *testing.T, spans []heldSpan, limits []rxthrottle.Limit, what string) {
	t.Helper()
	ds, cs := make([]int64, len(spans)), make([]int64, len(spans))
	for i, s := range spans {
		ds[i], cs[i] = s.d, s.c
	}
	slices.Sort(ds)
	slices.Sort(cs)
	for _, l := range limits {
		w := micros(l.Window)
		worst := 0
		for _, c := range cs {
			lo, _ := slices.BinarySearch(cs, c)   // completions >= c
			hi, _ := slices.BinarySearch(ds, c+w) // departures < c+w
			n := (len(cs) - lo) - (len(ds) - hi)  // completion >= c and departure < c+w (d <= c)
			worst = max(worst, n)
			require.LessOrEqual(t, n, l.N, "%s: %d in [%d, %d+W) under %v", what, n, c, c, l)
		}
		t.Logf("%s: %d admissions, at most %d in a window of %v (N = %d)", what, len(spans), worst, l.Window, l.N)
	}
}

// readSpans reads the log files paths into spans.
func readSpans(t *testing.T, hold int64, paths ...string) []heldSpan {
	t.Helper()
	var all []heldSpan
	for _, p := range paths {
		f, err := os.Open(p)
		require.NoError(t, err)
		all = append(all, spansOf(t, f, hold)...)
		f.Close()
	}
	return all
}
