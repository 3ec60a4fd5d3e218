package marble

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// How ExpectChan reads a channel (chan_expect.go): from its ^ to its !,
// until the close or WithIdle frames past the marbles, and its failures.

// ExpectChan reads from its ^: before it, a sender on an unbuffered
// channel blocks, and values sent into a buffer wait; both are recorded
// at ^.
func TestChanExpectFromItsSubscription(t *testing.T) {
	Run(t, func(s *Scheduler) {
		unbuffered := make(chan string)
		go func() {
			unbuffered <- "a" // at frame 0: blocks until frame 3
			time.Sleep(s.Frame())
			unbuffered <- "b"
			close(unbuffered)
		}()
		ExpectChan(s, unbuffered, "---^").ToBe("---a(b|)", nil)

		buffered := make(chan string, 2)
		go func() {
			buffered <- "a"
			time.Sleep(s.Frame())
			buffered <- "b"
			close(buffered)
		}()
		ExpectChan(s, buffered, "---^").ToBe("---(ab|)", nil)
	})
}

// At ! ExpectChan stops receiving; a sender that watches its context (here
// cancelled at the same frame) ends, and nothing leaks.
func TestChanExpectStopsReadingAtItsUnsubscription(t *testing.T) {
	Run(t, func(s *Scheduler) {
		ctx, cancel := context.WithCancel(s.Context())
		time.AfterFunc(4*s.Frame(), cancel)
		src := ColdChan[string](s, "a-b-c-d|", nil)
		ExpectChan(s, relay(ctx, src, 0), "^---!").ToBe("a-b-", nil)
	})
	// A sender that only stops at the end of Run: it is blocked after !,
	// Run's end unblocks it.
	Run(t, func(s *Scheduler) {
		ExpectChan(s, relay(s.Context(), ColdChan[string](s, "a-b-c-d|", nil), 0), "^--!").ToBe("a-b", nil)
	})
}

// A channel never closed is read until WithIdle frames after the last
// event, and Run's end closes a source channel still open, so a reader
// ranging over it ends.
func TestChanNeverClosed(t *testing.T) {
	var ended time.Duration
	Run(t, func(s *Scheduler) {
		ch := make(chan string)
		go func() {
			ch <- "a"
			time.Sleep(2 * s.Frame())
			ch <- "b"
			<-s.Context().Done()
			ended = s.elapsed()
		}()
		ExpectChan(s, ch).ToBe("a-b", nil)
	}, WithIdle(7))
	assert.Equal(t, 10*time.Millisecond, ended, "watched until 7 frames after the expected marble's end")

	msgs := runFake(t, func(s *Scheduler) {
		ExpectChan(s, relay(s.Context(), ColdChan[string](s, "a-b", nil), 0)).ToBe("a-b", nil)
		ExpectChan(s, relay(s.Context(), HotChan[string](s, "^a-b", nil), 0)).ToBe("-a-b", nil)
	})
	assert.Empty(t, msgs)
}

// A sender that sends after closing panics in its own goroutine (recovered
// there); ExpectChan has recorded the close and nothing after it.
func TestChanSendAfterClose(t *testing.T) {
	var recovered any
	Run(t, func(s *Scheduler) {
		ch := make(chan string, 1)
		go func() {
			defer func() { recovered = recover() }()
			ch <- "a"
			close(ch)
			ch <- "b"
		}()
		ExpectChan(s, ch).ToBe("(a|)", nil)
	})
	assert.NotNil(t, recovered)
}

// The failure output is ExpectObservable's.
func TestChanFailureOutput(t *testing.T) {
	obs := runFake(t, func(s *Scheduler) {
		s.ExpectObservable(s.Cold("a-b-c|", nil)).ToBe("a-bc-|", nil)
	})
	ch := runFake(t, func(s *Scheduler) {
		ExpectChan(s, ColdChan[string](s, "a-b-c|", nil)).ToBe("a-bc-|", nil)
	})
	require.Len(t, obs, 1)
	require.Len(t, ch, 1)
	assert.Equal(t, stripCaller(obs[0]), stripCaller(ch[0]))
	assert.Regexp(t, `^chan_expect_test\.go:\d+: marble: timelines differ`, ch[0], "reported at the line of ToBe")
	assert.Contains(t, ch[0], "timelines differ at frame 3\n  want: a-bc-|\n  got : a-b-c|\n           ^")
}

// stripCaller removes the file:line of a failure message.
func stripCaller(msg string) string {
	return regexp.MustCompile(`\w+_test\.go:\d+`).ReplaceAllString(msg, "")
}
