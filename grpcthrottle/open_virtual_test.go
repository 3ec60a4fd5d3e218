package grpcthrottle_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/grpcthrottle"
)

// A unary RPC given up in flight, on virtual time: one token a second;
// the first RPC's caller gives up at 1 s, the second RPC waits behind it.
// Kept open, the first's token is released at its late answer (3 s), so
// the second departs at 4 s; an RPC with no answer is cancelled at the
// in-flight bound (1 s + 10 s), the second departs at 12 s; and one not
// kept open (WithMaxKeptOpen(0)) is cancelled at its caller's deadline and
// its token held for the bound: 12 s too.
func TestVirtualKeptOpen(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  []grpcthrottle.Option
		first wire
		want  time.Duration
		stats func(st grpcthrottle.Stats) bool
	}{
		{"LateAnswer", nil, wire{write: true, serve: 3 * time.Second, answer: true}, 4 * time.Second,
			func(st grpcthrottle.Stats) bool { return st.LateAnswers == 1 && st.KeptOpenTotal == 1 }},
		{"NoAnswer", nil, wire{write: true, block: true}, 12 * time.Second,
			func(st grpcthrottle.Stats) bool { return st.LateAnswers == 0 && st.KeptOpenTotal == 1 }},
		{"NotKeptOpen", []grpcthrottle.Option{grpcthrottle.WithMaxKeptOpen(0)}, wire{write: true, block: true}, 12 * time.Second,
			func(st grpcthrottle.Stats) bool { return st.KeptOpenTotal == 0 && st.HeldPastError == 1 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				bucket, err := rxthrottle.NewBucket(rxthrottle.Per(1, time.Second))
				require.NoError(t, err)
				it, err := grpcthrottle.New(bucket, tc.opts...)
				require.NoError(t, err)
				f := &fakeInvoker{h: it.StatsHandler(), start: time.Now(), plan: func(n int) wire {
					if n == 0 {
						return tc.first
					}
					return wire{write: true, answer: true}
				}}
				var wg sync.WaitGroup
				wg.Go(func() {
					ctx, cancel := context.WithTimeout(context.Background(), time.Second)
					defer cancel()
					err := it.Unary(ctx, "/t/M", nil, new(wrapperspb.StringValue), nil, f.invoke)
					assert.Equal(t, codes.DeadlineExceeded, status.Code(err), "err = %v", err)
					assert.Equal(t, time.Second, time.Since(f.start), "the caller gets its error at its deadline")
				})
				synctest.Wait()
				wg.Go(func() {
					assert.NoError(t, it.Unary(context.Background(), "/t/M", nil, new(wrapperspb.StringValue), nil, f.invoke))
				})
				wg.Wait()
				time.Sleep(time.Minute) // every hold over
				synctest.Wait()
				assert.Equal(t, []time.Duration{0, tc.want}, f.departures())
				st := it.Stats()
				assert.True(t, tc.stats(st), "%+v", st)
				assert.Zero(t, st.KeptOpen)
				assert.Zero(t, bucket.Stats().Held)
			})
		})
	}
}
