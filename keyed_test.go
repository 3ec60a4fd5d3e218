package rxthrottle

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// keyedCase draws a SPEC case and deals its items to a few keys.
func keyedCase(r *rand.Rand) ([]Limit, []specItem, []string) {
	limits, items := randomCase(r, 2, false)
	keys := make([]string, len(items))
	nkeys := 1 + r.IntN(3)
	for i := range keys {
		keys[i] = fmt.Sprintf("user-%d", r.IntN(nkeys))
	}
	return limits, items, keys
}

// perKeySchedule is SPEC's "Keys" rule: each key's items by the formula
// over that key's items alone.
func perKeySchedule(limits []Limit, items []specItem, keys []string) []time.Duration {
	want := make([]time.Duration, len(items))
	byKey := map[string][]int{}
	for i, k := range keys {
		byKey[k] = append(byKey[k], i)
	}
	for _, idx := range byKey {
		sub := make([]specItem, len(idx))
		for j, i := range idx {
			sub[j] = items[i]
		}
		for j, e := range specSchedule(limits, sub) {
			want[idx[j]] = e
		}
	}
	return want
}

func TestPropertyKeyedWaitMatchesSpec(t *testing.T) {
	for seed := range propertyCases {
		r := rand.New(rand.NewPCG(uint64(seed), 4))
		limits, items, keys := keyedCase(r)
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				k, err := NewKeyed(limits[0], withLimits(limits[1:])...)
				require.NoError(t, err)
				got := driveWaits(t, start, items, func(ctx context.Context, i int) error { return k.Wait(ctx, keys[i]) })
				require.Equal(t, perKeySchedule(limits, items, keys), got, "limits %v keys %v", limits, keys)
				admitted, cancelled := countOutcomes(got)
				st := k.Stats()
				require.Equal(t, admitted, st.Admitted)
				require.Equal(t, cancelled, st.Cancelled)
				require.Zero(t, st.Queued)
				require.Zero(t, st.KeysBlocked)
			})
		})
	}
}

func TestPropertyThrottleByMatchesSpec(t *testing.T) {
	for seed := range propertyCases {
		r := rand.New(rand.NewPCG(uint64(seed), 5))
		limits, items, keys := keyedCase(r)
		for i := range items {
			items[i].cancel = -1
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				src := scheduledSource(t.Context(), start, items, 0)
				keyOf := func(v any) string { return keys[v.(int)] }
				out := ThrottleBy(limits[0], keyOf, withLimits(limits[1:])...)(src).Observe()
				got := collectKeyed(t, start, out, keys)
				require.Equal(t, perKeySchedule(limits, items, keys), got, "limits %v keys %v", limits, keys)
			})
		})
	}
}

// collectKeyed reads every item of a ThrottleBy output of the items
// 0..len(keys)-1 and returns when each went; it fails on an error item, on
// items of one key out of order, and on items lost.
func collectKeyed(t *testing.T, start time.Time, out <-chan rxgo.Item, keys []string) []time.Duration {
	t.Helper()
	got := make([]time.Duration, len(keys))
	last := map[string]int{}
	n := 0
	for item := range out {
		require.NoError(t, item.E)
		i := item.V.(int)
		if prev, ok := last[keys[i]]; ok {
			require.Less(t, prev, i, "key %s out of order", keys[i])
		}
		last[keys[i]] = i
		got[i] = time.Since(start)
		n++
	}
	require.Equal(t, len(keys), n, "items lost")
	return got
}

func TestThrottleByNoHeadOfLineBlocking(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := time.Millisecond
		type job struct{ user, name string }
		src := rxgo.Just(job{"slow", "s1"}, job{"slow", "s2"}, job{"slow", "s3"}, job{"fast", "f1"}, job{"", "nokey"}, job{"fast", "f2"})()
		out := ThrottleBy(Per(1, 100*ms), func(v any) string { return v.(job).user })(src)
		start := time.Now()
		var got []string
		for item := range out.Observe() {
			if item.Error() {
				got = append(got, fmt.Sprintf("%v error %v", time.Since(start), item.E))
				continue
			}
			got = append(got, fmt.Sprintf("%v %s", time.Since(start), item.V.(job).name))
		}
		require.Equal(t, []string{
			"0s f1",
			"0s s1",
			"100ms f2",
			"100ms s2",
			"200ms s3",
			// An error item keeps its place: right after the items that
			// came before it (s3 the last of them), before none after it.
			"200ms error rxthrottle: ThrottleBy: empty key for item #5 ({ nokey})",
		}, dropSameInstantOrder(got))
	})
}

// dropSameInstantOrder sorts lines that share a time prefix, since keys
// granted at the same instant may come in either order.
func dropSameInstantOrder(lines []string) []string {
	out := append([]string(nil), lines...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0; j-- {
			a, b := out[j-1], out[j]
			if strings.Fields(a)[0] != strings.Fields(b)[0] || a <= b {
				break
			}
			// Keep errors where they are: only items of keys are swapped.
			if strings.Contains(a, "error") || strings.Contains(b, "error") {
				break
			}
			out[j-1], out[j] = b, a
		}
	}
	return out
}

func TestThrottleByBadInput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		out := ThrottleBy(Per(0, time.Second), func(any) string { return "k" })(rxgo.Just(1)())
		item := <-out.Observe()
		require.ErrorIs(t, item.E, ErrInvalidLimit)
		out = ThrottleBy(Per(1, time.Second), nil)(rxgo.Just(1)())
		item = <-out.Observe()
		require.EqualError(t, item.E, "rxthrottle: ThrottleBy: the key function is nil")
		out = ThrottleByWith(nil, func(any) string { return "k" })(rxgo.Just(1)())
		item = <-out.Observe()
		require.EqualError(t, item.E, "rxthrottle: ThrottleByWith(nil, ...): a KeyedLimiter is required")
	})
}

func TestThrottleByDisposeGivesTokensBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k, err := NewKeyed(Per(1, time.Hour))
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		src := rxgo.Just("a1", "a2", "b1", "b2")()
		out := ThrottleByWith(k, func(v any) string { return v.(string)[:1] })(src).Observe(rxgo.WithContext(ctx))
		var got []any
		for range 2 {
			got = append(got, (<-out).V)
		}
		time.Sleep(time.Minute)
		cancel()
		for item := range out {
			got = append(got, item.V)
		}
		require.ElementsMatch(t, []any{"a1", "b1"}, got)
		synctest.Wait()
		st := k.Stats()
		require.EqualValues(t, 2, st.Admitted)
		require.EqualValues(t, 2, st.Cancelled)
		require.Zero(t, st.Queued)
		require.Zero(t, st.KeysBlocked)
	})
}

func TestNewKeyedRejectsBadInput(t *testing.T) {
	_, err := NewKeyed(Per(1, 0))
	require.ErrorIs(t, err, ErrInvalidLimit)
	_, err = NewKeyed(Per(1, time.Second), WithMaxKeys(-1))
	require.EqualError(t, err, "rxthrottle: WithMaxKeys(-1): the bound must be positive, or 0 for none")
	_, err = NewKeyed(Per(1, time.Second), WithIdleMargin(-time.Second))
	require.EqualError(t, err, "rxthrottle: WithIdleMargin(-1s): the margin must not be negative")

	k, err := NewKeyed(Per(1, time.Second))
	require.NoError(t, err)
	require.EqualError(t, k.Wait(context.Background(), ""), "rxthrottle: empty key")
	//lint:ignore SA1012 the point is a nil context
	require.EqualError(t, k.Wait(nil, "k"), "rxthrottle: nil context") //nolint:staticcheck
	require.False(t, allowKey(k, ""))
	k.Pause("", time.Now().Add(time.Hour)) // ignored, no panic
	require.Zero(t, k.Stats().KeysLive)
}

func TestKeyedForgetsIdleKeys(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := time.Millisecond
		k, err := NewKeyed(Per(2, 10*ms), WithIdleMargin(5*ms))
		require.NoError(t, err)
		for i := range 1000 {
			require.True(t, allowKey(k, fmt.Sprint("user-", i)))
		}
		require.Equal(t, 1000, k.Stats().KeysLive)

		// At 14ms the keys are idle but within the margin: nothing goes.
		time.Sleep(14 * ms)
		for range 100 {
			allowKey(k, "probe")
		}
		require.Equal(t, 1001, k.Stats().KeysLive)

		// From 15ms on, every new key forgets idle keys of its own shard
		// and of the others, round-robin, until the old ones are gone.
		time.Sleep(ms)
		for i := range 3000 {
			require.True(t, allowKey(k, fmt.Sprint("new-", i)))
		}
		require.Equal(t, 3001, k.Stats().KeysLive, "idle keys were kept")
	})
}

// TestKeyedSweepsWithoutNewKeys: when no key is made any more, the calls on
// the keys still in use forget the idle ones, every shard in turn.
func TestKeyedSweepsWithoutNewKeys(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k, err := NewKeyed(Per(1, time.Millisecond))
		require.NoError(t, err)
		for i := range 200 {
			require.True(t, allowKey(k, fmt.Sprint("user-", i)))
		}
		time.Sleep(time.Millisecond)
		// One sweep step per sweepEvery calls of the probe, 4 keys each,
		// a shard after another: each turn of the shards examines 4 keys
		// of every shard, so 50 turns clear 200 keys even in one shard.
		turns := 0
		for ; turns < 50 && k.Stats().KeysLive > 1; turns++ {
			for range keyedShards * sweepEvery {
				allowKey(k, "probe")
			}
		}
		require.Equal(t, 1, k.Stats().KeysLive, "idle keys were kept")
		t.Logf("%d turns of the shards", turns)
	})
}

func TestKeyedMaxKeys(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := time.Millisecond
		k, err := NewKeyed(Per(1, 10*ms), WithMaxKeys(2))
		require.NoError(t, err)
		require.NoError(t, k.Wait(context.Background(), "a"))
		require.NoError(t, k.Wait(context.Background(), "b"))
		err = k.Wait(context.Background(), "c")
		require.ErrorIs(t, err, ErrTooManyKeys)
		require.ErrorContains(t, err, `key "c" would be number 3 of at most 2, and none is idle`)
		require.False(t, allowKey(k, "c"))
		require.True(t, allowKey(k, "a") == false, "a is still in its window")

		time.Sleep(10 * ms) // a and b are idle now: c makes room
		require.NoError(t, k.Wait(context.Background(), "c"))
		require.LessOrEqual(t, k.Stats().KeysLive, 2)
	})
}

func TestKeyedPausePerKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		k, err := NewKeyed(Per(5, time.Second))
		require.NoError(t, err)
		k.Pause("alice", start.Add(30*time.Second))
		require.False(t, allowKey(k, "alice"))
		require.True(t, allowKey(k, "bob"))
		require.NoError(t, k.Wait(context.Background(), "alice"))
		require.Equal(t, 30*time.Second, time.Since(start))
	})
}

func TestKeyedSetLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := time.Millisecond
		k, err := NewKeyed(Per(1, 10*ms))
		require.NoError(t, err)
		require.True(t, allowKey(k, "a"))
		require.False(t, allowKey(k, "a"))
		require.NoError(t, k.SetLimit(Per(2, 10*ms)))
		require.True(t, allowKey(k, "a"), "a live key takes the new limit")
		require.True(t, allowKey(k, "b"))
		require.True(t, allowKey(k, "b"), "a new key takes the new limit")
		require.False(t, allowKey(k, "b"))
		require.Equal(t, []Limit{Per(2, 10*ms)}, k.Limits())
		require.ErrorIs(t, k.SetLimit(Per(0, ms)), ErrInvalidLimit)
	})
}

func TestKeyedStatsAndHooks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := time.Millisecond
		var mu sync.Mutex
		admitted := map[string]int{}
		k, err := NewKeyed(Per(1, 10*ms), OnAdmit(func(e Event) {
			mu.Lock()
			admitted[e.Key]++
			mu.Unlock()
		}))
		require.NoError(t, err)
		var wg sync.WaitGroup
		for _, key := range []string{"a", "a", "a", "b"} {
			wg.Go(func() { assert.NoError(t, k.Wait(context.Background(), key)) })
		}
		synctest.Wait()
		st := k.Stats()
		require.Equal(t, 2, st.Queued)
		require.Equal(t, 1, st.KeysBlocked)
		require.Equal(t, 2, st.KeysLive)
		wg.Wait()
		st = k.Stats()
		require.Equal(t, Stats{Admitted: 4, Waited: 2, TotalWait: 30 * ms, MaxWait: 20 * ms, KeysLive: 2}, st)
		synctest.Wait() // hooks run after the grant, on the timer's goroutine
		mu.Lock()
		require.Equal(t, map[string]int{"a": 3, "b": 1}, admitted)
		mu.Unlock()
		require.Zero(t, testing.AllocsPerRun(100, func() { _ = k.Stats() }))
	})
}

// TestKeyedConcurrent hammers a few keys from many goroutines: under -race,
// every key keeps its window and nothing is lost.
func TestKeyedConcurrent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n, w = 3, 10 * time.Millisecond
		k, err := NewKeyed(Per(n, w))
		require.NoError(t, err)
		start := time.Now()
		var mu sync.Mutex
		times := map[string][]time.Duration{}
		var wg sync.WaitGroup
		for g := range 64 {
			wg.Go(func() {
				key := fmt.Sprint("k", g%4)
				for range 10 {
					assert.NoError(t, k.Wait(context.Background(), key))
					mu.Lock()
					times[key] = append(times[key], time.Since(start))
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		for key, ts := range times {
			require.Len(t, ts, 160, key)
			require.LessOrEqual(t, maxInWindow(ts, w), n, key)
		}
		require.EqualValues(t, 640, k.Stats().Admitted)
	})
}

// TestKeyedKeysBlocked pins down what KeysBlocked counts: keys with at
// least one caller waiting, for a token or for a pause to end. A paused key
// that nobody waits on holds nobody back and is not counted.
func TestKeyedKeysBlocked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k, err := NewKeyed(Per(1, time.Minute))
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		start := time.Now()
		steps := []struct {
			name            string
			do              func()
			blocked, queued int
		}{
			{"paused, nobody waits", func() { k.Pause("paused", start.Add(time.Hour)) }, 0, 0},
			{"a token used", func() { require.NoError(t, k.Wait(ctx, "busy")) }, 0, 0},
			{"a caller waits for the pause", func() { go func() { _ = k.Wait(ctx, "paused") }() }, 1, 1},
			{"a second caller of that key", func() { go func() { _ = k.Wait(ctx, "paused") }() }, 1, 2},
			{"a caller waits for a token", func() { go func() { _ = k.Wait(ctx, "busy") }() }, 2, 3},
			{"the token is renewed", func() { time.Sleep(time.Minute) }, 1, 2},
			{"the paused key's callers give up", cancel, 0, 0},
		}
		for i, step := range steps {
			step.do()
			synctest.Wait()
			st := k.Stats()
			require.Equal(t, step.blocked, st.KeysBlocked, "step %d (%s): KeysBlocked", i, step.name)
			require.Equal(t, step.queued, st.Queued, "step %d (%s): Queued", i, step.name)
		}
	})
}
