package redisstore

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// admission is batchScript's answer to one operation, in microseconds on
// Redis's clock.
type admission struct {
	admitted bool // false for Allow when the caller would have to wait, and when blocked
	blocked  bool // held tokens block the caller: e is the earliest lease deadline
	// late: the caller cannot go by its deadline (e is when it would go)
	// and holds no reservation: it waits unreserved (see batchScript).
	late bool
	// refused: the caller's deadline is no later than e, the earliest
	// instant it could possibly go (SPEC.md, "Deadlines").
	refused bool
	// withdrawn: the caller's context ended before its answer came, and
	// the admission made for it was withdrawn (group.go).
	withdrawn bool
	// at, for a caller with a deadline, is its departure on the local
	// clock as the answer gave it (the time the answer came plus the
	// delay): the answer was kept because at is no later than the
	// deadline (group.go).
	at time.Time
	// stale: the process's configuration is older than the stored one,
	// or was read too long ago; nothing was admitted (config.go).
	stale bool
	// mismatch: the key's schedule runs under the limits recorded (in
	// encodeLimits's form), not the request's; nothing was admitted
	// (tiers.go).
	mismatch bool
	recorded string
	// tier is the request's tier (request.tier, "" for the
	// configuration's), ranUnder the limits it ran under
	// (encodeLimits's form).
	tier, ranUnder string
	version        int64 // for a mismatch, the configuration's version it ran under
	e, now         int64 // the caller's departure (or the deadline) and Redis's now
	id             int64 // the admission's id (its tokens' ids), if admitted
	ended          int   // for the end of an admission: the tokens it released or removed
	// granted, for a lease: the tokens granted, held from e (= now).
	granted int
	// dep, for a departure ahead of a Wait or Acquire, is its place
	// among the departures, which a caller of higher priority may take
	// (departures.go).
	dep *departure
}

// delay is how long the caller waits before it may go (or, blocked,
// before the earliest lease ends).
func (a admission) delay() time.Duration { return durationOf(a.e - a.now) }

// endBound bounds a call that has no caller's context (a release, a
// cancel, a withdrawal, a pause): the call timeout, or endTimeout.
func (s *schedule) endBound() time.Duration {
	if s.timeout > 0 {
		return s.timeout
	}
	return endTimeout
}

// admit runs batchScript once (EVALSHA, falling back to EVAL when Redis
// does not know the script) on keys with the one operation req, outside
// group commit. It changes the schedule in Redis and nothing locally.
func (s *schedule) admit(ctx context.Context, keys []string, req request) (admission, error) {
	var a [1]admission
	err := s.runBatch(ctx, keys, []request{req}, a[:])
	return a[0], err
}

// runBatch runs batchScript with the operations reqs (endScript if they
// are all ends), and fills out (as long as reqs) with their answers, in
// order. ctx bounds the call (group.go decides how).
//
// Admissions answered stale (another process changed the configuration,
// or this one's is too old: config.go) run again at once, under the
// configuration read again, in their order and ahead of the callers
// queued meanwhile: a SetLimit elsewhere costs them a round trip, not
// their place. After maxStale tries the answers stay stale (commitConf
// ends them).
func (s *schedule) runBatch(ctx context.Context, keys []string, reqs []request, out []admission) error {
	ls, err := s.runBatchOnce(ctx, keys, reqs, out)
	for try := 0; err == nil && try < maxStale; try++ {
		var idx []int
		for i := range out {
			// (One whose cost the limits no longer serve fails instead:
			// commitConf, stillServes.)
			if out[i].stale && (reqs[i].own != "" || reqs[i].n <= s.lim.Load().minN) {
				idx = append(idx, i)
			}
		}
		if len(idx) == 0 {
			return nil
		}
		s.conf.staleSet.Store(ls) // the next ensureConf reads the configuration
		sub, subOut := make([]request, len(idx)), make([]admission, len(idx))
		for j, i := range idx {
			sub[j] = reqs[i]
		}
		ls, err = s.runBatchOnce(ctx, keys, sub, subOut)
		for j, i := range idx {
			out[i] = subOut[j]
		}
	}
	return err
}

// runBatchOnce is one script run of runBatch (one per tier, in the order
// they first appear, if the batch mixes tiers: tiers.go); it returns the
// configuration the batch ran under.
func (s *schedule) runBatchOnce(ctx context.Context, keys []string, reqs []request, out []admission) (*limitSet, error) {
	for _, r := range reqs {
		if r.admits() {
			if err := s.ensureConf(ctx); err != nil {
				s.reloadSlots(err)
				return nil, err
			}
			break
		}
	}
	ls := s.lim.Load()
	if s.tiers != nil {
		ownTiers(reqs, ls)
	}
	mixed := false
	for _, r := range reqs[1:] {
		mixed = mixed || r.tier != reqs[0].tier
	}
	if !mixed {
		return ls, s.runTier(ctx, keys, ls, reqs, out)
	}
	var tiers []string
	for _, r := range reqs {
		if !slices.Contains(tiers, r.tier) {
			tiers = append(tiers, r.tier)
		}
	}
	for _, tier := range tiers {
		var idx []int
		for i, r := range reqs {
			if r.tier == tier {
				idx = append(idx, i)
			}
		}
		sub, subOut := make([]request, len(idx)), make([]admission, len(idx))
		for j, i := range idx {
			sub[j] = reqs[i]
		}
		if err := s.runTier(ctx, keys, ls, sub, subOut); err != nil {
			return ls, err
		}
		for j, i := range idx {
			out[i] = subOut[j]
		}
	}
	return ls, nil
}

// runTier runs the operations reqs, all of one tier, under the
// configuration ls, in one script run (endScript if they are all ends),
// and fills out with their answers.
func (s *schedule) runTier(ctx context.Context, keys []string, ls *limitSet, reqs []request, out []admission) error {
	set, err := ls.tierSet(reqs[0].tier, s)
	if err != nil {
		return err
	}
	if k, all := servable(reqs, set.minN); !all {
		// The limits cannot serve the others' costs: a SetLimit lowered
		// them after their callers checked (stillServes). Sent, each
		// would hold the callers behind it back for ever (the script's
		// FIFO); answered stale, its caller checks again under the limits
		// in force, and fails (commitConf).
		sub, subOut := make([]request, len(k)), make([]admission, len(k))
		for i := range out {
			out[i] = admission{stale: true}
		}
		for j, i := range k {
			sub[j] = reqs[i]
		}
		if len(k) > 0 {
			err = s.runTier(ctx, keys, ls, sub, subOut)
		}
		for j, i := range k {
			out[i] = subOut[j]
		}
		return err
	}
	script := endScript
	for _, r := range reqs {
		if r.admits() {
			script = batchScript
			break
		}
	}
	v, err := s.runScript(ctx, script, keys, set.batchArgs(reqs, s))
	if err != nil {
		return err
	}
	r, ok := v.([]any)
	if !ok || len(r) != 4*len(out) {
		return fmt.Errorf("malformed reply %v from the batch script", v)
	}
	for i := range out {
		flag, ok1 := r[4*i].(int64)
		if recorded, ok := r[4*i+1].(string); ok && ok1 && flag == 7 && reqs[i].how == "" {
			// The key's schedule runs under other limits (tiers.go).
			out[i] = admission{mismatch: true, recorded: recorded, tier: reqs[i].tier, ranUnder: set.enc, version: set.stamp.version}
			continue
		}
		e, ok2 := r[4*i+1].(int64)
		d, ok3 := r[4*i+2].(int64)
		id, ok4 := r[4*i+3].(int64)
		if !ok1 || !ok2 || !ok3 || !ok4 || d < 0 {
			return fmt.Errorf("malformed reply %v from the batch script", v)
		}
		switch reqs[i].how {
		case "":
		case opLease:
			out[i] = admission{admitted: flag == 6 && d > 0, stale: flag == 5, e: e, now: e, id: id, granted: int(d)}
			continue
		default:
			out[i] = admission{ended: int(flag), now: e}
			continue
		}
		out[i] = admission{admitted: flag == 1, blocked: flag == 2, late: flag == 3, refused: flag == 4, stale: flag == 5, e: e, now: e - d, id: id, tier: reqs[i].tier, ranUnder: set.enc}
	}
	return nil
}

// servable returns the indexes of reqs that limits whose smallest N is
// minN can serve (all but the admissions of a larger cost), or all true
// and no slice if they serve every one (the usual case, allocating
// nothing).
func servable(reqs []request, minN int) (k []int, all bool) {
	serves := func(r request) bool { return r.how != "" || r.n <= minN }
	if !slices.ContainsFunc(reqs, func(r request) bool { return !serves(r) }) {
		return nil, true
	}
	for i, r := range reqs {
		if serves(r) {
			k = append(k, i)
		}
	}
	return k, false
}
