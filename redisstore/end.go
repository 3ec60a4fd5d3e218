package redisstore

import (
	"context"
	"errors"
	"strings"
)

// end ends admission id of n tokens departing at e, made under tier
// (request.tier): how is "release", "cancel" or "withdraw" (lua/end.lua). It
// goes through group commit, so it rides in the next script run with
// whatever else is queued (its completion, read in that run, may be a
// little later than the call: the window only gets stricter). It has no caller's context (Release has
// none; a withdrawal runs after the caller's ended), so it is bounded by
// the timeout, or endTimeout. A failure goes to OnError: the tokens then
// end at their lease deadline (held) or stay reserved (withdraw), which
// costs tokens but never breaks the window. Then the callers of this
// process blocked by held tokens ask again.
func (s *schedule) end(keys []string, tier string, id int64, n int, e int64, how string) (int, error) {
	defer s.wake.notify()
	op := how
	if strings.HasPrefix(how, "use:") {
		op = "release"
	}
	t := s.brk.begin()
	if !t.call {
		err := &StoreError{Op: op, Key: keys[0], Err: s.brk.openError()}
		s.report(err)
		return 0, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.endBound())
	defer cancel()
	a, err := s.commit(ctx, keys, request{tier: tier, how: how, id: id, n: n, e: e})
	if err != nil {
		err = &StoreError{Op: op, Key: keys[0], Err: err}
	}
	s.ended(t, keys[0], op, err)
	return a.ended, err
}

// ended tells the breaker how the call t on key ended, and reports a
// failure to OnError.
func (s *schedule) ended(t ticket, key, op string, err error) {
	if err == nil {
		s.succeeded(t, key)
		return
	}
	s.brk.failed(t, err)
	var serr *StoreError
	if !errors.As(err, &serr) {
		err = &StoreError{Op: op, Key: key, Err: err}
	}
	s.report(err)
}
