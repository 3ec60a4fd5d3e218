package redisstore

import (
	"context"
	"time"
)

// pause moves the pause-until time to until (on the local clock, sent as a
// delay so that Redis applies it on its own clock), unless a later pause is
// already set. It is best effort: Pause has no error to return, so a failure
// goes to OnError.
func (s *schedule) pause(keys []string, until time.Time) {
	d := until.Sub(s.clock.Now())
	if d <= 0 {
		return
	}
	t := s.brk.begin()
	if !t.call {
		s.report(&StoreError{Op: "pause", Key: keys[2], Err: s.brk.openError()})
		return
	}
	err := s.bounded(context.Background(), s.endBound(), func(ctx context.Context) error {
		return pauseScript.Run(ctx, s.client, keys, min(micros(d), maxTime), s.lim.Load().maxW).Err()
	})
	s.ended(t, keys[2], "pause", err)
}
