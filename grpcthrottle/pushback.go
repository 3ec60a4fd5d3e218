package grpcthrottle

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// PushbackHeader is the trailer in which a gRPC server may say, in
// milliseconds, when to try again (gRFC A6, the one grpc-go's own retries
// read): a non-negative integer.
const PushbackHeader = "grpc-retry-pushback-ms"

// ErrBadPushback is wrapped by the errors OnBadPushback receives: a retry
// delay the Interceptor could not use (ignored) or had to cap.
var ErrBadPushback = errors.New("grpcthrottle: unusable retry delay")

// pushbackFor returns the instant until which st (and its trailer) asks
// the client to hold back, as of now; zero if it asks for nothing. Only
// RESOURCE_EXHAUSTED and UNAVAILABLE pause, as only 429 and 503 do in
// httpthrottle: a retry delay means "the server is not ready", and the
// other codes do not say so. Of a RetryInfo and the pushback trailer, the
// later end wins. Unusable values go to bad, and are ignored.
func pushbackFor(st *status.Status, trailer metadata.MD, now time.Time, bad func(error)) time.Time {
	if st.Code() != codes.ResourceExhausted && st.Code() != codes.Unavailable {
		return time.Time{}
	}
	var until time.Time
	later := func(t time.Time) {
		if t.After(until) {
			until = t
		}
	}
	for _, d := range st.Details() {
		ri, ok := d.(*errdetails.RetryInfo)
		if !ok || ri.GetRetryDelay() == nil {
			continue
		}
		delay := ri.GetRetryDelay()
		if err := delay.CheckValid(); err != nil || delay.GetSeconds() < 0 || delay.GetNanos() < 0 {
			bad(fmt.Errorf("%w: RetryInfo retry_delay %ds%dns of %s: not a valid non-negative duration", ErrBadPushback, delay.GetSeconds(), delay.GetNanos(), st.Code()))
			continue
		}
		later(now.Add(delay.AsDuration())) // AsDuration saturates
	}
	for _, v := range trailer.Get(PushbackHeader) {
		ms, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		switch {
		case err != nil && !errors.Is(err, strconv.ErrRange):
			bad(fmt.Errorf("%w: trailer %s %q of %s: not an integer", ErrBadPushback, PushbackHeader, v, st.Code()))
		case ms < 0:
			// gRFC A6: a negative pushback means "do not retry"; it asks for
			// no pause.
		case ms > math.MaxInt64/int64(time.Millisecond) || err != nil:
			later(now.Add(time.Duration(math.MaxInt64))) // capped later
		default:
			later(now.Add(time.Duration(ms) * time.Millisecond))
		}
	}
	return until
}
