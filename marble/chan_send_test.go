package marble

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// How a channel source sends (chan_send.go): a cold one's values wait for a
// busy receiver, a hot one's are dropped; groups and instants in order.

// A receiver that takes 3 frames per value: the cold channel's values wait
// for it, in order, and none is lost; the close comes after the last.
func TestChanColdWaitsForItsReceiver(t *testing.T) {
	for _, buffer := range []int{0, 1, 10} {
		Run(t, func(s *Scheduler) {
			src := ColdChan[string](s, "(abc)d|", nil, WithBuffer(buffer))
			out := relay(s.Context(), src, 3*s.Frame())
			ExpectChan(s, out).ToBe("---a--b--c--(d|)", nil)
		})
	}
}

// A hot channel sends on the clock: a value that finds its receiver busy
// (and no room in the buffer) is dropped, and the log says so.
func TestChanHotDropsWhatNobodyReceives(t *testing.T) {
	msgs := runFake(t, func(s *Scheduler) {
		// b at 0 is taken at once and goes out at 3 (3 frames per
		// value); c at 2 comes while the relay sleeps: dropped; d at 4
		// is taken, out at 7; e at 6 is dropped.
		src := HotChan[string](s, "b-c-d-e-|", nil)
		ExpectChan(s, relay(s.Context(), src, 3*s.Frame())).ToBe("---b---d|", nil)
	})
	require.Len(t, msgs, 2)
	assert.Regexp(t, regexpQuote("chan_send_test.go:LINE: marble: HotChan dropped c at frame 2: no receiver was ready"), msgs[0])
	assert.Regexp(t, regexpQuote("chan_send_test.go:LINE: marble: HotChan dropped e at frame 6: no receiver was ready"), msgs[1])
	// With a buffer, c and e wait in it; the | closes the channel at 8,
	// and e, still in the buffer, is received after it.
	Run(t, func(s *Scheduler) {
		src := HotChan[string](s, "b-c-d-e-|", nil, WithBuffer(1))
		ExpectChan(s, relay(s.Context(), src, 3*s.Frame())).ToBe("---b--c--d--(e|)", nil)
	})
	// ^ is frame 0; values before it are not sent.
	Run(t, func(s *Scheduler) {
		src := HotChan[string](s, "a-^b-c|", nil)
		ExpectChan(s, src).ToBe("-b-c|", nil)
	})
	// A | before ^: closed from the start.
	Run(t, func(s *Scheduler) {
		ExpectChan(s, HotChan[string](s, "a|-^--", nil)).ToBe("|", nil)
	})
	msgs = runFake(t, func(s *Scheduler) {
		src := HotChan[string](s, "-a", nil, WithBuffer(1))
		ExpectChan(s, src, "---^").ToBe("---a", nil)
	})
	assert.Empty(t, msgs, "a buffered value waits for the reader")
}

// A group's values reach a receiver one by one, each fully processed
// before the next (here: forwarded on another channel), on a hot channel
// too, where a receiver still busy with the one before would drop it.
func TestChanGroupOneByOne(t *testing.T) {
	Run(t, func(s *Scheduler) {
		ExpectChan(s, relay(s.Context(), HotChan[string](s, "(abc)|", nil), 0)).ToBe("(abc)|", nil)
		ExpectChan(s, relay(s.Context(), ColdChan[string](s, "(abc)|", nil), 0)).ToBe("(abc)|", nil)
	})
}

// At one instant, channel sources send in the order they were made, as
// observable sources do.
func TestChanOrderWithinAnInstant(t *testing.T) {
	Run(t, func(s *Scheduler) {
		first := ColdChan[string](s, "-a-----|", nil)
		second := ColdChan[string](s, "-b-----|", nil)
		out := make(chan string)
		merge := func(in <-chan string, done chan<- struct{}) {
			for v := range in {
				out <- v
			}
			done <- struct{}{}
		}
		done := make(chan struct{})
		go merge(second, done)
		go merge(first, done)
		go func() {
			<-done
			<-done
			close(out)
		}()
		ExpectChan(s, out).ToBe("-(ab)--|", nil)
	})
}

// Code under test that stops reading a source channel: a cold source's
// values wait for it until Run ends (then the channel is closed and its
// goroutine ends), a hot source's are dropped; nothing leaks either way.
func TestChanSourceWhoseReaderStops(t *testing.T) {
	firstOnly := func(in <-chan string) <-chan string {
		out := make(chan string)
		go func() {
			defer close(out)
			out <- <-in
		}()
		return out
	}
	Run(t, func(s *Scheduler) {
		ExpectChan(s, firstOnly(ColdChan[string](s, "a-b-c|", nil))).ToBe("(a|)", nil)
	})
	msgs := runFake(t, func(s *Scheduler) {
		ExpectChan(s, firstOnly(HotChan[string](s, "a-b|", nil))).ToBe("(a|)", nil)
	})
	require.Len(t, msgs, 1)
	assert.Contains(t, msgs[0], "marble: HotChan dropped b at frame 2: no receiver was ready")
}
