package limiterkit_test

import (
	"bytes"
	"log/slog"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/limiterkit"
)

// TestResolveDefaults: no options are rxthrottle's defaults.
func TestResolveDefaults(t *testing.T) {
	s, err := limiterkit.Resolve(nil)
	require.NoError(t, err)
	assert.NotNil(t, s.Clock())
	assert.Empty(t, s.Limits())
	assert.Nil(t, s.OnWait())
	assert.Nil(t, s.OnAdmit())
	assert.Equal(t, rxthrottle.DefaultHoldTimeout, s.HoldTimeout())
	assert.Zero(t, s.Spacing())
	assert.Zero(t, s.MaxKeys())
	assert.Zero(t, s.IdleMargin())
	assert.Empty(t, s.Given())
	assert.Empty(t, s.Extensions())
	require.NoError(t, s.Check("mystore: NewBucket"))
}

// TestResolve: every option of rxthrottle's reads back, the last one
// winning, limits added in order, and other packages' options kept in
// order with their values.
func TestResolve(t *testing.T) {
	mock := clock.NewMock()
	var waited, admitted int
	s, err := limiterkit.Resolve([]rxthrottle.Option{
		rxthrottle.WithClock(clock.New()),
		rxthrottle.WithClock(mock),
		rxthrottle.WithLimit(rxthrottle.Per(10, time.Minute)),
		limiterkit.NewOption("mystore.WithShards", 4),
		rxthrottle.WithLimit(rxthrottle.Per(0, 0)), // not validated: the builder does
		rxthrottle.OnWait(func(rxthrottle.Event) { waited++ }),
		rxthrottle.OnAdmit(func(rxthrottle.Event) { admitted++ }),
		rxthrottle.WithHoldTimeout(time.Second),
		rxthrottle.WithSpacing(time.Millisecond),
		rxthrottle.WithMaxKeys(7),
		rxthrottle.WithIdleMargin(time.Hour),
		limiterkit.NewOption("mystore.WithShards", 8),
		limiterkit.NewOption("", nil),
		limiterkit.NewOption("rxthrottle.WithLimit", rxthrottle.Per(1, time.Second)),
	})
	require.NoError(t, err)
	assert.Same(t, mock, s.Clock())
	assert.Equal(t, []rxthrottle.Limit{rxthrottle.Per(10, time.Minute), rxthrottle.Per(0, 0)}, s.Limits())
	s.OnWait()(rxthrottle.Event{})
	s.OnAdmit()(rxthrottle.Event{})
	assert.Equal(t, []int{1, 1}, []int{waited, admitted})
	assert.Equal(t, time.Second, s.HoldTimeout())
	assert.Equal(t, time.Millisecond, s.Spacing())
	assert.Equal(t, 7, s.MaxKeys())
	assert.Equal(t, time.Hour, s.IdleMargin())
	assert.Equal(t, []limiterkit.Extension{
		{Name: "mystore.WithShards", Value: 4},
		{Name: "mystore.WithShards", Value: 8},
		{Name: "limiterkit.NewOption"},
		{Name: "limiterkit.NewOption(rxthrottle.WithLimit)", Value: rxthrottle.Per(1, time.Second)},
	}, s.Extensions())
	assert.Equal(t, []string{
		"rxthrottle.WithClock", "rxthrottle.WithClock", "rxthrottle.WithLimit", "mystore.WithShards",
		"rxthrottle.WithLimit", "rxthrottle.OnWait", "rxthrottle.OnAdmit", "rxthrottle.WithHoldTimeout",
		"rxthrottle.WithSpacing", "rxthrottle.WithMaxKeys", "rxthrottle.WithIdleMargin",
		"mystore.WithShards", "limiterkit.NewOption", "limiterkit.NewOption(rxthrottle.WithLimit)",
	}, s.Given())
	assert.Len(t, s.Limits(), 2, "a forged name is not rxthrottle's option")

	// What Settings returns is a copy.
	s.Limits()[0] = rxthrottle.Per(1, time.Second)
	s.Given()[0] = "x"
	s.Extensions()[0].Value = 0
	assert.Equal(t, rxthrottle.Per(10, time.Minute), s.Limits()[0])
	assert.Equal(t, "rxthrottle.WithClock", s.Given()[0])
	assert.Equal(t, 4, s.Extensions()[0].Value)
}

// TestResolveErrors: bad options are the errors rxthrottle's constructors
// return.
func TestResolveErrors(t *testing.T) {
	for _, tc := range []struct {
		opt  rxthrottle.Option
		want string
	}{
		{nil, "rxthrottle: nil Option"},
		{rxthrottle.WithClock(nil), "rxthrottle: WithClock(nil): a clock is required"},
		{rxthrottle.WithHoldTimeout(0), "rxthrottle: WithHoldTimeout(0s): the timeout must be positive"},
		{rxthrottle.WithSpacing(-1), "rxthrottle: WithSpacing(-1ns): the spacing must not be negative"},
		{rxthrottle.WithMaxKeys(-1), "rxthrottle: WithMaxKeys(-1): the bound must be positive, or 0 for none"},
	} {
		_, err := limiterkit.Resolve([]rxthrottle.Option{tc.opt})
		require.EqualError(t, err, tc.want)
		_, err = rxthrottle.NewKeyed(rxthrottle.Per(1, time.Second), tc.opt)
		require.EqualError(t, err, tc.want, "the same error as rxthrottle's")
	}
}

// TestCheck: an option not read is named, the first one first.
func TestCheck(t *testing.T) {
	s, err := limiterkit.Resolve([]rxthrottle.Option{
		rxthrottle.WithLimit(rxthrottle.Per(1, time.Second)),
		limiterkit.NewOption("otherstore.WithShards", 4),
		rxthrottle.OnWait(nil),
	})
	require.NoError(t, err)
	require.NoError(t, s.Check("mystore: NewBucket", "rxthrottle.OnWait", "otherstore.WithShards", "rxthrottle.WithLimit"))
	require.EqualError(t, s.Check("mystore: NewBucket", "rxthrottle.WithLimit"), "mystore: NewBucket does not read otherstore.WithShards")
	require.EqualError(t, s.Check("mystore: NewBucket"), "mystore: NewBucket does not read rxthrottle.WithLimit")
}

// TestForeignOptionRefused: rxthrottle's constructors name an option of
// another package rather than ignore it.
func TestForeignOptionRefused(t *testing.T) {
	o := limiterkit.NewOption("mystore.WithTimeout", time.Second)
	want := "rxthrottle: mystore.WithTimeout is an option of another package's limiters: rxthrottle's limiters do not read it"
	_, err := rxthrottle.NewBucket(rxthrottle.Per(1, time.Second), o)
	require.EqualError(t, err, want)
	_, err = rxthrottle.NewKeyed(rxthrottle.Per(1, time.Second), o)
	require.EqualError(t, err, want)
}

// TestCallHook: a hook's panic is recovered and logged; nil does nothing.
func TestCallHook(t *testing.T) {
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })

	limiterkit.CallHook(nil, rxthrottle.Event{})
	var got rxthrottle.Event
	limiterkit.CallHook(func(ev rxthrottle.Event) { got = ev }, rxthrottle.Event{Key: "a", N: 2})
	assert.Equal(t, rxthrottle.Event{Key: "a", N: 2}, got)
	assert.Empty(t, buf.String())

	limiterkit.CallHook(func(rxthrottle.Event) { panic("boom") }, rxthrottle.Event{Key: "k"})
	assert.Contains(t, buf.String(), "rxthrottle: a hook panicked")
	assert.Contains(t, buf.String(), "panic=boom")
	assert.Contains(t, buf.String(), "key=k")
}

func TestResolveAdaptiveConcurrency(t *testing.T) {
	s, err := limiterkit.Resolve(nil)
	require.NoError(t, err)
	lo, hi, ok := s.AdaptiveConcurrency()
	require.False(t, ok)
	require.Zero(t, lo+hi)
	s, err = limiterkit.Resolve([]rxthrottle.Option{rxthrottle.WithAdaptiveConcurrency(2, 9)})
	require.NoError(t, err)
	lo, hi, ok = s.AdaptiveConcurrency()
	require.True(t, ok)
	require.Equal(t, [2]int{2, 9}, [2]int{lo, hi})
}
