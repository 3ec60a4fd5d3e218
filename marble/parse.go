package marble

import (
	"fmt"
	"math"
	"time"
)

// SyntaxError reports a malformed marble and where it goes wrong.
type SyntaxError struct {
	// Marble is the whole marble string.
	Marble string
	// Column is the 1-based position, in characters, of the offending
	// symbol.
	Column int
	// Msg says what is wrong.
	Msg string
}

// Error returns the message in the form
// `marble: "a-(b-c|": unclosed group at column 3`.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("marble: %s: %s at column %d", quote(e.Marble), e.Msg, e.Column)
}

// maxDuration bounds the virtual time a marble may span, so that frame
// arithmetic (frames × frame length, plus offsets) cannot overflow.
const maxDuration = time.Duration(math.MaxInt64 / 4)

// Parse parses a marble diagram whose frames last frame each (frame only
// matters to convert time progressions such as "10ms " into frames).
//
// Parse checks the syntax that is common to every use of a marble; Cold,
// Hot, ExpectObservable and ToBe add their own rules (no ^ in a cold
// marble, no ! outside subscription marbles, and so on). Errors are
// *SyntaxError values that name the column.
func Parse(marble string, frame time.Duration) (Timeline, error) {
	tl, _, err := parse(marble, frame)
	return tl, err
}

// parse is Parse that also returns the 0-based column of each event, so
// that later checks (a letter missing from the values map) can name it.
func parse(marble string, frame time.Duration) (Timeline, []int, error) {
	if frame <= 0 {
		return Timeline{}, nil, fmt.Errorf("marble: frame must be positive, got %v", frame)
	}
	p := parser{
		marble:    marble,
		src:       []rune(marble),
		frameLen:  frame,
		maxFrames: int64(maxDuration / frame),
		group:     -1,
		tl:        Timeline{Subscribe: NoFrame, Unsubscribe: NoFrame},
	}
	if i := invalidUTF8(marble); i >= 0 {
		return Timeline{}, nil, &SyntaxError{Marble: marble, Column: i + 1, Msg: "invalid UTF-8"}
	}
	// Bracket structure first: an unclosed group explains the rest of
	// the marble better than whatever symbol comes next inside it.
	if err := p.checkGroups(); err != nil {
		return Timeline{}, nil, err
	}
	if n := p.countEvents(); n > 0 {
		p.tl.Events, p.cols = make([]Event, 0, n), make([]int, 0, n)
	}
	if err := p.parse(); err != nil {
		return Timeline{}, nil, err
	}
	return p.tl, p.cols, nil
}

type parser struct {
	marble    string
	src       []rune
	frameLen  time.Duration
	maxFrames int64

	frame      int64         // frame of the next column
	offset     time.Duration // how far past frame the next column is
	group      int64         // frame of the open group, or -1
	groupOff   time.Duration // offset of the open group
	groupCol   int           // column of the open group's (
	groupSize  int           // symbols in the open group
	terminated rune          // '|' or '#' once the timeline has ended, else 0
	tl         Timeline
	cols       []int // column of each event of tl
}

func (p *parser) errorf(i int, format string, args ...any) error {
	return &SyntaxError{Marble: p.marble, Column: i + 1, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) checkGroups() error {
	open := -1
	for i, r := range p.src {
		switch r {
		case '(':
			if open >= 0 {
				return p.errorf(i, "nested group (a group is one frame; it cannot hold another)")
			}
			open = i
		case ')':
			if open < 0 {
				return p.errorf(i, "unbalanced ) without a group to close")
			}
			open = -1
		}
	}
	if open >= 0 {
		return p.errorf(open, "unclosed group")
	}
	return nil
}

// countEvents returns an upper bound of the number of events, to size the
// slices once: long marbles (a 100,000-event run) would spend most of
// their parsing time growing them.
func (p *parser) countEvents() int {
	n := 0
	for _, r := range p.src {
		if r == '|' || r == '#' || isValue(r) {
			n++
		}
	}
	return n
}

// at returns the position of a symbol written now: the group's inside a
// group, the current one otherwise.
func (p *parser) at() (int64, time.Duration) {
	if p.group >= 0 {
		return p.group, p.groupOff
	}
	return p.frame, p.offset
}

// advance moves past a symbol that takes one frame.
func (p *parser) advance(i int) error {
	if p.frame >= p.maxFrames {
		return p.errorf(i, "marble longer than %d frames", p.maxFrames)
	}
	p.frame++
	return nil
}

func (p *parser) parse() error {
	for i := 0; i < len(p.src); i++ {
		r := p.src[i]
		switch {
		case r == ' ':
			// Spaces only align marbles; they take no time.
			continue
		case r == '-':
			if p.group >= 0 {
				return p.errorf(i, "- inside a group (a group is a single frame)")
			}
		case r == '(':
			p.group, p.groupOff, p.groupCol, p.groupSize = p.frame, p.offset, i, 0
		case r == ')':
			if p.groupSize == 0 {
				return p.errorf(p.groupCol, "empty group")
			}
			p.group = -1
		case r == '^':
			if p.tl.Subscribe != NoFrame {
				return p.errorf(i, "second ^ (a marble has at most one subscription point)")
			}
			p.tl.Subscribe, p.tl.SubscribeOffset = p.at()
			p.groupSize++
		case r == '!':
			if p.tl.Unsubscribe != NoFrame {
				return p.errorf(i, "second ! (a marble has at most one unsubscription)")
			}
			p.tl.Unsubscribe, p.tl.UnsubscribeOffset = p.at()
			p.groupSize++
		case r == '|' || r == '#':
			if err := p.event(i, r); err != nil {
				return err
			}
		default:
			if isDigit(r) && p.progressionAt(i) {
				n, err := p.progression(i)
				if err != nil {
					return err
				}
				i += n - 1 // the loop's i++ steps over the trailing space
				continue
			}
			// Any other rune is a value, as in rxjs, unless nobody could
			// see it in the marble.
			if msg := invisible(r); msg != "" {
				return p.errorf(i, "%s", msg)
			}
			if err := p.event(i, r); err != nil {
				return err
			}
		}
		if err := p.advance(i); err != nil {
			return err
		}
	}
	sub, okSub := p.tl.subscribeAt(p.frameLen)
	unsub, okUnsub := p.tl.unsubscribeAt(p.frameLen)
	if okSub && okUnsub && unsub < sub {
		return p.errorf(p.indexOf('!'), "! before ^ (unsubscribed before subscribing)")
	}
	p.tl.End, p.tl.EndOffset = p.frame, p.offset
	return nil
}

func (p *parser) indexOf(r rune) int { return indexOf(p.marble, r) }

// indexOf returns the 0-based column of the first r in marble, or 0.
func indexOf(marble string, r rune) int {
	for i, c := range []rune(marble) {
		if c == r {
			return i
		}
	}
	return 0
}

// event records a value, | or # written at column i.
func (p *parser) event(i int, r rune) error {
	switch p.terminated {
	case '|':
		return p.errorf(i, "%q after completion |", r)
	case '#':
		return p.errorf(i, "%q after error #", r)
	}
	frame, offset := p.at()
	e := Event{Frame: frame, Offset: offset, Kind: Next, Symbol: r}
	switch r {
	case '|':
		e.Kind, e.Symbol = Complete, 0
		p.terminated = r
	case '#':
		e.Kind, e.Symbol = Error, 0
		p.terminated = r
	}
	p.tl.Events = append(p.tl.Events, e)
	p.cols = append(p.cols, i)
	p.groupSize++
	return nil
}
