package redisstore

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
	"github.com/stretchr/testify/require"
)

// tierOfUser is the tiers of the tests, as rxthrottle's own tests have
// them: "paid" has 3 per hour, bad ones are bad, the others the limiter's.
func tierOfUser(key string) []rxthrottle.Limit {
	switch key {
	case "paid":
		return []rxthrottle.Limit{rxthrottle.Per(3, time.Hour)}
	case "bad":
		return []rxthrottle.Limit{rxthrottle.Per(0, time.Hour)}
	case "twobad":
		return []rxthrottle.Limit{rxthrottle.Per(1, time.Hour), rxthrottle.Per(2, 0)}
	case "eternal":
		return []rxthrottle.Limit{rxthrottle.Per(1, time.Duration(maxWindow+1)*time.Microsecond)}
	case "panics":
		panic("no tier for you")
	}
	return nil // the limiter's limits
}

// allowedOf returns how many Allows of key succeed in a row on k.
func allowedOf(t *testing.T, k *Keyed, key string) int {
	t.Helper()
	for n := 0; ; n++ {
		ok, err := k.Allow(context.Background(), key)
		require.NoError(t, err)
		if !ok {
			return n
		}
	}
}

// TestKeyLimitsTiers: each key has its tier's limits, costs are checked
// against them, and a key without a tier has the limiter's (and follows
// its SetLimit). Before, NewKeyed refused WithKeyLimits.
func TestKeyLimitsTiers(t *testing.T) {
	srv := redistest.Start(t)
	k, err := NewKeyed(srv.Client(t), "tiers", rxthrottle.Per(1, time.Hour), rxthrottle.WithKeyLimits(tierOfUser), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	require.Equal(t, 3, allowedOf(t, k, "paid"), "the paid tier")
	require.Equal(t, 1, allowedOf(t, k, "free"), "nil: the limiter's limits")
	require.Equal(t, []rxthrottle.Limit{rxthrottle.Per(1, time.Hour)}, k.Limits(), "Limits are the limiter's")
	ctx := context.Background()
	require.ErrorIs(t, k.WaitN(ctx, "paid", 4), rxthrottle.ErrInvalidCost, "costs are checked against the tier")
	require.ErrorIs(t, k.WaitN(ctx, "other", 2), rxthrottle.ErrInvalidCost, "and against the limiter's")
	ok, err := k.AllowN(ctx, "third", 1)
	require.NoError(t, err)
	require.True(t, ok)

	require.NoError(t, k.SetLimit(rxthrottle.Per(2, time.Hour)))
	require.Equal(t, 1, allowedOf(t, k, "free"), "one more of 2")
	require.Equal(t, 0, allowedOf(t, k, "paid"), "the tier keeps its 3")
}

// TestKeyLimitsBadTiersAreErrors: a panic in the function, invalid limits
// and a window Redis cannot count fail that key's call (as
// rxthrottle.Keyed words them), with nothing sent to Redis; other keys
// are unaffected.
func TestKeyLimitsBadTiersAreErrors(t *testing.T) {
	srv := redistest.Start(t)
	k, err := NewKeyed(srv.Client(t), "bad", rxthrottle.Per(1, time.Hour), rxthrottle.WithKeyLimits(tierOfUser), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	ctx := context.Background()
	err = k.Wait(ctx, "bad")
	require.ErrorIs(t, err, rxthrottle.ErrInvalidLimit)
	require.EqualError(t, err, `redisstore: WithKeyLimits: key "bad": limit #1 (0 per 1h0m0s): N must be at least 1: invalid limit`)
	_, err = k.Acquire(ctx, "twobad")
	require.EqualError(t, err, `redisstore: WithKeyLimits: key "twobad": limit #2 (2 per 0s): Window must be positive: invalid limit`)
	_, err = k.Allow(ctx, "panics")
	require.EqualError(t, err, `redisstore: WithKeyLimits: key "panics": the function panicked: no tier for you`)
	err = k.Wait(ctx, "eternal")
	require.ErrorIs(t, err, rxthrottle.ErrInvalidLimit)
	require.ErrorContains(t, err, `redisstore: WithKeyLimits: key "eternal": limit #1`)
	require.ErrorContains(t, err, "longer than Redis's scripts can count exactly")
	for _, key := range []string{"bad", "twobad", "panics", "eternal"} {
		n, err := srv.Do("EXISTS", k.Keys(key)[2])
		require.NoError(t, err)
		require.Zero(t, n, "nothing sent for %q", key)
	}
	require.NoError(t, k.Wait(ctx, "fine"), "other keys are unaffected")
	require.Zero(t, k.Stats().Admitted-1, "only fine's call admitted")

	_, err = NewBucket(srv.Client(t), "b", rxthrottle.Per(1, time.Hour), rxthrottle.WithKeyLimits(tierOfUser))
	require.EqualError(t, err, "redisstore: NewBucket does not read rxthrottle.WithKeyLimits")
	_, err = NewKeyed(srv.Client(t), "nil", rxthrottle.Per(1, time.Hour), rxthrottle.WithKeyLimits(nil))
	require.ErrorContains(t, err, "WithKeyLimits(nil): a function is required")
}

// tracedDeparture is one admission traced, with the limits it ran under.
type tracedDeparture struct {
	id, now, e int64
	tier       string
}

// traceKeyed collects the admissions of k's callers that go (Wait,
// Acquire), under mu.
func traceKeyed(k *Keyed, mu *sync.Mutex, into *[]tracedDeparture) {
	k.s.trace = func(a admission) {
		mu.Lock()
		*into = append(*into, tracedDeparture{a.id, a.now, a.e, a.ranUnder})
		mu.Unlock()
	}
}

// waitOnX starts n goroutines, taking turns among limiters, that call
// Wait on key "x" until stop, each admission traced into got (under mu).
// Wait for them on the returned group.
func waitOnX(t *testing.T, stop time.Time, n int, mu *sync.Mutex, got *[]tracedDeparture, limiters ...*Keyed) *sync.WaitGroup {
	for _, k := range limiters {
		traceKeyed(k, mu, got)
	}
	var wg sync.WaitGroup
	for i := range n {
		k := limiters[i%len(limiters)]
		wg.Go(func() {
			for time.Now().Before(stop) {
				if err := k.Wait(context.Background(), "x"); err != nil {
					t.Errorf("Wait: %v", err)
					return
				}
			}
		})
	}
	return &wg
}

// TestKeyLimitsScheduleExact: two keys of different tiers, each called in
// turn by one goroutine: each key's departures, on Redis's clock, are
// SPEC.md's schedule under its own limits.
func TestKeyLimitsScheduleExact(t *testing.T) {
	srv := redistest.Start(t)
	free := []rxthrottle.Limit{rxthrottle.Per(2, 60*time.Millisecond)}
	paid := []rxthrottle.Limit{rxthrottle.Per(3, 40*time.Millisecond), rxthrottle.Per(5, 100*time.Millisecond)}
	k, err := NewKeyed(srv.Client(t), "exact", free[0], rxthrottle.WithKeyLimits(func(key string) []rxthrottle.Limit {
		if key == "paid" {
			return paid
		}
		return nil
	}), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	var mu sync.Mutex
	var got []tracedDeparture
	traceKeyed(k, &mu, &got)
	var wg sync.WaitGroup
	for _, key := range []string{"paid", "free"} {
		wg.Go(func() {
			for range 12 {
				if err := k.Wait(context.Background(), key); err != nil {
					t.Errorf("Wait(%q): %v", key, err)
					return
				}
			}
		})
	}
	wg.Wait()
	for key, limits := range map[string][]rxthrottle.Limit{"paid": paid, "free": free} {
		var arrivals, es []int64
		for _, d := range got {
			if d.tier == encodeLimits(limits) {
				arrivals, es = append(arrivals, d.now), append(es, d.e)
			}
		}
		require.Len(t, es, 12, key)
		require.Equal(t, spec(arrivals, 0, limits), es, "%s: SPEC.md's schedule under its own limits", key)
		for _, l := range limits {
			require.LessOrEqual(t, maxInWindow(es, micros(l.Window)), l.N, key)
		}
	}
}

// TestKeyLimitsOneScheduleAcrossLimiters: two limiters on one prefix (two
// processes' worth), one giving the key a tier, the other not: the first
// admission records its limits, and the other limiter follows them (OnError
// hears of it once) or, with WithStrictConfig, fails with
// ErrConfigMismatch naming the key and both limit sets. Without the record,
// each enforced its own: 3 + 1 in one window.
func TestKeyLimitsOneScheduleAcrossLimiters(t *testing.T) {
	srv := redistest.Start(t)
	hour := rxthrottle.Per(1, time.Hour)
	tiered, err := NewKeyed(srv.Client(t), "shared", hour, rxthrottle.WithKeyLimits(tierOfUser), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	var heard []error
	var hmu sync.Mutex
	plain, err := NewKeyed(srv.Client(t), "shared", hour, OnError(func(err error) {
		hmu.Lock()
		heard = append(heard, err)
		hmu.Unlock()
	}), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	strict, err := NewKeyed(srv.Client(t), "shared", hour, WithStrictConfig(), WithTimeout(suiteTimeout))
	require.NoError(t, err)

	// The tiered one first: the key runs under 3 per hour everywhere.
	for range 2 {
		ok, err := tiered.Allow(context.Background(), "paid")
		require.NoError(t, err)
		require.True(t, ok)
	}
	require.Equal(t, 1, allowedOf(t, plain, "paid"), "the plain one follows the recorded 3 (one left)")
	require.Equal(t, 0, allowedOf(t, tiered, "paid"))
	require.Len(t, heard, 1, "OnError hears once")
	require.ErrorIs(t, heard[0], ErrConfigMismatch)
	require.ErrorContains(t, heard[0], `key "paid" of prefix "shared": its schedule in Redis runs under limits [3 per 1h0m0s]; this process gives it [1 per 1h0m0s]`)
	_, err = strict.Allow(context.Background(), "paid")
	require.ErrorIs(t, err, ErrConfigMismatch)
	require.EqualError(t, err, `redisstore: key "paid" of prefix "shared": its schedule in Redis runs under limits [3 per 1h0m0s]; this process gives it [1 per 1h0m0s]: configuration differs from the stored one`)
	require.ErrorIs(t, strict.Wait(context.Background(), "paid"), ErrConfigMismatch)

	// The plain one first: the tiered one follows the limiter's 1.
	require.Equal(t, 1, allowedOf(t, plain, "paid2"))
	// (paid2 has no tier in tierOfUser: give it one through a third limiter.)
	tiered2, err := NewKeyed(srv.Client(t), "shared", hour, rxthrottle.WithKeyLimits(func(string) []rxthrottle.Limit {
		return []rxthrottle.Limit{rxthrottle.Per(5, time.Hour)}
	}), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	require.Equal(t, 0, allowedOf(t, tiered2, "paid2"), "the recorded 1 is spent")
	require.Len(t, heard, 1, "the plain one heard nothing new")
	ok, err := strict.Allow(context.Background(), "paid2")
	require.NoError(t, err, "the strict one agrees with the recorded 1")
	require.False(t, ok)
}

// TestKeyLimitsConcurrentOneWindow: on the real clock, goroutines of two
// limiters with different tiers for one key call Wait at once: every
// departure runs under one recorded tier, and its window is never
// exceeded.
func TestKeyLimitsConcurrentOneWindow(t *testing.T) {
	srv := redistest.Start(t)
	w := 100 * time.Millisecond
	a, err := NewKeyed(srv.Client(t), "conc", rxthrottle.Per(2, w), rxthrottle.WithKeyLimits(func(string) []rxthrottle.Limit {
		return []rxthrottle.Limit{rxthrottle.Per(5, w)}
	}), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	b, err := NewKeyed(srv.Client(t), "conc", rxthrottle.Per(2, w), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	var mu sync.Mutex
	var got []tracedDeparture
	stop := time.Now().Add(800 * time.Millisecond)
	wg := waitOnX(t, stop, 8, &mu, &got, a, b)
	wg.Wait()
	require.NotEmpty(t, got)
	tier := got[0].tier
	es := make([]int64, len(got))
	for i, d := range got {
		require.Equal(t, tier, d.tier, "one schedule: every admission under the recorded tier")
		es[i] = d.e
	}
	slices.Sort(es)
	limits, err := decodeLimits(tier)
	require.NoError(t, err)
	require.LessOrEqual(t, maxInWindow(es, micros(w)), limits[0].N, "the recorded tier's window, %d departures", len(es))
	t.Logf("%d departures under %s", len(es), tier)
}

// TestKeyLimitsSetLimitRecordsAnew: after a SetLimit (a new version of the
// configuration), the next admission of a key records its own tier.
func TestKeyLimitsSetLimitRecordsAnew(t *testing.T) {
	srv := redistest.Start(t)
	hour := rxthrottle.Per(1, time.Hour)
	plain, err := NewKeyed(srv.Client(t), "anew", hour, WithTimeout(suiteTimeout))
	require.NoError(t, err)
	tiered, err := NewKeyed(srv.Client(t), "anew", hour, rxthrottle.WithKeyLimits(tierOfUser), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	require.Equal(t, 1, allowedOf(t, plain, "paid"), "recorded: the limiter's 1")
	require.Equal(t, 0, allowedOf(t, tiered, "paid"), "the tiered one follows the 1")
	require.NoError(t, plain.SetLimit(hour)) // the same limits, a new version
	require.Eventually(t, func() bool {
		ok, err := tiered.Allow(context.Background(), "paid")
		require.NoError(t, err)
		return ok
	}, 30*time.Second, 20*time.Millisecond, "under the new version the tier (3) is recorded")
	require.Equal(t, 1, allowedOf(t, tiered, "paid"), "3 in all")
	require.Equal(t, 0, allowedOf(t, plain, "paid"), "the plain one follows the 3, all spent")
}

// TestKeyLimitsHostileFunction: a function that answers something new on
// every call costs bounded memory, never hangs, and never lets more than
// the recorded tier through; one for many keys keeps the cache of limit
// sets bounded.
func TestKeyLimitsHostileFunction(t *testing.T) {
	srv := redistest.Start(t)
	var calls atomic.Int64
	k, err := NewKeyed(srv.Client(t), "hostile", rxthrottle.Per(1, time.Hour), rxthrottle.WithKeyLimits(func(string) []rxthrottle.Limit {
		c := calls.Add(1)
		return []rxthrottle.Limit{rxthrottle.Per(int(2+c%7), time.Hour+time.Duration(c)*time.Microsecond)}
	}), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	ctx := context.Background()
	admitted := 0
	for range 300 {
		ok, err := k.Allow(ctx, "one")
		require.NoError(t, err)
		if ok {
			admitted++
		}
	}
	recorded, err := srv.Do("HGET", k.Keys("one")[2], "t")
	require.NoError(t, err)
	limits, err := decodeLimits(recorded.(string))
	require.NoError(t, err)
	require.Equal(t, limits[0].N, admitted, "the recorded tier's N, no more")
	for i := range 300 {
		_, err := k.Allow(ctx, "key"+string(rune('a'+i%26))+string(rune('a'+i/26)))
		require.NoError(t, err)
	}
	ls := k.s.lim.Load()
	ls.tierMu.Lock()
	require.LessOrEqual(t, len(ls.tierSets), maxTierSets)
	ls.tierMu.Unlock()
	k.s.tiers.mu.Lock()
	require.LessOrEqual(t, len(k.s.tiers.followed), maxFollowed)
	require.LessOrEqual(t, len(k.s.tiers.reported), maxReported)
	k.s.tiers.mu.Unlock()
}

// TestKeyLimitsLostState: the state hash of a key deleted again and again
// while limiters of two tiers call Wait: each admission, in script order,
// keeps the window of the tier it ran under, and no window holds more
// than the larger tier's N.
func TestKeyLimitsLostState(t *testing.T) {
	srv := redistest.Start(t)
	w := 100 * time.Millisecond
	small, big := rxthrottle.Per(4, w), rxthrottle.Per(8, w)
	a, err := NewKeyed(srv.Client(t), "lost", small, rxthrottle.WithKeyLimits(func(string) []rxthrottle.Limit {
		return []rxthrottle.Limit{big}
	}), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	b, err := NewKeyed(srv.Client(t), "lost", small, WithTimeout(suiteTimeout))
	require.NoError(t, err)
	var mu sync.Mutex
	var got []tracedDeparture
	stop := time.Now().Add(time.Second)
	wg := waitOnX(t, stop, 6, &mu, &got, a, b)
	dels := 0
	for time.Now().Before(stop) {
		time.Sleep(200 * time.Millisecond)
		_, err := srv.Do("DEL", a.Keys("x")[2])
		require.NoError(t, err)
		dels++
	}
	wg.Wait()
	slices.SortFunc(got, func(x, y tracedDeparture) int { return int(x.id - y.id) })
	tiers := map[string]int{}
	for i, d := range got {
		require.True(t, i == 0 || got[i-1].id < d.id, "ids are never reused")
		limits, err := decodeLimits(d.tier)
		require.NoError(t, err)
		tiers[d.tier]++
		n := 0
		for _, e := range got[:i+1] {
			if e.e > d.e-micros(limits[0].Window) && e.e <= d.e {
				n++
			}
		}
		require.LessOrEqual(t, n, limits[0].N, "admission %d under %s", d.id, d.tier)
	}
	es := make([]int64, len(got))
	switches := 0
	for i, d := range got {
		es[i] = d.e
		if i > 0 && d.tier != got[i-1].tier {
			switches++
		}
	}
	require.LessOrEqual(t, switches, dels, "one schedule: the tier changes only when its record is lost")
	slices.Sort(es)
	require.LessOrEqual(t, maxInWindow(es, micros(w)), big.N)
	t.Logf("%d departures, %d deletions of the state, %d changes of tier, by tier: %v", len(got), dels, switches, tiers)
}

// TestKeyLimitsFallbackLocal: with FallbackLocal, the local limiter has
// the tiers too.
func TestKeyLimitsFallbackLocal(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialerRetries: 1})
	defer rdb.Close()
	k, err := NewKeyed(rdb, "fb", rxthrottle.Per(1, time.Hour), rxthrottle.WithKeyLimits(tierOfUser),
		WithFailurePolicy(FallbackLocal), OnError(func(error) {}))
	require.NoError(t, err)
	require.Equal(t, 3, allowedOf(t, k, "paid"))
	require.Equal(t, 1, allowedOf(t, k, "free"))
	_, err = k.Allow(context.Background(), "panics")
	require.True(t, err != nil && !errors.Is(err, ErrStoreUnavailable), "%v", err)
}

// TestKeyLimitsReleaseNDebt: a held token's end runs under its key's tier:
// a debt (Token.ReleaseN beyond its n) is counted up to the tier's N, not
// the limiter's.
func TestKeyLimitsReleaseNDebt(t *testing.T) {
	srv := redistest.Start(t)
	k, err := NewKeyed(srv.Client(t), "debt", rxthrottle.Per(2, time.Hour), rxthrottle.WithKeyLimits(func(string) []rxthrottle.Limit {
		return []rxthrottle.Limit{rxthrottle.Per(10, time.Hour)}
	}), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	tok, err := k.Acquire(context.Background(), "big")
	require.NoError(t, err)
	require.NoError(t, tok.ReleaseN(8))
	require.Equal(t, 2, allowedOf(t, k, "big"), "8 of the tier's 10 used")
}
