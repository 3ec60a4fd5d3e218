package redisstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
)

// failedCase is one way of calling a limiter of TestStatsFailedFailClosed:
// warm is a call that goes through Redis while it runs, call one that
// Redis's outage fails, stats the limiter's Stats as a user reads them.
type failedCase struct {
	name  string
	warm  func(context.Context) error
	call  func(context.Context) error
	stats func() rxthrottle.Stats
}

// TestStatsFailedFailClosed: under FailClosed, every caller that ends with
// a *StoreError while Redis is stopped counts in Stats.Failed, on every
// path that returns one (Wait, WaitN, Acquire and Allow, through the lease
// pool too, on a Keyed and ForKey over it, under the adaptive concurrency
// gate), so that Admitted + Cancelled + Refused + Failed is exactly the
// number of callers (nobody is queued at the end). Without Failed's
// counting they were counted nowhere.
func TestStatsFailedFailClosed(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	limit := rxthrottle.Per(2, time.Hour) // the warm calls take it all: a lease leaves nothing in the pool
	newBucket := func(name string, opts ...Option) *Bucket {
		b, err := NewBucket(rdb, name, limit, append(opts, WithTimeout(suiteTimeout))...)
		require.NoError(t, err)
		t.Cleanup(func() { _ = b.Close() })
		return b
	}
	newKeyed := func(prefix string) *Keyed {
		k, err := NewKeyed(rdb, prefix, limit, WithTimeout(suiteTimeout))
		require.NoError(t, err)
		return k
	}
	var cases []failedCase
	for _, lease := range []bool{false, true} {
		var opts []Option
		prefix := ""
		if lease {
			opts, prefix = []Option{WithLease(0)}, "lease/"
		}
		for _, m := range []string{"Wait", "WaitN", "Acquire", "Allow"} {
			b := newBucket("failed-"+prefix+m, opts...)
			cases = append(cases, failedCase{prefix + m, b.Wait, bucketCall(b, m), b.Stats})
		}
	}
	gated := newBucket("failed-gated", rxthrottle.WithAdaptiveConcurrency(1, 4))
	// One Keyed each: a Keyed's Stats are over all its keys.
	kw, ka, kf := newKeyed("failed-keyed-wait"), newKeyed("failed-keyed-acquire"), newKeyed("failed-forkey")
	forKey := rxthrottle.ForKey(kf, "c")
	cases = append(cases,
		failedCase{"gate/Acquire", gated.Wait, bucketCall(gated, "Acquire"), gated.Stats},
		failedCase{"Keyed/Wait", func(ctx context.Context) error { return kw.Wait(ctx, "a") },
			func(ctx context.Context) error { return kw.Wait(ctx, "a") }, kw.Stats},
		failedCase{"Keyed/Acquire", func(ctx context.Context) error { return ka.Wait(ctx, "b") },
			func(ctx context.Context) error { return release(ka.Acquire(ctx, "b")) }, ka.Stats},
		failedCase{"ForKey/Allow", forKey.Wait,
			func(ctx context.Context) error { return allowErr(forKey.Allow(ctx)) }, forKey.Stats},
	)
	const warm, failed = 2, 5
	for _, c := range cases {
		for i := range warm {
			require.NoError(t, c.warm(t.Context()), "%s: warm call %d", c.name, i)
		}
	}
	srv.Stop()
	for _, c := range cases {
		for i := range failed {
			err := c.call(t.Context())
			var serr *StoreError
			require.ErrorAs(t, err, &serr, "%s: call %d", c.name, i)
			require.ErrorIs(t, err, ErrStoreUnavailable, "%s: call %d", c.name, i)
		}
		st := c.stats()
		require.Equal(t, uint64(warm), st.Admitted, "%s: %+v", c.name, st)
		require.Equal(t, uint64(failed), st.Failed, "%s: %+v", c.name, st)
		require.Zero(t, st.Queued, "%s: %+v", c.name, st)
		require.Equal(t, uint64(warm+failed), st.Admitted+st.Cancelled+st.Refused+st.Failed, "%s: every caller counted once: %+v", c.name, st)
	}
	// go-redis's pool retries its dial every second from a goroutine that
	// goleak (TestMain) must not find: closing the client ends it, at its
	// next wake-up, which CloseClient waits for (this client's only, not
	// those of tests running beside). The limiters' Cleanup closes them on
	// a closed client: their errors are ignored there.
	redistest.CloseClient(t, rdb)
}

// bucketCall returns b's method m as a call of failedCase.
func bucketCall(b *Bucket, m string) func(context.Context) error {
	switch m {
	case "WaitN":
		return func(ctx context.Context) error { return b.WaitN(ctx, 2) }
	case "Acquire":
		return func(ctx context.Context) error { return release(b.Acquire(ctx)) }
	case "Allow":
		return func(ctx context.Context) error { return allowErr(b.Allow(ctx)) }
	}
	return b.Wait
}

// release releases tok if Acquire gave one, and returns Acquire's error.
func release(tok rxthrottle.Token, err error) error {
	if err == nil {
		tok.Release()
	}
	return err
}

// allowErr returns Allow's error; an Allow that returns true or false
// without one is not what an outage under FailClosed gives.
func allowErr(ok bool, err error) error {
	if err == nil {
		return fmt.Errorf("Allow = %v, nil", ok)
	}
	return err
}
