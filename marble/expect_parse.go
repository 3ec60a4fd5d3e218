package marble

import "time"

// parseSubscription parses a subscription marble: only -, ^, ! and
// spaces (and time progressions).
func (s *Scheduler) parseSubscription(marble string) (Timeline, error) {
	tl, cols, err := parse(marble, s.frame)
	if err != nil {
		return tl, err
	}
	if len(tl.Events) > 0 {
		return tl, &SyntaxError{Marble: marble, Column: cols[0] + 1, Msg: "notification in a subscription marble (it holds only - ^ ! and spaces)"}
	}
	s.mu.Lock()
	s.reach(tl.endAt(s.frame))
	s.mu.Unlock()
	return tl, nil
}

// parseExpected reads ToBe's marble: the notifications it expects, with
// their instants since the start of Run, and the instant it ends.
func (s *Scheduler) parseExpected(api, marble string, values map[string]any, opts []MarbleOption) ([]wantEvent, time.Duration, error) {
	cfg, err := buildMarbleConfig(opts)
	if err != nil {
		return nil, 0, err
	}
	tl, cols, err := parse(marble, s.frame)
	if err != nil {
		return nil, 0, err
	}
	if tl.Unsubscribe != NoFrame {
		return nil, 0, &SyntaxError{Marble: marble, Column: indexOf(marble, '!') + 1, Msg: "! in an expected marble (unsubscribe with " + api + "'s subscription marble)"}
	}
	origin, ok := tl.subscribeAt(s.frame)
	if !ok {
		origin = 0
	}
	want := make([]wantEvent, 0, len(tl.Events))
	for i, ev := range tl.Events {
		if ev.Time(s.frame) < origin {
			return nil, 0, &SyntaxError{Marble: marble, Column: cols[i] + 1, Msg: "notification before ^ (frame 0) in an expected marble"}
		}
		w := wantEvent{at: ev.Time(s.frame) - origin, kind: ev.Kind, symbol: ev.Symbol}
		switch ev.Kind {
		case Next:
			if w.value, err = lookup(marble, cols[i], ev.Symbol, values); err != nil {
				return nil, 0, err
			}
		case Error:
			w.value = cfg.err
		}
		want = append(want, w)
	}
	return want, tl.endAt(s.frame) - origin, nil
}
