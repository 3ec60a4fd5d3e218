package marble

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/reactivex/rxgo/v2"
)

// What the harness can tell about a pipeline built outside Run's fn. Such
// a pipeline runs on real time, outside the synctest bubble: its events
// never reach virtual time (an empty got line), it may have ended before
// the test looked (a lone | at the subscription), a goroutine of the test
// blocked on it is not one synctest can wait for (Run hangs), and a source
// of a Run that has ended belongs to another bubble. The harness says so
// in each case.

// outsideHint explains a got timeline that is empty, or a lone end at the
// instant of subscription, when the expected one is not: the usual
// symptom of a pipeline built outside fn. It returns "" for other
// timelines. It requires that s.mu is not held.
func (e *Expectation) outsideHint(got []record) string {
	s := e.s
	empty := len(got) == 0
	endAtOnce := len(got) == 1 && got[0].kind != Next && got[0].at == e.sub
	if !empty && !endAtOnce {
		return ""
	}
	s.mu.Lock()
	sources, subscribed := len(s.sources), 0
	for _, src := range s.sources {
		if len(src.log) > 0 {
			subscribed++
		}
	}
	s.mu.Unlock()
	var b strings.Builder
	if empty {
		fmt.Fprintf(&b, "  hint: nothing at all arrived while the pipeline was subscribed (from %s until the run ended at %s).", when(e.sub, s.frame), when(s.elapsed(), s.frame))
	} else {
		fmt.Fprintf(&b, "  hint: the pipeline ended at once, at %s when it was subscribed, without a value.", when(e.sub, s.frame))
	}
	switch {
	case e.read != nil:
		b.WriteString(" A channel, timer or goroutine made outside fn (before Run, in a package variable or an init function) is outside the synctest bubble and runs on real time: make it inside fn.")
	case sources == 0:
		b.WriteString(" It reads no Cold or Hot source of this Run. An observable made outside fn (before Run, in a package variable or an init function) runs on real time, outside the synctest bubble, and nothing it does reaches virtual time (rxgo's Interval, Timer, FromChannel, Create and Merge start when they are built): build the pipeline and its sources inside fn.")
	case subscribed == 0:
		fmt.Fprintf(&b, " None of the %d Cold or Hot sources of this Run was subscribed: the pipeline does not read them (is it built on observables made before Run?).", sources)
	default:
		b.WriteString(" If part of the pipeline was made outside fn (before Run, in a package variable), it runs on real time and its events never reach virtual time: build it inside fn.")
	}
	return b.String()
}

// errForeignSource is what a Cold or Hot source emits when it is observed
// after its own Run has ended (it belongs to that Run's bubble).
func (src *source) errForeignSource() error {
	kind := "Cold"
	if src.hot {
		kind = "Hot"
	}
	return fmt.Errorf("marble: this %s source, made at %s, belongs to a Run that has ended; make sources inside the fn of the Run that observes them", kind, src.caller)
}

// produceForeign is produce for a source whose Run has ended: it touches
// nothing of that Run (its channels belong to another bubble) and emits
// the error that says what is wrong.
func (src *source) produceForeign(ctx context.Context, next chan<- rxgo.Item) {
	select {
	case next <- rxgo.Error(src.errForeignSource()):
	case <-ctx.Done():
	}
}

// progress is what the driver publishes for the watchdog, which runs
// outside the bubble.
type progress struct {
	steps atomic.Int64 // incremented by the driver as it goes
	ended atomic.Bool  // the Run is over: its sources are foreign to others
}

// step records that the driver moved.
func (p *progress) step() { p.steps.Add(1) }

// watchStall runs outside the bubble until done is closed. A goroutine of
// the bubble blocked on something made outside it (a channel, an eager
// observable made before Run) is not durably blocked, so synctest can
// neither move time nor say the bubble is idle: Run hangs. If the driver
// has not moved for stallAfter of real time (defaultStall), watchStall
// logs, once, what is likely wrong; the test still hangs until go test's
// timeout, whose goroutine dump shows where.
func watchStall(rep reporter, p *progress, stallAfter time.Duration, done <-chan struct{}) {
	ticker := time.NewTicker(stallAfter / 4)
	defer ticker.Stop()
	last, since := p.steps.Load(), time.Now()
	for {
		select {
		case <-done:
			return
		case now := <-ticker.C:
			if n := p.steps.Load(); n != last {
				last, since = n, now
				continue
			}
			if now.Sub(since) < stallAfter {
				continue
			}
			rep.Logf("marble: Run has not moved for %v of real time: a goroutine of the test is blocked on something made outside Run's fn (a channel, a timer, a mutex, or an observable that starts when built, such as rxgo's FromChannel, Interval, Timer or Merge, made before Run or in a package variable), which synctest cannot wait for. Make it inside fn. The test hangs until go test's -timeout, whose goroutine dump shows where.", stallAfter)
			return
		}
	}
}
