package bench_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
)

// cmdStat is one command's line of INFO commandstats.
type cmdStat struct{ calls, usec float64 }

// allCommandStats returns every command's calls and total time since the
// last CONFIG RESETSTAT (the commands scripts run are counted too).
func allCommandStats(tb testing.TB, srv *redistest.Server) map[string]cmdStat {
	tb.Helper()
	v, err := srv.Do("INFO", "commandstats")
	if err != nil {
		tb.Fatal(err)
	}
	m := map[string]cmdStat{}
	for _, line := range strings.Split(v.(string), "\r\n") {
		rest, ok := strings.CutPrefix(line, "cmdstat_")
		if !ok {
			continue
		}
		name, fields, _ := strings.Cut(rest, ":")
		var c cmdStat
		for _, field := range strings.Split(fields, ",") {
			k, v, _ := strings.Cut(field, "=")
			f, _ := strconv.ParseFloat(v, 64)
			switch k {
			case "calls":
				c.calls = f
			case "usec":
				c.usec = f
			}
		}
		m[name] = c
	}
	return m
}

// commandStatsOf returns Redis's calls of command and their total time
// (µs) since the last CONFIG RESETSTAT; a command Redis has not run is an
// error.
func commandStatsOf(tb testing.TB, srv *redistest.Server, command string) cmdStat {
	tb.Helper()
	c, ok := allCommandStats(tb, srv)[command]
	if !ok {
		tb.Fatalf("no cmdstat_%s in INFO commandstats", command)
	}
	return c
}
