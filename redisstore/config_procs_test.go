package redisstore

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
)

// The SetLimit suite: three OS processes (this test binary, re-run as
// TestConfigChild) hammer one Bucket and one key of a Keyed limiter on a
// real redis-server, all built with configLimitOld; one of them lowers
// both to configLimitNew in the middle of the run. Each process reports
// every admission it went on, with Redis's now when the script decided it
// and the departure it gave; the parent then checks on Redis's clock that
// every admission decided after the SetLimit (after it plus confBound for
// the Keyed limiter) fits the new limit: the window that ends at its
// departure, counting every departure of the run, holds at most N of the
// new limit. Admissions decided before it fit the old one.

const configEnv = "RXTHROTTLE_CONFIG_CHILD"

var (
	configLimitOld = rxthrottle.Per(10, time.Second)
	configLimitNew = rxthrottle.Per(3, time.Second)
)

type configChild struct {
	Addr   string
	Setter bool          // this process calls SetLimit
	SetAt  time.Duration // after the start
	Run    time.Duration
	Out    string
}

// configAdmission is one admission on Redis's clock, µs: when the script
// decided it, and the departure it gave.
type configAdmission struct{ Now, E int64 }

type configReport struct {
	Bucket, Keyed             []configAdmission
	BucketLimits, KeyedLimits []rxthrottle.Limit // at the end
}

func TestConfigChild(t *testing.T) {
	raw := os.Getenv(configEnv)
	if raw == "" {
		t.Skip("run by TestSetLimitAcrossProcesses only")
	}
	var cfg configChild
	require.NoError(t, json.Unmarshal([]byte(raw), &cfg))
	rdb := redistest.Dial(cfg.Addr) // a cluster client in cluster mode
	defer rdb.Close()
	// suiteTimeout: the suite checks the limits, not outages, and a child's
	// Wait at load 9-17 got no answer within DefaultTimeout's 500 ms.
	b, err := NewBucket(rdb, "conf", configLimitOld, WithTimeout(suiteTimeout))
	require.NoError(t, err)
	k, err := NewKeyed(rdb, "confk", configLimitOld, WithTimeout(suiteTimeout))
	require.NoError(t, err)

	// A caller's admission re-planned by the SetLimit (its departure
	// bumped: departures.go) was withdrawn, and the caller went by the
	// one it asked again: only the admissions not bumped are reported.
	var mu sync.Mutex
	var rep configReport
	var bucketDeps, keyedDeps []*departure
	b.s.trace = func(a admission) {
		mu.Lock()
		rep.Bucket, bucketDeps = append(rep.Bucket, configAdmission{a.now, a.e}), append(bucketDeps, a.dep)
		mu.Unlock()
	}
	k.s.trace = func(a admission) {
		mu.Lock()
		rep.Keyed, keyedDeps = append(rep.Keyed, configAdmission{a.now, a.e}), append(keyedDeps, a.dep)
		mu.Unlock()
	}
	// No deadline on the calls: every admission traced departs (one
	// withdrawn would count in the windows without having gone).
	stop := time.Now().Add(cfg.Run)
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for time.Now().Before(stop) {
				require.NoError(t, b.Wait(ctx))
			}
		})
		wg.Go(func() {
			for time.Now().Before(stop) {
				require.NoError(t, k.Wait(ctx, "x"))
			}
		})
	}
	if cfg.Setter {
		time.Sleep(cfg.SetAt)
		require.NoError(t, b.SetLimit(configLimitNew))
		require.NoError(t, k.SetLimit(configLimitNew))
	}
	wg.Wait()
	rep.Bucket, rep.Keyed = departed(b.s, rep.Bucket, bucketDeps), departed(k.s, rep.Keyed, keyedDeps)
	rep.BucketLimits, rep.KeyedLimits = b.Limits(), k.Limits()
	out, err := json.Marshal(rep)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(cfg.Out, out, 0o600))
}

// departed returns the admissions of as (with their departures deps, nil
// for one that went at once) that their callers went by: all but those
// bumped (departure.again), which the callers asked again.
func departed(s *schedule, as []configAdmission, deps []*departure) []configAdmission {
	s.group.mu.Lock()
	defer s.group.mu.Unlock()
	var out []configAdmission
	for i, a := range as {
		if deps[i] == nil || deps[i].again == nil {
			out = append(out, a)
		}
	}
	return out
}

// TestSetLimitAcrossProcesses: SetLimit in one of three processes; within
// the stated bound no process admits beyond the new limit.
func TestSetLimitAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("three processes for five seconds")
	}
	const procs = 3
	srv := redistest.Start(t)
	dir := t.TempDir()
	var children []*exec.Cmd
	var outs []string
	for p := range procs {
		out := filepath.Join(dir, "child"+strconv.Itoa(p)+".json")
		// Five seconds: the callers sleeping on departures planned under
		// the old limits ask again under the new ones, each process's
		// behind the reservations the others still held, so the first
		// admissions decided after the SetLimit's bound come 2-3 s after
		// it (with three seconds, at load, there were none).
		cfg := configChild{Addr: srv.Addr(), Setter: p == 1, SetAt: 1200 * time.Millisecond, Run: 5 * time.Second, Out: out}
		children = append(children, startChild(t, "TestConfigChild", time.Minute, configEnv, cfg))
		outs = append(outs, out)
	}
	var bucket, keyed []configAdmission
	for i, c := range children {
		waitChild(t, i, c)
		raw, err := os.ReadFile(outs[i])
		require.NoError(t, err, "child %d wrote no report", i)
		var r configReport
		require.NoError(t, json.Unmarshal(raw, &r))
		require.Equal(t, []rxthrottle.Limit{configLimitNew}, r.BucketLimits, "child %d follows the new limits", i)
		require.Equal(t, []rxthrottle.Limit{configLimitNew}, r.KeyedLimits, "child %d follows the new limits", i)
		bucket, keyed = append(bucket, r.Bucket...), append(keyed, r.Keyed...)
	}
	version := func(key string) int64 {
		v, err := srv.Do("HGET", key, "v")
		require.NoError(t, err)
		n, err := strconv.ParseInt(v.(string), 10, 64)
		require.NoError(t, err)
		return n
	}
	checkSetLimit(t, "Bucket", bucket, version("rxthrottle:{conf}:conf"), 0)
	checkSetLimit(t, "Keyed", keyed, version("rxthrottle:{confk}:keyconf"), micros(confBound))
}

// checkSetLimit checks the admissions of one schedule across a SetLimit
// stored at set (its version: Redis's time of the write, µs): every one
// decided after set+bound fits configLimitNew, every one decided before
// set configLimitOld, on the window that ends at its departure.
func checkSetLimit(t *testing.T, what string, as []configAdmission, set, bound int64) {
	t.Helper()
	departs := make([]int64, len(as))
	for i, a := range as {
		departs[i] = a.E
	}
	slices.Sort(departs)
	// inWindow is the number of departures in (e-W, e].
	inWindow := func(e, w int64) int {
		lo, _ := slices.BinarySearch(departs, e-w+1)
		hi, _ := slices.BinarySearch(departs, e+1)
		return hi - lo
	}
	var before, after int
	for _, a := range as {
		switch {
		case a.Now > set+bound:
			after++
			l := configLimitNew
			require.LessOrEqual(t, inWindow(a.E, micros(l.Window)), l.N,
				"%s: an admission decided at %d, %d µs after SetLimit, departs at %d in a window of more than %v", what, a.Now, a.Now-set, a.E, l)
		case a.Now < set:
			before++
			l := configLimitOld
			require.LessOrEqual(t, inWindow(a.E, micros(l.Window)), l.N, "%s: departs at %d in a window of more than %v", what, a.E, l)
		}
	}
	t.Logf("%s: %d admissions, %d decided before SetLimit, %d after it (+%v)", what, len(as), before, after, time.Duration(bound)*time.Microsecond)
	require.Positive(t, before)
	require.Positive(t, after)
}
