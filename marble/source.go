package marble

import (
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/reactivex/rxgo/v2"
)

// source is the state behind an observable made by Cold or Hot.
type source struct {
	s      *Scheduler
	hot    bool
	caller string
	seq    uint64        // creation order: the tie-break for a hot source's emissions
	events []sourceEvent // cold: frames after the subscription; hot: frames after ^

	// The fields below require that s.mu is held.
	subs   []*subscription // hot: the current subscribers
	ended  bool            // hot: its | or # has been emitted
	ending sourceEvent     // hot: that | or #
	log    []subscriptionRecord
}

// sourceEvent is one notification of a source marble.
type sourceEvent struct {
	offset time.Duration // since the source's frame 0 (negative: before a hot ^)
	kind   Kind
	item   rxgo.Item
}

// subscriptionRecord is one subscription to a source, for
// ExpectSubscriptions.
type subscriptionRecord struct {
	subscribed   time.Duration
	unsubscribed time.Duration // valid if ended
	ended        bool
}

// Cold returns an observable that plays marble anew for each subscriber,
// from the instant it subscribes: frame 0 of the marble is the moment of
// Observe. values maps each value rune of the marble (any rune that is not
// syntax: "a", "1", "🙈") to the value it stands for; with a nil map, each
// stands for itself as a one-rune string. # stands for ErrMarble unless
// WithError says otherwise. A cold marble cannot hold ^ or !.
//
// A malformed marble fails the test (Fatalf) with the column at fault.
func (s *Scheduler) Cold(marble string, values map[string]any, opts ...MarbleOption) rxgo.Observable {
	s.rep.Helper()
	return s.newSource(marble, values, opts, false)
}

// Hot returns an observable whose marble plays once, on the run's clock,
// whoever listens: frame 0 is the ^ of the marble (or its first column if
// there is no ^), which is the start of Run. A subscriber gets only the
// events from the instant it subscribes on (events before ^ happened
// before the test and nobody sees them); one that subscribes after the
// marble's | or # gets that | or # at once. values and # are read as by
// Cold. A hot marble cannot hold !.
func (s *Scheduler) Hot(marble string, values map[string]any, opts ...MarbleOption) rxgo.Observable {
	s.rep.Helper()
	return s.newSource(marble, values, opts, true)
}

func (s *Scheduler) newSource(marble string, values map[string]any, opts []MarbleOption, hot bool) rxgo.Observable {
	s.rep.Helper()
	src, err := s.buildSource(marble, values, opts, hot)
	if err != nil {
		s.rep.Fatalf("%v", err)
		return rxgo.Thrown(err)
	}
	// Defer runs the producer once per Observe, on a goroutine of the
	// subscriber (inside the bubble); WithContext(s.ctx) ends it with Run
	// if no subscriber context ends it first.
	obs := rxgo.Defer([]rxgo.Producer{src.produce}, rxgo.WithContext(s.ctx))
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.flushing {
		s.rep.Errorf("marble: source created after fn returned; create sources inside fn")
	}
	src.seq = s.nextSeq()
	s.sources[obs] = src
	if hot {
		s.hot = append(s.hot, src)
	}
	return obs
}

func (s *Scheduler) buildSource(marble string, values map[string]any, opts []MarbleOption, hot bool) (*source, error) {
	m, err := parseSource(marble, s.frame, opts, hot, "only a hot source has a subscription point; a cold one starts when subscribed")
	if err != nil {
		return nil, err
	}
	src := &source{s: s, hot: hot, caller: location(), events: make([]sourceEvent, 0, len(m.tl.Events))}
	for i, e := range m.tl.Events {
		ev := sourceEvent{offset: e.Time(s.frame) - m.origin, kind: e.Kind}
		switch e.Kind {
		case Next:
			v, err := lookup(marble, m.cols[i], e.Symbol, values)
			if err != nil {
				return nil, err
			}
			ev.item = rxgo.Of(v)
		case Error:
			ev.item = rxgo.Error(m.cfg.err)
		}
		src.events = append(src.events, ev)
	}
	s.mu.Lock()
	s.reach(m.tl.endAt(s.frame) - m.origin)
	s.mu.Unlock()
	return src, nil
}

// sourceMarble is a source marble parsed and checked by parseSource.
type sourceMarble struct {
	cfg    marbleConfig
	tl     Timeline
	cols   []int         // each event's column
	origin time.Duration // the time of frame 0: a hot marble's ^, else 0
}

// parseSource reads a source marble of Cold, Hot or a channel source with
// its options, and checks what holds for every source: no ! in it, and no
// ^ in a cold one. coldStart ends the message for a ^ in a cold marble: it
// says when a cold source starts, which differs between an observable
// (when subscribed) and a channel (when made).
func parseSource(marble string, frame time.Duration, opts []MarbleOption, hot bool, coldStart string) (sourceMarble, error) {
	cfg, err := buildMarbleConfig(opts)
	if err != nil {
		return sourceMarble{}, err
	}
	tl, cols, err := parse(marble, frame)
	if err != nil {
		return sourceMarble{}, err
	}
	kind := "a cold"
	if hot {
		kind = "a hot"
	}
	if tl.Unsubscribe != NoFrame {
		return sourceMarble{}, &SyntaxError{Marble: marble, Column: indexOf(marble, '!') + 1, Msg: fmt.Sprintf("! in %s marble (only a subscription marble unsubscribes)", kind)}
	}
	origin, ok := tl.subscribeAt(frame)
	if !ok {
		origin = 0
	} else if !hot {
		return sourceMarble{}, &SyntaxError{Marble: marble, Column: indexOf(marble, '^') + 1, Msg: "^ in a cold marble (" + coldStart + ")"}
	}
	return sourceMarble{cfg: cfg, tl: tl, cols: cols, origin: origin}, nil
}

// lookup returns the value symbol stands for: values[string(symbol)], or
// the symbol itself as a string if values is nil.
func lookup(marble string, col int, symbol rune, values map[string]any) (any, error) {
	if values == nil {
		return string(symbol), nil
	}
	v, ok := values[string(symbol)]
	if !ok {
		msg := fmt.Sprintf("value %q missing from the values map", string(symbol))
		if k := longerKey(values, symbol); k != "" {
			msg += fmt.Sprintf(" (its key %s is %d runes; a key is one rune, as each rune of a marble is one value)", quote(k), utf8.RuneCountInString(k))
		}
		return nil, &SyntaxError{Marble: marble, Column: col + 1, Msg: msg}
	}
	return v, nil
}

// longerKey returns a key of values that starts with symbol but has more
// runes (an emoji written with a variation selector), or "".
func longerKey(values map[string]any, symbol rune) string {
	for k := range values {
		if r, n := utf8.DecodeRuneInString(k); r == symbol && n < len(k) {
			return k
		}
	}
	return ""
}

// start schedules a hot source's emissions; it requires that s.mu is held.
// Events before ^ happened before the test: nobody saw their values, but a
// | or # there means the source has already ended.
func (src *source) start() {
	for i, e := range src.events {
		if e.offset >= 0 {
			src.emitFrom(i, nil)
			return
		}
		if e.kind != Next {
			src.ended, src.ending = true, e
		}
	}
}

// emitFrom schedules the emission of the events that share event i's
// instant: to sub for a cold source, to every current subscriber for a hot
// one (sub nil). It requires that s.mu is held.
func (src *source) emitFrom(i int, sub *subscription) {
	s := src.s
	offset := src.events[i].offset
	at, seq := offset, src.seq<<32
	if sub != nil {
		at, seq = sub.subscribed+offset, sub.seq
	}
	s.schedule(at, classEmission, seq, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		j := i
		for ; j < len(src.events) && src.events[j].offset == offset; j++ {
			e := pendingEvent{sourceEvent: src.events[j], at: at}
			if sub != nil {
				sub.deliver(e)
				continue
			}
			for _, hs := range src.subs {
				hs.deliver(e)
			}
			if e.kind != Next {
				src.ended, src.ending = true, e.sourceEvent
				src.subs = nil
			}
		}
		if j < len(src.events) && (sub == nil || sub.active) {
			src.emitFrom(j, sub)
		}
	})
}
