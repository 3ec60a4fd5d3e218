package grpcthrottle_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/grpcthrottle"
)

// The schedule on virtual time, exactly: the interceptors over a fake
// invoker that reports to the Interceptor's StatsHandler what a grpc-go
// ClientConn would (the attempt began, its headers were written, the
// server answered), so each case says what reached the wire when.

// wire is what a fake RPC does, in order.
type wire struct {
	write   bool          // the request's headers go to the transport
	serve   time.Duration // the server's time before it answers
	answer  bool          // the server answers (headers, or a status)
	err     error         // the RPC's result
	trailer metadata.MD   // the trailer the answer carries
	block   bool          // after writing, wait for the context to end
}

// fakeInvoker plays w for every RPC, recording each departure (the moment
// the invoker is called, since the start).
type fakeInvoker struct {
	h     stats.Handler
	start time.Time
	mu    sync.Mutex
	sent  []time.Duration
	plan  func(n int) wire // the n-th RPC's wire, from 0
	// observe, if set, sees the context of every RPC as it departs.
	observe func(ctx context.Context)
}

func (f *fakeInvoker) invoke(ctx context.Context, _ string, _, _ any, _ *grpc.ClientConn, opts ...grpc.CallOption) error {
	f.mu.Lock()
	n := len(f.sent)
	f.sent = append(f.sent, time.Since(f.start))
	f.mu.Unlock()
	if f.observe != nil {
		f.observe(ctx)
	}
	w := f.plan(n)
	ctx = f.h.TagRPC(ctx, &stats.RPCTagInfo{})
	f.h.HandleRPC(ctx, &stats.Begin{Client: true})
	if !w.write {
		return w.err
	}
	f.h.HandleRPC(ctx, &stats.OutHeader{Client: true})
	f.h.HandleRPC(ctx, &stats.OutPayload{Client: true})
	if w.block {
		<-ctx.Done()
		return status.FromContextError(ctx.Err()).Err()
	}
	time.Sleep(w.serve)
	if w.answer {
		f.h.HandleRPC(ctx, &stats.InTrailer{Client: true})
	}
	for _, o := range opts {
		if t, ok := o.(grpc.TrailerCallOption); ok && w.trailer != nil {
			*t.TrailerAddr = w.trailer
		}
	}
	return w.err
}

func (f *fakeInvoker) departures() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.sent...)
}

// runUnary makes calls RPCs at once (in order of arrival) through an
// Interceptor over a bucket with limit and bopts, and returns their
// departures and errors.
func runUnary(t *testing.T, limit rxthrottle.Limit, bopts []rxthrottle.Option, opts []grpcthrottle.Option, calls int, plan func(n int) wire, ctxOf func(n int) context.Context, observe ...func(context.Context)) ([]time.Duration, []error, *grpcthrottle.Interceptor) {
	t.Helper()
	bucket, err := rxthrottle.NewBucket(limit, bopts...)
	require.NoError(t, err)
	it, err := grpcthrottle.New(bucket, opts...)
	require.NoError(t, err)
	f := &fakeInvoker{h: it.StatsHandler(), start: time.Now(), plan: plan}
	for _, o := range observe {
		f.observe = o
	}
	errs := make([]error, calls)
	var wg sync.WaitGroup
	for n := range calls {
		ctx := context.Background()
		if ctxOf != nil {
			ctx = ctxOf(n)
		}
		wg.Go(func() { errs[n] = it.Unary(ctx, "/t/M", nil, nil, nil, f.invoke) })
		synctest.Wait() // each caller queued before the next: FIFO order
	}
	wg.Wait()
	return f.departures(), errs, it
}

func secs(s ...float64) []time.Duration {
	out := make([]time.Duration, len(s))
	for i, v := range s {
		out[i] = time.Duration(v * float64(time.Second))
	}
	return out
}

func TestVirtualSchedule(t *testing.T) {
	cancelAt := func(d time.Duration) func(int) context.Context {
		return func(n int) context.Context {
			if n > 0 {
				return context.Background()
			}
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(d, cancel)
			return ctx
		}
	}
	for _, tc := range []struct {
		name  string
		limit rxthrottle.Limit
		bopts []rxthrottle.Option
		opts  []grpcthrottle.Option
		calls int
		plan  func(n int) wire
		ctxOf func(n int) context.Context
		want  []time.Duration
		stats grpcthrottle.Stats
	}{{
		name: "HeldUntilAnswer", limit: rxthrottle.Per(2, time.Second), calls: 4,
		plan: func(int) wire { return wire{write: true, serve: 3 * time.Second, answer: true} },
		want: secs(0, 0, 4, 4), stats: grpcthrottle.Stats{Sent: 4},
	}, {
		name: "ErrorAnswered", limit: rxthrottle.Per(1, time.Second), calls: 2,
		plan: func(int) wire {
			return wire{write: true, serve: 2 * time.Second, answer: true, err: status.Error(codes.NotFound, "no")}
		},
		want: secs(0, 3), stats: grpcthrottle.Stats{Sent: 2},
	}, {
		name: "NeverWrittenGivesBack", limit: rxthrottle.Per(1, time.Hour), calls: 2,
		plan: func(n int) wire {
			if n == 0 {
				return wire{err: status.Error(codes.Unavailable, "no connection")}
			}
			return wire{write: true, answer: true}
		},
		want: secs(0, 0), stats: grpcthrottle.Stats{Sent: 2, ErrorsUnwritten: 1},
	}, {
		name: "InFlightLingersToBound", limit: rxthrottle.Per(1, 10*time.Second), calls: 2,
		opts:  []grpcthrottle.Option{grpcthrottle.WithInFlightBound(5 * time.Second)},
		plan:  func(n int) wire { return wire{write: true, block: n == 0, answer: true} },
		ctxOf: cancelAt(time.Second),
		want:  secs(0, 16), stats: grpcthrottle.Stats{Sent: 2, ErrorsAfterWrite: 1, HeldPastError: 1},
	}, {
		name: "InFlightLingersToHoldTimeout", limit: rxthrottle.Per(1, 10*time.Second), calls: 2,
		bopts: []rxthrottle.Option{rxthrottle.WithHoldTimeout(30 * time.Second)},
		opts:  []grpcthrottle.Option{grpcthrottle.WithInFlightBound(time.Hour)},
		plan:  func(n int) wire { return wire{write: true, block: n == 0, answer: true} },
		ctxOf: cancelAt(time.Second),
		want:  secs(0, 40), stats: grpcthrottle.Stats{Sent: 2, ErrorsAfterWrite: 1, HeldPastError: 1, HoldingPastError: 1},
	}, {
		name: "InFlightDefaultBound", limit: rxthrottle.Per(1, 10*time.Second), calls: 2,
		plan:  func(n int) wire { return wire{write: true, block: n == 0, answer: true} },
		ctxOf: cancelAt(time.Second),
		want:  secs(0, 21), stats: grpcthrottle.Stats{Sent: 2, ErrorsAfterWrite: 1, HeldPastError: 1},
	}, {
		name: "InFlightBoundZero", limit: rxthrottle.Per(1, 10*time.Second), calls: 2,
		opts:  []grpcthrottle.Option{grpcthrottle.WithInFlightBound(0)},
		plan:  func(n int) wire { return wire{write: true, block: n == 0, answer: true} },
		ctxOf: cancelAt(time.Second),
		want:  secs(0, 11), stats: grpcthrottle.Stats{Sent: 2, ErrorsAfterWrite: 1},
	}, {
		name: "AnsweredThenCancelledReleases", limit: rxthrottle.Per(1, 10*time.Second), calls: 2,
		plan: func(n int) wire {
			return wire{write: true, answer: true, serve: 2 * time.Second, err: status.Error(codes.Canceled, "context canceled")}
		},
		want: secs(0, 12), stats: grpcthrottle.Stats{Sent: 2},
	}, {
		name: "RetryInfoPauses", limit: rxthrottle.Per(100, time.Second), calls: 2,
		plan: func(n int) wire {
			if n == 0 {
				return wire{write: true, answer: true, err: retryInfo(t, codes.ResourceExhausted, 3*time.Second)}
			}
			return wire{write: true, answer: true}
		},
		want: secs(0, 3), stats: grpcthrottle.Stats{Sent: 2, Pushbacks: 1},
	}, {
		name: "PushbackTrailerPauses", limit: rxthrottle.Per(100, time.Second), calls: 2,
		plan: func(n int) wire {
			if n == 0 {
				return wire{write: true, answer: true, err: status.Error(codes.ResourceExhausted, "x"),
					trailer: metadata.Pairs(grpcthrottle.PushbackHeader, "2500")}
			}
			return wire{write: true, answer: true}
		},
		want: secs(0, 2.5), stats: grpcthrottle.Stats{Sent: 2, Pushbacks: 1},
	}, {
		name: "LaterOfBothWins", limit: rxthrottle.Per(100, time.Second), calls: 2,
		plan: func(n int) wire {
			if n == 0 {
				return wire{write: true, answer: true, err: retryInfo(t, codes.ResourceExhausted, 3*time.Second),
					trailer: metadata.Pairs(grpcthrottle.PushbackHeader, "4000")}
			}
			return wire{write: true, answer: true}
		},
		want: secs(0, 4), stats: grpcthrottle.Stats{Sent: 2, Pushbacks: 1},
	}, {
		name: "PauseCapped", limit: rxthrottle.Per(100, time.Second), calls: 2,
		opts: []grpcthrottle.Option{grpcthrottle.WithMaxPause(10 * time.Second), grpcthrottle.OnBadPushback(nil)},
		plan: func(n int) wire {
			if n == 0 {
				return wire{write: true, answer: true, err: retryInfo(t, codes.ResourceExhausted, time.Hour)}
			}
			return wire{write: true, answer: true}
		},
		want: secs(0, 10), stats: grpcthrottle.Stats{Sent: 2, Pushbacks: 1, PushbackErrors: 1},
	}, {
		name: "OtherCodesDoNotPause", limit: rxthrottle.Per(100, time.Second), calls: 2,
		plan: func(n int) wire {
			if n == 0 {
				return wire{write: true, answer: true, err: retryInfo(t, codes.InvalidArgument, time.Hour),
					trailer: metadata.Pairs(grpcthrottle.PushbackHeader, "4000")}
			}
			return wire{write: true, answer: true}
		},
		want: secs(0, 0), stats: grpcthrottle.Stats{Sent: 2},
	}, {
		name: "NegativePushbackDoesNotPause", limit: rxthrottle.Per(100, time.Second), calls: 2,
		plan: func(n int) wire {
			if n == 0 {
				return wire{write: true, answer: true, err: status.Error(codes.ResourceExhausted, "x"),
					trailer: metadata.Pairs(grpcthrottle.PushbackHeader, "-1")}
			}
			return wire{write: true, answer: true}
		},
		want: secs(0, 0), stats: grpcthrottle.Stats{Sent: 2},
	}, {
		name: "RetryWaitsOutPause", limit: rxthrottle.Per(100, time.Second), calls: 1,
		opts: []grpcthrottle.Option{grpcthrottle.WithMaxAttempts(3)},
		plan: func(n int) wire {
			if n < 2 {
				return wire{write: true, answer: true, err: retryInfo(t, codes.ResourceExhausted, 2*time.Second)}
			}
			return wire{write: true, answer: true}
		},
		want: secs(0, 2, 4), stats: grpcthrottle.Stats{Sent: 3, Pushbacks: 2, Retries: 2},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sent, errs, it := runUnary(t, tc.limit, tc.bopts, tc.opts, tc.calls, tc.plan, tc.ctxOf)
				assert.Equal(t, tc.want, sent, "departures")
				assert.Equal(t, tc.stats, it.Stats())
				_ = errs
			})
		})
	}
}

// Bad pushback values are reported, with ErrBadPushback, and pause
// nothing; a capped one is reported too.
func TestVirtualBadPushback(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var reports []error
		var mu sync.Mutex
		report := grpcthrottle.OnBadPushback(func(err error) { mu.Lock(); reports = append(reports, err); mu.Unlock() })
		sent, _, _ := runUnary(t, rxthrottle.Per(100, time.Second), nil,
			[]grpcthrottle.Option{report, grpcthrottle.WithMaxPause(time.Minute)}, 3,
			func(n int) wire {
				switch n {
				case 0:
					return wire{write: true, answer: true, err: status.Error(codes.ResourceExhausted, "x"),
						trailer: metadata.Pairs(grpcthrottle.PushbackHeader, "soon")}
				case 1:
					return wire{write: true, answer: true, err: retryInfo(t, codes.ResourceExhausted, time.Hour)}
				}
				return wire{write: true, answer: true}
			}, nil)
		assert.Equal(t, secs(0, 0, 60), sent)
		require.Len(t, reports, 2)
		for _, err := range reports {
			assert.ErrorIs(t, err, grpcthrottle.ErrBadPushback)
		}
		assert.Contains(t, reports[0].Error(), `"soon"`)
		assert.Contains(t, reports[1].Error(), "more than the maximum 1m0s")
	})
}

// A panicking invoker: the panic goes on, and the token lingers (what the
// invoker did is unknown).
func TestVirtualInvokerPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bucket, err := rxthrottle.NewBucket(rxthrottle.Per(1, time.Second))
		require.NoError(t, err)
		it, err := grpcthrottle.New(bucket)
		require.NoError(t, err)
		assert.PanicsWithValue(t, "boom", func() {
			_ = it.Unary(context.Background(), "/t/M", nil, nil, nil,
				func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error { panic("boom") })
		})
		assert.Equal(t, 1, bucket.Stats().Held)
		assert.Equal(t, grpcthrottle.Stats{Sent: 1, ErrorsAfterWrite: 1, HeldPastError: 1, HoldingPastError: 1}, it.Stats())
	})
}

func TestNewErrors(t *testing.T) {
	bucket, err := rxthrottle.NewBucket(rxthrottle.Per(1, time.Second))
	require.NoError(t, err)
	var typedNil *rxthrottle.Bucket
	for _, tc := range []struct {
		l    rxthrottle.Limiter
		opts []grpcthrottle.Option
		want string
	}{
		{nil, nil, "grpcthrottle: New: the Limiter is nil"},
		{typedNil, nil, "grpcthrottle: New: the Limiter is nil"},
		{bucket, []grpcthrottle.Option{nil}, "grpcthrottle: New: option 0 is nil"},
		{bucket, []grpcthrottle.Option{grpcthrottle.WithClock(nil)}, "grpcthrottle: WithClock(nil): a clock is required"},
		{bucket, []grpcthrottle.Option{grpcthrottle.WithMaxPause(0)}, "grpcthrottle: WithMaxPause(0s): the maximum pause must be positive"},
		{bucket, []grpcthrottle.Option{grpcthrottle.WithMaxAttempts(0)}, "grpcthrottle: WithMaxAttempts(0): at least 1 attempt is required"},
		{bucket, []grpcthrottle.Option{grpcthrottle.WithInFlightBound(-time.Second)}, "grpcthrottle: WithInFlightBound(-1s): the bound must not be negative"},
	} {
		it, err := grpcthrottle.New(tc.l, tc.opts...)
		assert.Nil(t, it)
		assert.EqualError(t, err, tc.want)
	}
}

func TestZeroInterceptor(t *testing.T) {
	for _, it := range []*grpcthrottle.Interceptor{nil, {}} {
		err := it.Unary(context.Background(), "/t/M", nil, nil, nil, nil)
		assert.Equal(t, codes.Internal, status.Code(err))
		_, err = it.Stream(context.Background(), &bidiDesc, nil, "/t/M", nil)
		assert.Equal(t, codes.Internal, status.Code(err))
	}
}

// A limiter that fails: the RPC is not sent, with UNAVAILABLE, and the
// limiter's error is still there for errors.Is.
func TestLimiterFails(t *testing.T) {
	errStore := errors.New("store down")
	it, err := grpcthrottle.New(failingLimiter{errStore})
	require.NoError(t, err)
	err = it.Unary(context.Background(), "/t/M", nil, nil, nil, nil)
	assert.Equal(t, codes.Unavailable, status.Code(err))
	assert.ErrorIs(t, err, errStore)
	assert.EqualError(t, err, "grpcthrottle: /t/M: no token: store down")
}

type failingLimiter struct {
	err error
}

func (f failingLimiter) Wait(context.Context) error       { return f.err }
func (f failingLimiter) WaitN(context.Context, int) error { return f.err }
func (f failingLimiter) Acquire(context.Context) (rxthrottle.Token, error) {
	return rxthrottle.Token{}, f.err
}
func (f failingLimiter) AcquireN(context.Context, int) (rxthrottle.Token, error) {
	return rxthrottle.Token{}, f.err
}
func (f failingLimiter) Allow(context.Context) (bool, error)                  { return false, f.err }
func (f failingLimiter) AllowN(context.Context, int) (bool, error)            { return false, f.err }
func (f failingLimiter) Pause(time.Time)                                      {}
func (f failingLimiter) SetLimit(rxthrottle.Limit, ...rxthrottle.Limit) error { return f.err }
func (f failingLimiter) Limits() []rxthrottle.Limit                           { return nil }
func (f failingLimiter) Stats() rxthrottle.Stats                              { return rxthrottle.Stats{} }
