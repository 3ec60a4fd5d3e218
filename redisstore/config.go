package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rxthrottle/rxthrottle"
)

// The configuration of a quota (its limits, spacing and hold timeout:
// everything that changes the schedule) lives in Redis with the quota, in
// a HASH of its own that does not expire: rxthrottle:{name}:conf for a
// Bucket (in the slot of its schedule), rxthrottle:{prefix}:keyconf for a
// Keyed limiter (one for all its keys). Its fields: v (the version: the
// Redis time of the write in µs, or one more than the previous version,
// whichever is larger, so that versions only grow, even after the hash is
// lost), l (the limits, "N/W,N/W" with W in µs), s (the spacing, µs), h
// (the hold timeout, µs), k (the concurrency cap, 0 for none).
//
// A process reads it (confScript) before its first admission and then at
// least every confBound/2; it stores its own configuration if there is
// none. Every admission carries the version it runs under and when that
// version was read (Redis's TIME of the read), and batchScript refuses it
// as stale, admitting nothing, if the version was read more than
// confBound before the script's now, or if the schedule has admitted under
// a newer version (state field c). The process then reads the
// configuration again and retries. So within confBound of a SetLimit (on
// Redis's clock), no process admits under the old configuration; on a
// Bucket, SetLimit also raises c of the schedule in the same script, so
// that no admission after it runs under the old one at all. For a Keyed
// limiter on a Redis Cluster, the configuration's slot and a key's may be
// on two nodes: the bound then also carries the skew between their
// clocks.

// storedConf is what a schedule keeps of the stored configuration: its
// keys (the conf hash, and a Bucket's state), this process's own (the
// constructor's, or its last SetLimit's), WithStrictConfig, whether a
// stored one was followed yet (under mu, as own is), and what to tell when
// the limits change (FallbackLocal's limiter).
type storedConf struct {
	keys     []string
	staleSet atomic.Pointer[limitSet] // found stale: read again
	mu       sync.Mutex
	own      *limitSet
	strict   bool
	joined   bool
	onLimits func([]rxthrottle.Limit) error
	watch    confWatch // reads it while callers sleep on departures (config_watch.go)
}

// confBound is how long, at most, an admission runs under a configuration
// read before it (on Redis's clock; CONF_BOUND in the scripts).
const confBound = 500 * time.Millisecond

// ErrConfigMismatch is wrapped by the error of a process built with
// WithStrictConfig whose limits, spacing or hold timeout differ from those
// stored in Redis for the quota (see WithStrictConfig).
var ErrConfigMismatch = errors.New("configuration differs from the stored one")

// confStamp is the version of the stored configuration a limitSet holds
// and when it was read, in µs on Redis's clock; zero if not read.
type confStamp struct{ version, readAt int64 }

// describe is ls's configuration for errors.
func (ls *limitSet) describe() string {
	return fmt.Sprintf("limits %v, spacing %v, hold timeout %v, concurrency %d", ls.limits,
		time.Duration(ls.spacing)*time.Microsecond, time.Duration(ls.hold)*time.Microsecond, ls.concurrency)
}

// sameConfig reports whether a and b enforce the same schedule.
func sameConfig(a, b *limitSet) bool {
	return encodeLimits(a.limits) == encodeLimits(b.limits) && a.spacing == b.spacing && a.hold == b.hold && a.concurrency == b.concurrency
}

// ensureConf makes sure the next admission runs under a configuration
// read from Redis recently enough: it reads it if it never was, or if it
// was read more than confBound/2 ago (then only if no other caller is
// reading it: the one in force is still good). The age is on the real
// clock, not the limiter's: the bound is on Redis's. It returns an error
// only if no configuration read from Redis can be used.
//
// It runs in runBatch, before the script: so it is bounded as the
// admission is, and a caller whose context ends does not wait for it
// (group.go).
func (s *schedule) ensureConf(ctx context.Context) error {
	ls := s.lim.Load()
	if ls == s.conf.staleSet.Load() {
		return s.refresh(ctx, ls) // an admission found it stale
	}
	if ls.stamp.version != 0 {
		if time.Since(ls.readLocal) < confBound/2 || !s.conf.mu.TryLock() {
			return nil
		}
		defer s.conf.mu.Unlock()
		if s.lim.Load() == ls {
			_ = s.readConfLocked(ctx, "join", ls) // a failure leaves ls, still good for the script
		}
		return nil
	}
	return s.refresh(ctx, ls)
}

// refresh reads the stored configuration again, unless it was read since
// seen was the one in force: an admission found seen stale.
func (s *schedule) refresh(ctx context.Context, seen *limitSet) error {
	s.conf.mu.Lock()
	defer s.conf.mu.Unlock()
	if ls := s.lim.Load(); ls != seen && ls.stamp.version != 0 {
		return nil
	}
	return s.readConfLocked(ctx, "join", s.lim.Load())
}

// readConfLocked runs confScript in mode ("join" or "set") with want's
// configuration, and puts the stored one in force. A process built with
// WithStrictConfig that has never followed a stored configuration refuses
// one that differs from its own. Requires s.conf.mu.
func (s *schedule) readConfLocked(ctx context.Context, mode string, want *limitSet) error {
	var v any // read only if the call returned (bounded)
	err := s.bounded(ctx, s.endBound(), func(ctx context.Context) error {
		var err error
		v, err = confScript.Run(ctx, s.client, s.conf.keys, mode, encodeLimits(want.limits), want.spacing, want.hold, want.concurrency).Result()
		return err
	})
	if err != nil {
		return err
	}
	stored, err := parseConf(v)
	if err != nil {
		return err
	}
	if !sameConfig(stored, s.conf.own) && !s.conf.joined {
		err := fmt.Errorf("redisstore: %s holds %s; this process was built with %s: %w",
			s.conf.keys[0], stored.describe(), s.conf.own.describe(), ErrConfigMismatch)
		if s.conf.strict {
			return err
		}
		if s.onError != nil {
			s.onError(fmt.Errorf("%w (following the stored one)", err))
		}
	}
	s.conf.joined = true
	cur := s.lim.Load()
	stored.readLocal = time.Now()
	stored.prebuild(s)
	s.lim.Store(stored)
	if cur.enc != stored.enc {
		s.replan() // the callers sleeping on departures planned under cur
		s.limWake.notify()
		if s.conf.onLimits != nil {
			_ = s.conf.onLimits(stored.limits) // valid: newLimitSet checked them
		}
	}
	return nil
}

// parseConf reads confScript's reply into a limitSet.
func parseConf(v any) (*limitSet, error) {
	r, ok := v.([]any)
	if !ok || len(r) != 6 {
		return nil, fmt.Errorf("malformed reply %v from the configuration script", v)
	}
	ver, ok1 := r[0].(int64)
	ls, ok2 := r[1].(string)
	ss, ok3 := r[2].(string)
	hs, ok4 := r[3].(string)
	ks, ok5 := r[4].(string)
	now, ok6 := r[5].(int64)
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !ok6 {
		return nil, fmt.Errorf("malformed reply %v from the configuration script", v)
	}
	limits, err := decodeLimits(ls)
	if err != nil {
		return nil, err
	}
	sp, err1 := strconv.ParseInt(ss, 10, 64)
	ho, err2 := strconv.ParseInt(hs, 10, 64)
	k, err3 := strconv.Atoi(ks)
	if err1 != nil || err2 != nil || err3 != nil || sp < 0 || ho <= 0 || sp > maxWindow || ho > maxWindow || k < 0 {
		return nil, fmt.Errorf("stored spacing %q, hold timeout %q or concurrency %q: want µs, µs and a count", ss, hs, ks)
	}
	set, err := newLimitSet(limits, sp, ho, k)
	if err != nil {
		return nil, fmt.Errorf("stored %w", err)
	}
	set.stamp = confStamp{version: ver, readAt: now}
	return set, nil
}

// setLimit stores new limits for every process sharing the quota and puts
// them in force here (see Bucket.SetLimit).
func (s *schedule) setLimit(limit rxthrottle.Limit, more []rxthrottle.Limit) error {
	cur := s.lim.Load()
	want, err := newLimitSet(append([]rxthrottle.Limit{limit}, more...), cur.spacing, cur.hold, cur.concurrency)
	if err != nil {
		return err
	}
	s.conf.mu.Lock()
	defer s.conf.mu.Unlock()
	own, joined := s.conf.own, s.conf.joined
	s.conf.own, s.conf.joined = want, true // the stored one, being want, is no mismatch
	if err := s.readConfLocked(context.Background(), "set", want); err != nil {
		s.conf.own, s.conf.joined = own, joined
		if ownError(err) != nil {
			return err
		}
		serr := &StoreError{Op: "set limit", Key: s.conf.keys[0], Err: err}
		s.report(serr)
		return serr
	}
	return nil
}

// maxStale is how many stale answers in a row a caller takes before it
// gives up (errStaleConf): each one follows a fresh read, so more than one
// or two means clocks of Redis nodes that disagree by more than
// confBound.
const maxStale = 3

// errStaleConf is the error of a caller whose admissions stay stale.
func errStaleConf(key string) error {
	return fmt.Errorf("redisstore: %w: %s was stale %d times in a row just after it was read: do the clocks of the Redis nodes differ by more than %v?", errStale, key, maxStale+1, confBound)
}

// commitConf is commit under a configuration recent enough (ensureConf);
// an answer that it is stale makes it read the configuration again and
// retry, up to maxStale times. Its errors are commit's (a failed read of
// the configuration is one: the caller's admission failed), or an error
// of the caller's own (ownError).
//
// An answer that key's schedule runs under other limits (a tier recorded
// by another process, tiers.go) makes it follow them (s.follow updates
// *req) and retry, as many times; with WithStrictConfig it is an error.
func (s *schedule) commitConf(ctx context.Context, keys []string, key, op string, req *request) (admission, error) {
	for stale, mism := 0, 0; ; {
		seen := s.lim.Load()
		if err := s.stillServes(op, req); err != nil {
			return admission{}, err
		}
		a, err := s.commit(ctx, keys, *req)
		if err == nil && a.mismatch {
			if mism == maxStale {
				return a, fmt.Errorf("redisstore: %w: the limits recorded for key %q changed %d times in a row", errStale, key, maxStale+1)
			}
			mism++
			if *req, err = s.follow(key, op, *req, a); err != nil {
				return admission{}, err
			}
			continue
		}
		if err != nil || !a.stale {
			return a, err
		}
		if stale == maxStale {
			return a, errStaleConf(s.conf.keys[0])
		}
		stale++
		// The next batch reads the configuration first (ensureConf),
		// unless one was read since.
		s.conf.staleSet.Store(seen)
	}
}

// stillServes returns an error wrapping rxthrottle.ErrInvalidCost if the
// limits in force no longer serve req's cost: a SetLimit lowered their
// smallest N below it while the caller waited (SPEC.md, "Changing
// limits"), which ends its wait (the caller's own error, counted as
// cancelled). A key's own limits (a tier) are not the limiter's, which
// SetLimit changes: its cost was checked against them.
func (s *schedule) stillServes(op string, req *request) error {
	if req.own != "" {
		return nil
	}
	return s.lim.Load().checkCost(op, req.n)
}

// errStale is wrapped by errStaleConf's errors.
var errStale = errors.New("stale configuration")

// ownError returns err if it is the caller's own rather than a failure of
// Redis: a configuration mismatch or one that stays stale, or a cost
// the limits a key follows cannot serve (tiers.go).
func ownError(err error) error {
	if errors.Is(err, ErrConfigMismatch) || errors.Is(err, errStale) || errors.Is(err, rxthrottle.ErrInvalidCost) {
		return err
	}
	return nil
}
