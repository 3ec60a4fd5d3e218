package grpcthrottle_test

import (
	"context"
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
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/grpcthrottle"
)

// signKind is what the server of a scriptStream does at its instant.
type signKind int

const (
	signNone    signKind = iota // nothing: the stream waits for its end
	signHeaders                 // headers, then a message
	signReset                   // RST_STREAM, as grpc-go reports it
	signClose                   // the connection closed at a read
	signPanic                   // a read panics (an interceptor below)
)

// scriptStream is a ClientStream whose server gives its sign at at (from
// the stream's start), on a context of the interceptor's making: RecvMsg
// blocks until then or the stream's end; SendMsg blocks until the
// stream's end if blockSend.
type scriptStream struct {
	grpc.ClientStream // nil: methods not overridden are not called
	ctx               context.Context
	h                 stats.Handler
	sign              signKind
	at                time.Time
	blockSend         bool
}

func (s *scriptStream) Context() context.Context { return s.ctx }
func (s *scriptStream) Trailer() metadata.MD     { return nil }

func (s *scriptStream) SendMsg(any) error {
	if s.blockSend {
		<-s.ctx.Done()
		return status.FromContextError(s.ctx.Err()).Err()
	}
	return nil
}

func (s *scriptStream) RecvMsg(m any) error {
	var timer <-chan time.Time
	if s.sign != signNone {
		timer = time.After(time.Until(s.at))
	}
	select {
	case <-s.ctx.Done():
		return status.FromContextError(s.ctx.Err()).Err()
	case <-timer:
	}
	switch s.sign {
	case signPanic:
		panic("boom")
	case signReset:
		return status.Error(codes.Canceled, "stream terminated by RST_STREAM with error code: CANCEL")
	case signClose:
		return status.Error(codes.Unavailable, "error reading from server: EOF")
	}
	s.h.HandleRPC(s.ctx, &stats.InHeader{Client: true})
	if sv, ok := m.(*wrapperspb.StringValue); ok { // else the interceptor's own read
		sv.Value = "late"
	}
	return nil
}

// openScript opens a stream through it under ctx whose underlying stream
// is script, on the context and stats handler the interceptor gives it.
func openScript(t *testing.T, it *grpcthrottle.Interceptor, ctx context.Context, script scriptStream) (grpc.ClientStream, *scriptStream) {
	t.Helper()
	ss := &script
	cs, err := it.Stream(ctx, &bidiDesc, nil, "/t/S", func(sctx context.Context, _ *grpc.StreamDesc, _ *grpc.ClientConn, _ string, _ ...grpc.CallOption) (grpc.ClientStream, error) {
		ss.h = it.StatsHandler()
		ss.ctx = ss.h.TagRPC(sctx, &stats.RPCTagInfo{})
		ss.h.HandleRPC(ss.ctx, &stats.OutHeader{Client: true})
		return ss, nil
	})
	require.NoError(t, err)
	return cs, ss
}

// callerKind is what the caller of a scripted stream does after opening it.
type callerKind int

const (
	callerReads     callerKind = iota // SendMsg, then a RecvMsg its deadline ends
	callerSendHeld                    // a SendMsg held (flow control) until its deadline
	callerNeverRead                   // SendMsg, then waits for its deadline without reading
)

// TestVirtualStreamKeptOpen: a stream whose caller gives up (its deadline,
// 1 s) before the server's first answer is kept open behind it, and its
// token released at the server's first sign, not at the bound (5 s): its
// headers, its reset of the stream, its close of the connection (not
// with WithStrictInFlightBound, where only an answer counts). Per(1, 10s):
// the next stream goes 10 s after the release. A stream given up while a
// SendMsg of the caller is inside it, or beyond WithMaxKeptOpen, is
// cancelled at once and held for the bound, as before. A caller that gave
// up with no RecvMsg pending has the stream read for it, so that a reset
// or a close is seen (without that read, the bound decided). The caller has its
// error at its deadline in every case, and a kept-open stream is
// cancelled once the server's sign came.
func TestVirtualStreamKeptOpen(t *testing.T) {
	for _, tc := range []struct {
		name      string
		sign      signKind
		opts      []grpcthrottle.Option
		caller    callerKind
		next      time.Duration // the next stream's departure
		cancelled time.Duration // when the stream's own context ended
		stats     grpcthrottle.Stats
	}{
		{"headers", signHeaders, nil, callerReads, 13 * time.Second, 3 * time.Second,
			grpcthrottle.Stats{HeldPastError: 1, LateAnswers: 1, KeptOpenTotal: 1}},
		{"reset", signReset, nil, callerReads, 13 * time.Second, 3 * time.Second,
			grpcthrottle.Stats{HeldPastError: 1, LateAnswers: 1, KeptOpenTotal: 1}},
		{"connection closed", signClose, nil, callerReads, 13 * time.Second, 3 * time.Second,
			grpcthrottle.Stats{HeldPastError: 1, PeerCloses: 1, KeptOpenTotal: 1}},
		{"headers, strict", signHeaders, []grpcthrottle.Option{grpcthrottle.WithStrictInFlightBound()}, callerReads, 13 * time.Second, 3 * time.Second,
			grpcthrottle.Stats{HeldPastError: 1, LateAnswers: 1, KeptOpenTotal: 1}},
		{"reset, strict: the bound", signReset, []grpcthrottle.Option{grpcthrottle.WithStrictInFlightBound()}, callerReads, 16 * time.Second, 6 * time.Second,
			grpcthrottle.Stats{HeldPastError: 1, KeptOpenTotal: 1}},
		{"no sign: the bound", signNone, nil, callerReads, 16 * time.Second, 6 * time.Second,
			grpcthrottle.Stats{HeldPastError: 1, KeptOpenTotal: 1}},
		{"none kept open", signHeaders, []grpcthrottle.Option{grpcthrottle.WithMaxKeptOpen(0)}, callerReads, 16 * time.Second, time.Second,
			grpcthrottle.Stats{HeldPastError: 1}},
		{"a SendMsg inside", signHeaders, nil, callerSendHeld, 16 * time.Second, time.Second,
			grpcthrottle.Stats{HeldPastError: 1}},
		{"no read pending: headers", signHeaders, nil, callerNeverRead, 13 * time.Second, 3 * time.Second,
			grpcthrottle.Stats{HeldPastError: 1, LateAnswers: 1, KeptOpenTotal: 1}},
		{"no read pending: reset", signReset, nil, callerNeverRead, 13 * time.Second, 3 * time.Second,
			grpcthrottle.Stats{HeldPastError: 1, LateAnswers: 1, KeptOpenTotal: 1}},
		{"no read pending: connection closed", signClose, nil, callerNeverRead, 13 * time.Second, 3 * time.Second,
			grpcthrottle.Stats{HeldPastError: 1, PeerCloses: 1, KeptOpenTotal: 1}},
		{"a read that panics after the give-up: the bound", signPanic, nil, callerReads, 16 * time.Second, 6 * time.Second,
			grpcthrottle.Stats{HeldPastError: 1, KeptOpenTotal: 1}},
		{"no read pending: a read that panics: the bound", signPanic, nil, callerNeverRead, 16 * time.Second, 6 * time.Second,
			grpcthrottle.Stats{HeldPastError: 1, KeptOpenTotal: 1}},
		{"no read pending: reset, strict", signReset, []grpcthrottle.Option{grpcthrottle.WithStrictInFlightBound()}, callerNeverRead, 16 * time.Second, 6 * time.Second,
			grpcthrottle.Stats{HeldPastError: 1, KeptOpenTotal: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				bucket, err := rxthrottle.NewBucket(rxthrottle.Per(1, 10*time.Second))
				require.NoError(t, err)
				it, err := grpcthrottle.New(bucket, append([]grpcthrottle.Option{grpcthrottle.WithInFlightBound(5 * time.Second)}, tc.opts...)...)
				require.NoError(t, err)
				start := time.Now()
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				defer cancel()
				cs, ss := openScript(t, it, ctx, scriptStream{sign: tc.sign, at: start.Add(3 * time.Second), blockSend: tc.caller == callerSendHeld})
				cancelledAt := make(chan time.Duration, 1)
				go func() { <-ss.ctx.Done(); cancelledAt <- time.Since(start) }()
				switch tc.caller {
				case callerSendHeld:
					err = cs.SendMsg(wrapperspb.String("x"))
				case callerReads:
					require.NoError(t, cs.SendMsg(wrapperspb.String("x")))
					err = cs.RecvMsg(new(wrapperspb.StringValue))
				case callerNeverRead:
					require.NoError(t, cs.SendMsg(wrapperspb.String("x")))
					<-ctx.Done()
					synctest.Wait() // the give-up decided
					err = cs.RecvMsg(new(wrapperspb.StringValue))
				}
				assert.Equal(t, codes.DeadlineExceeded, status.Code(err), "err = %v", err)
				assert.Equal(t, time.Second, time.Since(start), "the caller has its error at its deadline")
				assert.Equal(t, codes.DeadlineExceeded, status.Code(cs.RecvMsg(new(wrapperspb.StringValue))), "and after it")

				openFake(t, it, context.Background(), nil)
				assert.Equal(t, tc.next, time.Since(start), "the next stream's departure")
				assert.Equal(t, 1, bucket.Stats().Held, "the next stream's token alone")
				time.Sleep(time.Minute)
				synctest.Wait()
				assert.Equal(t, tc.cancelled, <-cancelledAt, "the kept stream's end")
				want := tc.stats
				want.Sent, want.ErrorsAfterWrite = 2, 1
				assert.Equal(t, want, it.Stats())
			})
		})
	}
}

// A RecvMsg that panics below the interceptor (before the first answer,
// on a stream that may be kept open) while its caller waits: the panic
// goes on on the caller's goroutine, as it would have without the
// interceptor's own read, and the token lingers (what the stream did is
// unknown), as for a panicking unary invoker.
func TestVirtualStreamRecvPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bucket, err := rxthrottle.NewBucket(rxthrottle.Per(1, 10*time.Second))
		require.NoError(t, err)
		it, err := grpcthrottle.New(bucket, grpcthrottle.WithInFlightBound(5*time.Second))
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cs, _ := openScript(t, it, ctx, scriptStream{sign: signPanic, at: time.Now().Add(3 * time.Second)})
		require.NoError(t, cs.SendMsg(wrapperspb.String("x")))
		assert.PanicsWithValue(t, "boom", func() { _ = cs.RecvMsg(new(wrapperspb.StringValue)) })
		assert.Equal(t, 1, bucket.Stats().Held)
		assert.Equal(t, grpcthrottle.Stats{Sent: 1, ErrorsAfterWrite: 1, HeldPastError: 1, HoldingPastError: 1}, it.Stats())
	})
}
