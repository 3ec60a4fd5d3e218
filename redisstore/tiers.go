package redisstore

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/internal/limitrule"
)

// Tiers (rxthrottle.WithKeyLimits) on a Keyed limiter. The user's function
// gives each admission of a key its limits; they are not stored in the
// keyconf (a function cannot be), so the key's own schedule records the
// limits it runs under: batchScript writes them (field t of the state
// hash, "N/W,N/W" as encodeLimits spells them) with the configuration's
// version c, and refuses, admitting nothing, an admission under the same
// version whose limits differ, answering with the recorded ones (flag 7).
// The process then follows the recorded limits for that key (for
// confBound, under that version), or, with WithStrictConfig, fails the
// call with an error wrapping ErrConfigMismatch. So one key never runs two
// schedules, whatever each process's function says: the first admission
// under a version (after a SetLimit, or after the key's state expired or
// was lost) decides, and its done ZSET, which the next limits count, keeps
// every window to the limits of the one or the other.
//
// Every Keyed limiter, tiered or not, sends its limits, so that a process
// without WithKeyLimits (or whose function returns nil for the key) follows
// a key's recorded tier too. A Bucket sends none: its configuration is
// one per name, and SetLimit raises its schedule's version in the same
// script.

// Bounds on what a process keeps of tiers, so that a function that
// returns something new every call (or keys without number) cannot grow
// its memory: the limit sets built per tier (per configuration read, in
// limitSet.tierSet), the keys that follow a recorded tier, and the pairs
// of tiers OnError heard of. Each is cleared when full.
const (
	maxTierSets = 64
	maxFollowed = 1024
	maxReported = 64
)

// keyTiers is the tier state of a Keyed limiter's schedule.
type keyTiers struct {
	f      func(key string) []rxthrottle.Limit // WithKeyLimits'; nil if none
	prefix string

	mu       sync.Mutex
	followed map[string]followedTier // by key: the recorded tier this process follows
	reported map[string]bool         // "own -> recorded" pairs OnError heard of
	nFollow  atomic.Int64            // len(followed), read without mu
}

// followedTier is a key's recorded tier (encoded), as an admission under
// version found it, followed until until (real clock).
type followedTier struct {
	enc     string
	version int64
	until   time.Time
}

// checkCost sets req's tiers for key's next admission (a Keyed limiter's:
// own, the function's; tier, what to send: own, or the tier recorded in
// Redis that this process follows, with its version) and checks that n
// tokens can be served by them. It calls the user's function with no lock
// held; a panic in it, or limits this package cannot count, are an error
// of the caller's.
func (s *schedule) checkCost(key, op string, n int, req *request) error {
	ls := s.lim.Load()
	t := s.tiers
	if t == nil {
		return ls.checkCost(op, n)
	}
	minN := ls.minN
	if t.f != nil {
		limits, err := t.call(key)
		if err != nil {
			return err
		}
		if len(limits) > 0 {
			req.own, minN = encodeLimits(limits), limits[0].N
			for _, l := range limits[1:] {
				minN = min(minN, l.N)
			}
		}
	}
	if err := refuse.Cost(op, n, minN); err != nil {
		return err
	}
	req.tier = req.own
	if t.nFollow.Load() > 0 {
		t.mu.Lock()
		ft, ok := t.followed[key]
		t.mu.Unlock()
		if ok && ft.version == ls.stamp.version && time.Now().Before(ft.until) {
			if set, err := ls.tierSet(ft.enc, s); err == nil && set.checkCost(op, n) == nil {
				req.tier, req.tierVer = ft.enc, ft.version
			}
		}
	}
	return nil
}

// ownTiers puts back the function's tier in the requests that follow a
// tier recorded under another version than ls's: under a new version,
// the key's next admission records its own (batchScript).
func ownTiers(reqs []request, ls *limitSet) {
	for i := range reqs {
		if r := &reqs[i]; r.tierVer != 0 && r.tierVer != ls.stamp.version {
			r.tier, r.tierVer = r.own, 0
		}
	}
}

// call is the user's function, with its panic and its invalid limits
// turned into errors (as rxthrottle.Keyed words them).
func (t *keyTiers) call(key string) (limits []rxthrottle.Limit, err error) {
	defer func() {
		if v := recover(); v != nil {
			limits, err = nil, fmt.Errorf("redisstore: WithKeyLimits: key %q: the function panicked: %v", key, v)
		}
	}()
	limits = t.f(key)
	for i, l := range limits {
		if reason := limitrule.Invalid(l.N, l.Window); reason != "" {
			return nil, fmt.Errorf("redisstore: WithKeyLimits: key %q: limit #%d (%v): %s: %w", key, i+1, l, reason, rxthrottle.ErrInvalidLimit)
		}
		if micros(l.Window) > maxWindow {
			return nil, fmt.Errorf("redisstore: WithKeyLimits: key %q: limit #%d (%v): the window is longer than Redis's scripts can count exactly (2^53 µs, about 285 years): %w", key, i+1, l, rxthrottle.ErrInvalidLimit)
		}
	}
	return limits, nil
}

// follow handles an admission of key refused (a) because the key's
// schedule runs under the recorded tier, not the one sent: with strict it
// returns the error; otherwise the process follows the recorded tier for
// confBound (OnError hears of each pair of tiers once), and follow returns
// the request again under it, its cost checked against it.
func (s *schedule) follow(key, op string, req request, a admission) (request, error) {
	t, base, own, recorded := s.tiers, s.lim.Load(), a.ranUnder, a.recorded
	rec, err := base.tierSet(recorded, s)
	if err != nil {
		return req, fmt.Errorf("redisstore: key %q: the limits recorded in Redis for its schedule, %q: %w", key, recorded, err)
	}
	mismatch := fmt.Errorf("redisstore: key %q of prefix %q: its schedule in Redis runs under limits %v; this process gives it %v: %w",
		key, t.prefix, rec.limits, describeTier(own), ErrConfigMismatch)
	if s.conf.strict {
		return req, mismatch
	}
	t.mu.Lock()
	if t.followed == nil || len(t.followed) >= maxFollowed {
		t.followed = map[string]followedTier{}
	}
	t.followed[key] = followedTier{enc: recorded, version: a.version, until: time.Now().Add(confBound)}
	t.nFollow.Store(int64(len(t.followed)))
	pair := own + " -> " + recorded
	tell := !t.reported[pair] && len(t.reported) < maxReported
	if tell {
		if t.reported == nil {
			t.reported = map[string]bool{}
		}
		t.reported[pair] = true
	}
	t.mu.Unlock()
	if tell {
		s.report(fmt.Errorf("%w (following the recorded one)", mismatch))
	}
	if err := rec.checkCost(op, req.n); err != nil {
		return req, fmt.Errorf("%w (under the limits recorded for key %q)", err, key)
	}
	req.tier, req.tierVer = recorded, a.version
	return req, nil
}

// describeTier is an encoded tier for errors, as its limits.
func describeTier(enc string) string {
	if l, err := decodeLimits(enc); err == nil {
		return fmt.Sprint(l)
	}
	return strconv.Quote(enc)
}

// tierSet returns the limit set of the tier enc (encodeLimits's form) under
// ls's configuration (its spacing, hold timeout, concurrency cap and
// stamp), built once per configuration read: ls itself if enc is "" or
// ls's own limits.
func (ls *limitSet) tierSet(enc string, s *schedule) (*limitSet, error) {
	if enc == "" || enc == ls.enc {
		return ls, nil
	}
	ls.tierMu.Lock()
	defer ls.tierMu.Unlock()
	if t, ok := ls.tierSets[enc]; ok {
		return t, nil
	}
	limits, err := decodeLimits(enc)
	if err != nil {
		return nil, err
	}
	t, err := newLimitSet(limits, ls.spacing, ls.hold, ls.concurrency)
	if err != nil {
		return nil, err
	}
	t.stamp, t.readLocal = ls.stamp, ls.readLocal
	t.prebuild(s)
	if ls.tierSets == nil || len(ls.tierSets) >= maxTierSets {
		ls.tierSets = map[string]*limitSet{}
	}
	ls.tierSets[enc] = t
	return t, nil
}
