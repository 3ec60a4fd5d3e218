// Package adaptive moves a cap on calls in flight between a minimum and a
// maximum from the latencies of completed calls (SPEC.md, "Adaptive
// concurrency"): a gradient of the latency the calls show now against the
// least latency seen lately, as Netflix's concurrency-limits and Envoy's
// adaptive concurrency filter do, with their known faults guarded:
//
//   - The cap moves once per round, a cap's worth of calls that started
//     after the last move, so a call started under an older cap never moves
//     it twice (the double cut after a latency spike).
//   - The baseline is the least round latency over the last Baseline of
//     time, not an average: a long incident, when every call is slow, does
//     not drag it up as long as a few calls are fast, and it rises by
//     about 60% in a Baseline at most (the drift of failsafe-go #127).
//   - The cap grows only from rounds that filled it (an idle client learns
//     nothing about the server), doubles until the first round that is too
//     slow, and after a cut grows back by max(1, cap/8) a round, so it
//     regains a halving in about eight rounds, not hundreds (slow regrowth).
//   - A round too slow cuts the cap by the gradient baseline×Tolerance/latency,
//     at most to a quarter a round (a server overloaded many times over
//     is relieved in one round or two, not four).
//
// Time is an argument: a Limiter never reads a clock. It does no locking:
// its user holds its own lock around every call.
package adaptive

import "time"

// Config is a Limiter's settings; New fills in the zero ones.
type Config struct {
	Min, Max int
	// Tolerance is how much above the baseline a round's mean latency may
	// be without a cut: 1.1 (the default) allows 10%.
	Tolerance float64
	// Baseline is how long the least latency seen is remembered (30s by
	// default).
	Baseline time.Duration
}

// bins is the number of slots the baseline's window is kept in.
const bins = 8

// Limiter is the cap and what it learned.
type Limiter struct {
	cfg        Config
	cap        float64
	slowStart  bool
	roundStart int64 // calls that started before it belong to an older round
	// The round being measured: calls started since roundStart.
	n, full int // calls; calls that found the cap full at their start
	sum     int64
	least   int64 // their least latency
	// The baseline: the least round latency in each bin of Baseline/bins.
	bin     [bins]int64 // 0: empty
	binAt   int64       // the start of the current bin
	cur     int
	lastMin int64 // the last bin that ended with a value, for the rise bound
}

// New returns a Limiter between min and max (1 <= min <= max), starting at
// min.
func New(cfg Config) *Limiter {
	if cfg.Tolerance <= 1 {
		cfg.Tolerance = 1.1
	}
	if cfg.Baseline <= 0 {
		cfg.Baseline = 30 * time.Second
	}
	cfg.Min = max(cfg.Min, 1)
	cfg.Max = max(cfg.Max, cfg.Min)
	return &Limiter{cfg: cfg, cap: float64(cfg.Min), slowStart: true}
}

// Cap returns the cap now.
func (l *Limiter) Cap() int { return int(l.cap) }

// Baseline returns the least latency seen lately, 0 before any round.
func (l *Limiter) Baseline() time.Duration { return time.Duration(l.baseline()) }

// Sample records a call that started at start (an offset in nanoseconds
// on its user's clock), when open calls were in flight, itself included,
// and ended at end; it returns whether the cap moved.
func (l *Limiter) Sample(start, end int64, open int) bool {
	if start < l.roundStart {
		return false // started under an older cap
	}
	lat := max(end-start, 1)
	l.n++
	l.sum += lat
	if l.least == 0 || lat < l.least {
		l.least = lat
	}
	if open >= l.Cap() {
		l.full++
	}
	if l.n < max(l.Cap(), 4) {
		return false
	}
	return l.endRound(end)
}

// endRound moves the cap from the round that ends at now, and starts the
// next.
func (l *Limiter) endRound(now int64) bool {
	l.note(now, l.least)
	mean := float64(l.sum) / float64(l.n)
	filled := l.full*4 >= l.n // a quarter of the round found the cap full
	l.n, l.full, l.sum, l.least = 0, 0, 0, 0
	l.roundStart = now
	old := l.Cap()
	limit := float64(l.baseline()) * l.cfg.Tolerance
	switch {
	case mean > limit:
		l.slowStart = false
		l.cap *= max(limit/mean, 0.25)
	case !filled:
		return false
	case l.slowStart:
		l.cap *= 2
	default:
		l.cap += max(1, l.cap/8)
	}
	l.cap = min(max(l.cap, float64(l.cfg.Min)), float64(l.cfg.Max))
	return l.Cap() != old
}

// note records a round's least latency at now in the baseline's bins.
func (l *Limiter) note(now, least int64) {
	width := int64(l.cfg.Baseline) / bins
	if l.binAt == 0 && l.bin[l.cur] == 0 {
		l.binAt = now
	}
	for now-l.binAt >= width {
		if l.bin[l.cur] > 0 {
			l.lastMin = l.bin[l.cur]
		}
		l.binAt += width
		l.cur = (l.cur + 1) % bins
		l.bin[l.cur] = 0
		if now-l.binAt >= int64(l.cfg.Baseline) { // a long silence: skip ahead
			l.binAt = now
			clear(l.bin[:])
		}
	}
	if l.lastMin > 0 {
		// At most 1/16 above the last bin: about 60% in a Baseline.
		least = min(least, l.lastMin+l.lastMin/16)
	}
	if b := &l.bin[l.cur]; *b == 0 || least < *b {
		*b = least
	}
}

// baseline returns the least of the bins, 0 if all are empty.
func (l *Limiter) baseline() int64 {
	var m int64
	for _, b := range l.bin {
		if b > 0 && (m == 0 || b < m) {
			m = b
		}
	}
	return m
}
