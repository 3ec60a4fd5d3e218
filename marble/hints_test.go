package marble

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/reactivex/rxgo/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A source of a Run that has ended, observed in another Run, emits an
// error that says so, instead of crashing the test binary on a channel of
// the other bubble.
func TestSourceOfAnEndedRun(t *testing.T) {
	var old rxgo.Observable
	Run(t, func(s *Scheduler) {
		old = s.Cold("a|", nil)
		s.ExpectObservable(old).ToBe("a|", nil)
	})
	msgs := runFake(t, func(s *Scheduler) {
		s.ExpectObservable(old).ToBe("a|", nil)
	})
	require.Len(t, msgs, 1)
	assert.Regexp(t, `only in got:\n    frame 0: # = marble: this Cold source, made at hints_test\.go:\d+, belongs to a Run that has ended; make sources inside the fn of the Run that observes them`, msgs[0])
}

// An empty got line, or a lone end at the subscription, says what is
// likely wrong.
func TestOutsideHints(t *testing.T) {
	closed := make(chan rxgo.Item) // made outside the bubble
	close(closed)
	closedChan := make(chan string)
	close(closedChan)
	silent := func(s *Scheduler) rxgo.Observable { // honours its context, emits nothing
		return rxgo.Defer([]rxgo.Producer{func(ctx context.Context, _ chan<- rxgo.Item) { <-ctx.Done() }})
	}
	tests := []struct {
		name string
		fn   func(s *Scheduler)
		want string
	}{
		{"outside observable", func(s *Scheduler) { s.ExpectObservable(rxgo.FromChannel(closed)).ToBe("-a|", nil) },
			"  hint: the pipeline ended at once, at frame 0 when it was subscribed, without a value. It reads no Cold or Hot source of this Run. An observable made outside fn"},
		{"sources not read", func(s *Scheduler) {
			s.Cold("a|", nil)
			s.ExpectObservable(rxgo.FromChannel(closed), "--^").ToBe("---a|", nil)
		}, "  hint: the pipeline ended at once, at frame 2 when it was subscribed, without a value. None of the 1 Cold or Hot sources of this Run was subscribed"},
		{"nothing arrived", func(s *Scheduler) { s.ExpectObservable(silent(s)).ToBe("-a|", nil) },
			"  hint: nothing at all arrived while the pipeline was subscribed (from frame 0 until the run ended at frame 1003). It reads no Cold or Hot source"},
		{"nothing arrived from sources", func(s *Scheduler) {
			src := s.Cold("a|", nil)
			out := rxgo.Defer([]rxgo.Producer{func(ctx context.Context, _ chan<- rxgo.Item) {
				for range src.Observe(rxgo.WithContext(ctx)) {
				}
				<-ctx.Done()
			}})
			s.ExpectObservable(out).ToBe("a|", nil)
		}, "  hint: nothing at all arrived while the pipeline was subscribed (from frame 0 until the run ended at frame 1002). If part of the pipeline was made outside fn"},
		{"outside channel", func(s *Scheduler) { ExpectChan(s, (<-chan string)(closedChan)).ToBe("-a|", nil) },
			"  hint: the pipeline ended at once, at frame 0 when it was subscribed, without a value. A channel, timer or goroutine made outside fn"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msgs := runFake(t, tt.fn)
			require.Len(t, msgs, 1)
			assert.Contains(t, msgs[0], "\n"+tt.want)
		})
	}
	// No hint when got has something to show.
	msgs := runFake(t, func(s *Scheduler) { s.ExpectObservable(s.Cold("a|", nil)).ToBe("-a|", nil) })
	require.Len(t, msgs, 1)
	assert.NotContains(t, msgs[0], "  hint:")
}

type stallOption time.Duration

func (o stallOption) applyRun(c *runConfig) error { c.stall = time.Duration(o); return nil }

// A goroutine of the bubble blocked on a channel made outside it stops
// virtual time for good: Run says why after a while of real time.
func TestStallIsExplained(t *testing.T) {
	outside := make(chan rxgo.Item)
	f := &fakeT{}
	go func() {
		// Release the run once the watchdog has spoken.
		for {
			time.Sleep(10 * time.Millisecond)
			f.mu.Lock()
			said := len(f.msgs) > 0 && strings.Contains(f.msgs[0], "Run has not moved")
			f.mu.Unlock()
			if said {
				close(outside)
				return
			}
		}
	}()
	run(t, f, func(s *Scheduler) {
		s.ExpectObservable(rxgo.FromChannel(outside)).ToBe("a|", nil)
	}, []RunOption{stallOption(100 * time.Millisecond)})
	require.NotEmpty(t, f.msgs)
	assert.Equal(t, "log: marble: Run has not moved for 100ms of real time: a goroutine of the test is blocked on something made outside Run's fn (a channel, a timer, a mutex, or an observable that starts when built, such as rxgo's FromChannel, Interval, Timer or Merge, made before Run or in a package variable), which synctest cannot wait for. Make it inside fn. The test hangs until go test's -timeout, whose goroutine dump shows where.", f.msgs[0])
}
