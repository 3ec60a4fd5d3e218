package rxthrottle

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rxthrottle/rxthrottle/internal/specmodel"
	"github.com/stretchr/testify/require"
)

// Fair shares (SPEC.md, "Fair shares") on virtual time: the schedule of
// callers of several tenants, to the nanosecond, against
// internal/specmodel.

// fairItems returns n Waits of tenant key and weight w arriving at at.
func fairItems(n int, key string, w float64, at time.Duration) []specmodel.Item {
	items := make([]specmodel.Item, n)
	for i := range items {
		items[i] = specmodel.Item{Arrive: at, Cancel: -1, Tenant: key, Weight: w}
	}
	return items
}

// runFair drives items at a new Bucket of cfg and returns the departures,
// after checking them against the model's.
func runFair(t *testing.T, cfg specmodel.Config, items []specmodel.Item) []time.Duration {
	t.Helper()
	var got []specmodel.Outcome
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		limit, opts := meteredOptions(cfg)
		b, err := NewBucket(limit, opts...)
		require.NoError(t, err)
		want := specmodel.Run(cfg, items)
		got = driveMetered(t, start, items, want, func(i int) acquirer { return bucketAcquirer(b, i) })
		require.Equal(t, want, got, "config %+v", cfg)
	})
	d := make([]time.Duration, len(got))
	for i, o := range got {
		d[i] = o.Depart
	}
	return d
}

// TestFairLateTenantGoesWithinTwoWindows is issue 31's case: tenant A has
// 100 calls queued on Per(10, time.Second), B (the same weight) sends 10
// at 2.5 s: all of B's go within 2 windows of their arrival, alternating
// with A's, and A keeps the rest of the quota.
func TestFairLateTenantGoesWithinTwoWindows(t *testing.T) {
	const arrive = 2500 * time.Millisecond
	items := append(fairItems(100, "A", 1, 0), fairItems(10, "B", 1, arrive)...)
	cfg := specmodel.Config{Limits: []specmodel.Limit{{N: 10, Window: time.Second}}, HoldTimeout: time.Hour}
	d := runFair(t, cfg, items)
	for i, at := range d[100:] {
		require.LessOrEqual(t, at, arrive+2*time.Second, "B's call %d", i)
	}
	perSecond := map[time.Duration]int{}
	for _, at := range d[:100] {
		perSecond[at.Truncate(time.Second)]++
	}
	require.Equal(t, map[time.Duration]int{0: 10, time.Second: 10, 2 * time.Second: 10, 3 * time.Second: 5,
		4 * time.Second: 5, 5 * time.Second: 10, 6 * time.Second: 10, 7 * time.Second: 10, 8 * time.Second: 10,
		9 * time.Second: 10, 10 * time.Second: 10}, perSecond, "A's calls a second")
	require.Equal(t, 10, specmodel.MaxInWindow(d, nil, time.Second), "the most calls in one window")
}

// TestFairWeightsShareTwoToOne: tenants of weights 2 and 1, each with 60
// calls queued, share each window 2:1 while both wait.
func TestFairWeightsShareTwoToOne(t *testing.T) {
	var items []specmodel.Item
	for range 60 {
		items = append(items, fairItems(1, "A", 2, 0)[0], fairItems(1, "B", 1, 0)[0])
	}
	d := runFair(t, specmodel.Config{Limits: []specmodel.Limit{{N: 9, Window: time.Second}}, HoldTimeout: time.Hour}, items)
	for w := 1; w <= 9; w++ { // the first 9 go at once, in arrival order: nobody waited
		var got [2]int
		for i, at := range d {
			if at.Truncate(time.Second) == time.Duration(w)*time.Second {
				got[i%2]++
			}
		}
		require.Equal(t, [2]int{6, 3}, got, "window %d: A's and B's calls", w)
	}
	require.Equal(t, 9, specmodel.MaxInWindow(d, nil, time.Second), "the most calls in one window")
}

var fairFeatures = specmodel.Features{Concurrency: true, Priorities: true, QueueBound: true, Deadlines: true, ReleaseN: true, Tenants: true}

// TestPropertyFairBucketMatchesModel: random cases mixing tenants of
// weights 1 to 3 with every other rule, to the nanosecond.
func TestPropertyFairBucketMatchesModel(t *testing.T) {
	for seed := range meteredCases {
		c := specmodel.RandomMeteredCase(rand.New(rand.NewPCG(uint64(seed), 31)), 3, fairFeatures)
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			runFair(t, c.Config, c.Items)
		})
	}
}

// TestFairTenantFromContext checks WithTenant and TenantFrom.
func TestFairTenantFromContext(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		ctx  context.Context
		key  string
		want float64
	}{
		{ctx, "", 1},
		{nil, "", 1},
		{WithTenant(ctx, "a", 2.5), "a", 2.5},
		{WithTenant(ctx, "b", 0), "b", 1},
		{WithTenant(ctx, "c", -3), "c", 1},
		{WithTenant(WithTenant(ctx, "x", 3), "d", 4), "d", 4},
	} {
		key, w := TenantFrom(c.ctx)
		require.Equal(t, c.key, key)
		require.Equal(t, c.want, w, "weight of %q", key)
	}
	var nilCtx context.Context
	require.Nil(t, WithTenant(nilCtx, "a", 1), "a nil ctx gives nil")
}
