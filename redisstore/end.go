package redisstore

import "context"

// end ends admission id of n tokens departing at e: how is "release",
// "cancel" or "withdraw" (endLua). It goes through group commit, so it
// rides in the next script run with whatever else is queued (its
// completion, read in that run, may be a little later than the call: the
// window only gets stricter). It has no caller's context (Release has
// none; a withdrawal runs after the caller's ended), so it is bounded by
// the timeout, or endTimeout. A failure goes to OnError: the tokens then
// end at their lease deadline (held) or stay reserved (withdraw), which
// costs tokens but never breaks the window. Then the callers of this
// process blocked by held tokens ask again.
func (s *schedule) end(keys []string, id int64, n int, e int64, how string) {
	defer s.wake.notify()
	t := s.brk.begin()
	if !t.call {
		s.report(&StoreError{Op: how, Key: keys[0], Err: s.brk.openError()})
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.endBound())
	defer cancel()
	_, err := s.commit(ctx, keys, request{how: how, id: id, n: n, e: e})
	s.ended(t, keys[0], how, err)
}

// ended tells the breaker how the call t on key ended, and reports a
// failure to OnError.
func (s *schedule) ended(t ticket, key, op string, err error) {
	if err == nil {
		s.succeeded(t, key)
		return
	}
	s.brk.failed(t, err)
	s.report(&StoreError{Op: op, Key: key, Err: err})
}
