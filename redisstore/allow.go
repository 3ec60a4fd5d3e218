package redisstore

import (
	"context"
	"time"
)

// allow is AllowN on the schedule stored under keys, for key; local is
// used by FallbackLocal only.
func (s *schedule) allow(ctx context.Context, keys []string, key string, n int, local fallback) (bool, error) {
	if ctx == nil {
		return false, errNilContext
	}
	req := request{allowOnly: true, n: n}
	if err := s.checkCost(key, "AllowN", n, &req); err != nil {
		return false, err
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if s.lines.busy(keys[0]) || (s.gates != nil && s.gates.waiting(keys[0])) {
		return false, nil // callers of this process wait for held tokens
	}
	var (
		a   admission
		err error
	)
	t := s.brk.begin()
	if t.call {
		a, err = s.commitConf(ctx, keys, key, "AllowN", &req)
		if own := ownError(err); own != nil {
			s.ownFailed(t, "AllowN", &req)
			return false, own
		}
	}
	if !t.call || err != nil {
		var serr *StoreError
		if t.call {
			if cerr := endedErr(ctx); cerr != nil {
				s.brk.abandoned(t)
				return false, cerr
			}
			s.brk.failed(t, err)
			serr = &StoreError{Op: "admit", Key: keys[0], Err: err}
			s.report(serr)
		} else {
			serr = &StoreError{Op: "admit", Key: keys[0], Err: s.brk.openError()}
		}
		switch s.policy {
		case FailOpen:
			s.admitted(key, time.Time{}, n, 0, false)
			return true, nil
		case FallbackLocal:
			ok, lerr := local.allow(ctx, key, n)
			if ok {
				s.admitted(key, time.Time{}, n, 0, false)
			}
			return ok, lerr
		}
		s.stats.fail()
		return false, serr
	}
	s.succeeded(t, keys[0])
	if a.withdrawn {
		return false, ctx.Err() // its context ended as the answer came (group.go)
	}
	if a.admitted {
		s.admitted(key, time.Time{}, n, 0, false)
	}
	return a.admitted, nil
}
