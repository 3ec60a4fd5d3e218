package redisstore

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/internal/limitrule"
)

// limitSet is the configuration in force (the limits, the spacing, the
// hold timeout and the concurrency cap: the stored ones once read,
// config.go) and the batch
// script's arguments it gives; a refresh or SetLimit replaces it as a
// whole.
type limitSet struct {
	limits        []rxthrottle.Limit
	enc           string // the limits as encodeLimits spells them
	minN          int
	maxW          int64 // µs
	tail          []any // N and W of each limit
	spacing, hold int64 // µs
	concurrency   int   // the cap on holds open at once, 0 none
	stamp         confStamp
	readLocal     time.Time // when the stamp was read, on the real clock
	// head is the arguments of every batch after the number of
	// operations: the spacing, how long a departure can matter, the hold
	// timeout, the number of limits, tail, the stamp's version and
	// reading, and the concurrency cap (built by prebuild).
	head []any
	// one holds the ARGV of a batch of one admission of one token, built
	// once (prebuild): [wait, acquire, allow].
	one [3][]any
	// sendTier: the batches send enc, the tier the key's schedule must
	// run under (a Keyed limiter's: tiers.go); a Bucket's send "".
	sendTier bool
	// tierSets are the limit sets of the tiers under this configuration
	// (tierSet), at most maxTierSets.
	tierMu   sync.Mutex
	tierSets map[string]*limitSet
}

// prebuild builds ls.head and ls.one.
func (ls *limitSet) prebuild(s *schedule) {
	ls.sendTier = s.tiers != nil
	ls.head = append([]any{ls.spacing, max(ls.maxW, ls.spacing), ls.hold, len(ls.tail) / 2}, ls.tail...)
	ls.head = append(ls.head, ls.stamp.version, ls.stamp.readAt)
	ls.head = append(ls.head, ls.concurrency)
	if ls.sendTier {
		ls.head = append(ls.head, ls.enc)
	} else {
		ls.head = append(ls.head, "")
	}
	for i, r := range []request{{n: 1}, {n: 1, hold: true}, {allowOnly: true, n: 1}} {
		ls.one[i] = ls.build([]request{r}, s)
	}
}

// newLimitSet validates limits (the first one is #1 in errors), with the
// spacing and hold timeout (µs) and the concurrency cap of the set. Its stamp is the zero one:
// not read from Redis.
func newLimitSet(limits []rxthrottle.Limit, spacing, hold int64, concurrency int) (*limitSet, error) {
	ls := &limitSet{limits: limits, minN: limits[0].N, spacing: spacing, hold: hold, concurrency: concurrency}
	for i, l := range limits {
		if reason := limitrule.Invalid(l.N, l.Window); reason != "" {
			return nil, fmt.Errorf("redisstore: limit #%d (%v): %s: %w", i+1, l, reason, rxthrottle.ErrInvalidLimit)
		}
		if err := checkWindow(i, l); err != nil {
			return nil, err
		}
		w := micros(l.Window)
		ls.maxW = max(ls.maxW, w)
		ls.minN = min(ls.minN, l.N)
		ls.tail = append(ls.tail, l.N, w)
	}
	ls.enc = encodeLimits(limits)
	return ls, nil
}

// checkCost returns an error wrapping rxthrottle.ErrInvalidCost if n tokens
// can never be served at once.
func (ls *limitSet) checkCost(op string, n int) error { return refuse.Cost(op, n, ls.minN) }

// request is one operation of a batch: an admission (Allow if allowOnly,
// n tokens, held or not, by deadline if it is not zero), or, if how is
// not "", the end of an earlier admission id of n tokens departing at e:
// how is "release", "cancel" or "withdraw" (see lua/end.lua); or a lease's
// operation (lease.go): "lease" asks for at most n tokens for the
// leaseholder named by arg (lua/lease.lua), "lrep" reports the tokens of lease
// id granted at e, as arg lists them (lua/report.lua).
// tier is the limits it runs under (encodeLimits's form: a key's tier,
// tiers.go), "" for the configuration's; own is WithKeyLimits's tier, and
// tierVer, if not 0, the version under which tier (the key's recorded
// one, followed) holds: under another, the request goes under own
// (ownTiers).
type request struct {
	tier, own string
	tierVer   int64
	allowOnly bool
	// probe: only the deadline's check of an admission, which reserves
	// nothing (lease_probe.go).
	probe bool
	// departs: a Wait's or Acquire's admission, whose departure, if
	// ahead, a caller of higher priority may take (departures.go); it
	// does not go to Redis.
	departs  bool
	n        int
	hold     bool
	deadline time.Time // the caller's context's; zero if none
	how      string
	id, e    int64
	arg      string
}

// admits reports whether r is an admission (batchScript runs it; an end
// alone goes to endScript).
func (r request) admits() bool { return r.how == "" || r.how == opLease }

// batchArgs returns batchScript's ARGV for a batch of operations, in
// order (for one admission of one token, a prebuilt one: do not change
// it).
func (ls *limitSet) batchArgs(reqs []request, s *schedule) []any {
	if len(reqs) == 1 && reqs[0].n == 1 && reqs[0].how == "" && reqs[0].deadline.IsZero() && !reqs[0].probe && ls.one[0] != nil {
		switch r := reqs[0]; {
		case r.allowOnly:
			return ls.one[2]
		case r.hold:
			return ls.one[1]
		default:
			return ls.one[0]
		}
	}
	return ls.build(reqs, s)
}

// build builds batchScript's ARGV for a batch of operations. A deadline
// goes as the time left before it, read now (just before the call):
// Redis adds it to its own now, which makes it a little later than the
// true one, never earlier.
func (ls *limitSet) build(reqs []request, s *schedule) []any {
	a := make([]any, 0, 1+len(ls.head)+4*len(reqs))
	a = append(a, len(reqs))
	a = append(a, ls.head...)
	for _, r := range reqs {
		switch r.how {
		case "":
		case opLease:
			a = append(a, r.how, r.n, r.arg, 0)
			continue
		case opReport:
			a = append(a, r.how, r.id, r.e, r.arg)
			continue
		default:
			a = append(a, r.how, r.id, r.n, r.e)
			continue
		}
		mode, hold := "0", int64(-1)
		switch {
		case r.allowOnly:
			mode = "1"
		case r.probe:
			mode = "2"
		}
		if r.hold {
			hold = ls.hold
		}
		left := int64(-1)
		if !r.deadline.IsZero() {
			left = max(micros(time.Until(r.deadline)), 0)
		}
		a = append(a, mode, r.n, hold, left)
	}
	return a
}

// defaultPoll is the longest a caller blocked by tokens held in another
// process sleeps before it asks Redis again: a quarter of the smallest
// window, from 1ms to 50ms. A token released elsewhere renews W after its
// release, so a caller that learns of the release within W still goes at
// the exact instant SPEC.md gives.
func defaultPoll(limits []rxthrottle.Limit) time.Duration {
	w := limits[0].Window
	for _, l := range limits[1:] {
		w = min(w, l.Window)
	}
	return min(max(w/4, time.Millisecond), 50*time.Millisecond)
}

// minW is the smallest window of the set, µs.
func (ls *limitSet) minW() int64 {
	w := ls.maxW
	for i := 1; i < len(ls.tail); i += 2 {
		w = min(w, ls.tail[i].(int64))
	}
	return w
}

// encodeLimits is the stored form of limits: "N/W,N/W", W in µs.
// It makes one allocation (the string) for up to two limits: a tier's is
// encoded on every admission (tiers.go).
func encodeLimits(limits []rxthrottle.Limit) string {
	b := make([]byte, 0, 64)
	for i, l := range limits {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(l.N), 10)
		b = append(b, '/')
		b = strconv.AppendInt(b, micros(l.Window), 10)
	}
	return string(b)
}

// decodeLimits parses encodeLimits's form. The string is read from Redis,
// where any client could have written it: a W outside 1..maxWindow is
// refused here, before it is multiplied into a Duration, since a negative
// one can wrap around int64 to a positive window (-18446744073709551 µs
// is 616 ns) that newLimitSet would take. N is left to newLimitSet.
func decodeLimits(s string) ([]rxthrottle.Limit, error) {
	var out []rxthrottle.Limit
	for f := range strings.SplitSeq(s, ",") {
		ns, ws, ok := strings.Cut(f, "/")
		n, err1 := strconv.Atoi(ns)
		w, err2 := strconv.ParseInt(ws, 10, 64)
		if !ok || err1 != nil || err2 != nil || w < 1 || w > maxWindow {
			return nil, fmt.Errorf("limits %q: want N/W,N/W with W in µs", s)
		}
		out = append(out, rxthrottle.Per(n, time.Duration(w)*time.Microsecond))
	}
	return out, nil
}
