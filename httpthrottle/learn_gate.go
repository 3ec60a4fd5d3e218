package httpthrottle

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/limiterkit"
)

// learner is the state of WithLearnLimits: the schedules it sets limits
// on, and the gate that lets one request at a time go until the first
// answer is read.
type learner struct {
	cfg      learnConfig
	maxPause time.Duration
	clock    clock.Clock
	single   rxthrottle.Limiter // NewTransport's limiter: the route's own quotas go to it
	report   func(*HeaderError)

	changes, notApplied, refusals atomic.Uint64
	rtt                           atomic.Int64 // a moving average of the round trips, in ns
	rttLow                        atomic.Int64 // the shortest recent round trip, in ns (see noteRTT)

	mu      sync.Mutex
	tick    uint64
	routes  map[string]*learnRoute    // by the Transport's key
	buckets map[string]*learnSchedule // by key + "\x00" + the server's bucket name
	last    LearnEvent
}

// learnRoute is what is known of one key of the Transport: its own
// schedule and the bucket the server last answered it from.
type learnRoute struct {
	first  *firstGate
	self   *learnSchedule
	bucket *learnSchedule // nil until the server names one
	tokens *tokenBudget   // nil until the server announces one
	used   uint64
}

func newLearner(cfg learnConfig, tcfg transportConfig, g gate, report func(*HeaderError)) (*learner, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if tcfg.departure {
		return nil, errors.New("httpthrottle: WithLearnLimits needs held tokens: it cannot be used with WithDepartureRenewal")
	}
	l := &learner{
		cfg: cfg, maxPause: tcfg.maxPause, clock: tcfg.clock, report: report,
		routes:  make(map[string]*learnRoute),
		buckets: make(map[string]*learnSchedule),
	}
	if sg, ok := g.(singleGate); ok {
		l.single = sg.l
	}
	if err := l.applyCeiling(g); err != nil {
		return nil, err
	}
	return l, nil
}

// applyCeiling adds the ceiling to the Transport's limiter, which every
// request waits on, so that it holds across buckets from the first request
// on (for a keyed limiter: per key).
func (l *learner) applyCeiling(g gate) error {
	if len(l.cfg.ceiling) == 0 {
		return nil
	}
	var lim interface {
		SetLimit(rxthrottle.Limit, ...rxthrottle.Limit) error
		Limits() []rxthrottle.Limit
	}
	switch g := g.(type) {
	case singleGate:
		lim = g.l
	case keyedGate:
		lim = g.kl
	default:
		return nil
	}
	limits := lim.Limits()
	for _, c := range l.cfg.ceiling {
		if !slices.Contains(limits, c) {
			limits = append(limits, c)
		}
	}
	if err := lim.SetLimit(limits[0], limits[1:]...); err != nil {
		return fmt.Errorf("httpthrottle: LearnCeiling: %w", err)
	}
	return nil
}

// route returns key's route, made if new, forgetting the least recently
// used beyond the bound. Requires l.mu.
func (l *learner) routeLocked(key string) *learnRoute {
	l.tick++
	r, ok := l.routes[key]
	if !ok {
		if len(l.routes) >= l.cfg.maxBuckets {
			evictOldest(l.routes, func(r *learnRoute) uint64 { return r.used })
		}
		r = &learnRoute{first: &firstGate{slot: make(chan struct{}, 1)}}
		if l.single != nil {
			r.self = &learnSchedule{key: key, set: l.single.SetLimit}
		} else {
			r.self = l.newSchedule(key, "")
		}
		l.routes[key] = r
	}
	r.used = l.tick
	return r
}

// bucketLocked returns the schedule of the server's bucket name for key.
// Requires l.mu.
func (l *learner) bucketLocked(key, name string) *learnSchedule {
	id := key + "\x00" + name
	s, ok := l.buckets[id]
	if !ok {
		if len(l.buckets) >= l.cfg.maxBuckets {
			evictOldest(l.buckets, func(s *learnSchedule) uint64 { return s.used })
		}
		s = l.newSchedule(key, name)
		l.buckets[id] = s
	}
	s.used = l.tick
	return s
}

// newSchedule makes a schedule on a Bucket of its own, on the Transport's
// clock. Its starting limit is never in force: the announcement that
// makes it sets the learned ones before any request waits on it.
func (l *learner) newSchedule(key, bucket string) *learnSchedule {
	b, _ := rxthrottle.NewBucket(rxthrottle.Per(1<<30, time.Second), rxthrottle.WithClock(l.clock))
	return &learnSchedule{key: key, bucket: bucket, set: b.SetLimit, own: b}
}

func evictOldest[V any](m map[string]V, used func(V) uint64) {
	var oldest string
	var at uint64
	first := true
	for k, v := range m {
		if u := used(v); first || u < at {
			oldest, at, first = k, u, false
		}
	}
	delete(m, oldest)
}

// schedules returns the Buckets a request of key waits on besides the
// Transport's limiter: the server's bucket the route was last answered
// from, and the route's own for a keyed Transport.
func (l *learner) schedules(key string) []*rxthrottle.Bucket {
	l.mu.Lock()
	defer l.mu.Unlock()
	r, ok := l.routes[key]
	if !ok {
		return nil
	}
	var out []*rxthrottle.Bucket
	if r.bucket != nil {
		out = append(out, r.bucket.own)
	}
	if r.self.own != nil {
		out = append(out, r.self.own)
	}
	return out
}

// observe learns from resp, the answer to a request of key, read at now,
// and returns the pauses to make of hints, those the Transport would make:
// plus those of quotas quotaHints does not know (OpenAI's), and less a
// spent quota's pause until its reset when the schedule spreads its
// requests (a sliding-window counter says its quota is spent whenever its
// estimate is near it, and waiting for its reset would waste the rest of
// its window; a refusal's Retry-After is still obeyed). It runs before the
// request's token is released.
func (l *learner) observe(resp *http.Response, key string, now time.Time, hints []pauseHint) []pauseHint {
	anns, errs := announcements(resp.Header, now)
	for _, herr := range errs {
		l.report(herr)
	}
	refused := resp.StatusCode == http.StatusTooManyRequests
	if refused {
		l.refusals.Add(1)
	}
	pauseEnd := now
	if hint, ok, _ := retryAfter(resp.Header, now); ok && refused {
		pauseEnd = hint.until
	}
	var events []LearnEvent
	var tokenAnns []announcement
	byBucket := map[string][]announcement{}
	var order []string
	for _, a := range anns {
		if a.unit == unitTokens && a.limit >= 1 {
			tokenAnns = append(tokenAnns, a)
			if a.remaining == 0 && a.reset.After(now) {
				hints = append(hints, pauseHint{header: "X-Ratelimit-Reset-Tokens", value: resp.Header.Get("X-Ratelimit-Reset-Tokens"), until: a.reset})
			}
			continue
		}
		if a.unit != unitRequests || a.limit < 1 {
			l.notApplied.Add(1)
			events = append(events, LearnEvent{Key: key, Bucket: a.bucket, Source: a.header, Reason: notAppliedReason(a)})
		}
		if a.unit == unitRequests && a.remaining == 0 && a.reset.After(now) && a.header == "X-Ratelimit-Limit-Requests" {
			hints = append(hints, pauseHint{header: "X-Ratelimit-Reset-Requests", value: resp.Header.Get("X-Ratelimit-Reset-Requests"), until: a.reset})
		}
		if a.unit != unitRequests {
			continue
		}
		if _, seen := byBucket[a.bucket]; !seen {
			order = append(order, a.bucket)
		}
		byBucket[a.bucket] = append(byBucket[a.bucket], a)
	}

	l.mu.Lock()
	r := l.routeLocked(key)
	r.first.open.Store(true)
	var budget *tokenBudget
	newBudget := false
	if len(tokenAnns) > 0 {
		newBudget = r.tokens == nil
		budget = l.budgetLocked(r)
	}
	var touched, seeds []*learnSchedule
	for _, name := range order {
		s := r.self
		if name != "" {
			s = l.bucketLocked(key, name)
			if r.bucket != s {
				// The request answered did not wait on this bucket: it
				// counts in the bucket's window all the same.
				seeds = append(seeds, s)
			}
			r.bucket = s
		}
		touched = append(touched, s)
	}
	if len(order) == 0 {
		s := r.self
		if r.bucket != nil {
			s = r.bucket
		}
		touched = append(touched, s)
	}
	l.mu.Unlock()

	spreading := false
	type pause struct {
		lim   rxthrottle.Limiter
		until time.Time
	}
	var holds []pause
	for i, s := range touched {
		s.mu.Lock()
		if len(order) > 0 {
			s.learnQuotasLocked(usable(byBucket[order[i]]), now, refused, l.maxPause)
			s.watchBoundaryLocked(l, now)
		}
		s.onResponseLocked(refused, now, pauseEnd, l.cfg.probeWindow, time.Duration(l.rtt.Load()).Round(time.Millisecond), time.Duration(l.rttLow.Load()))
		if ev, ok := s.applyLocked(l.cfg.ceiling, l.maxPause); ok {
			events = append(events, ev)
		}
		spreading = spreading || s.spread.on
		if !s.hold.IsZero() {
			if lim := s.limiter(l); lim != nil {
				holds = append(holds, pause{lim, s.hold})
			}
			s.hold = time.Time{}
		}
		s.mu.Unlock()
	}
	for _, h := range holds {
		h.lim.Pause(h.until)
	}
	if spreading {
		kept := hints[:0]
		for _, h := range hints {
			if h.header == "Retry-After" {
				kept = append(kept, h)
			}
		}
		hints = kept
	}
	for _, a := range tokenAnns {
		if ev, ok := budget.learn(a, now, l.maxPause, key); ok {
			events = append(events, ev)
		}
	}
	if newBudget {
		seedBudget(budget, resp)
	}
	releaseOnClose(resp)
	for _, s := range seeds {
		// Allow is best effort: with the window full, the arrival was
		// one too many already, and nothing can undo it.
		_, _ = s.own.Allow(context.Background())
	}
	l.emit(events)
	return hints
}

// goAlone lets one request at a time go on s from now until an answer
// from the window that starts at boundary, or until a window of until has
// passed (see watchBoundaryLocked).
func (l *learner) goAlone(s *learnSchedule, boundary time.Time, until time.Duration) {
	s.mu.Lock()
	if !s.boundary.Equal(boundary) || s.counting != countingUnknown {
		s.mu.Unlock()
		return
	}
	if s.alone {
		// A renewal is being judged (its pause may be running): this
		// boundary is not held on top of it; the next one is watched.
		s.boundary = time.Time{}
		s.mu.Unlock()
		return
	}
	hold := s.boundaryHoldLocked(until, l.cfg.probeWindow, l.maxPause)
	s.alone, s.aloneUntil = true, boundary.Add(hold+min(max(until, l.cfg.probeWindow), l.maxPause))
	ev, ok := s.applyLocked(l.cfg.ceiling, l.maxPause)
	lim := s.limiter(l)
	s.mu.Unlock()
	if lim != nil {
		lim.Pause(boundary.Add(hold))
	}
	if ok {
		l.emit([]LearnEvent{ev})
	}
}

// usable keeps the announcements a schedule can keep: a quota of at
// least 1 request.
func usable(anns []announcement) []announcement {
	out := anns[:0:0]
	for _, a := range anns {
		if a.limit >= 1 {
			out = append(out, a)
		}
	}
	return out
}

func notAppliedReason(a announcement) string {
	if a.unit != unitRequests {
		return "a quota of " + a.unit + " is not kept by the Transport: only requests are"
	}
	return "a quota below 1 request cannot be kept; only its reset is honoured"
}

// emit counts and reports events, outside every lock.
func (l *learner) emit(events []LearnEvent) {
	for _, ev := range events {
		if ev.Limits != nil {
			l.changes.Add(1)
			l.mu.Lock()
			l.last = ev
			l.mu.Unlock()
		}
		if l.cfg.onLearn != nil {
			l.cfg.onLearn(ev)
		}
	}
}

func (l *learner) stats() LearnStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return LearnStats{
		Changes:    l.changes.Load(),
		NotApplied: l.notApplied.Load(),
		Refusals:   l.refusals.Load(),
		Buckets:    len(l.buckets),
		Last:       l.last,
	}
}

// learnGate is the Transport's gate with a learner in front: one request
// at a time until the first answer, and the learned schedules taken
// before the Transport's limiter.
type learnGate struct {
	inner gate
	l     *learner
}

func (g learnGate) key(req *http.Request) (string, error) { return g.inner.key(req) }

func (g learnGate) wait(ctx context.Context, key string) error {
	return errors.New("httpthrottle: a learning Transport holds its tokens") // newLearner refuses departure renewal
}

func (g learnGate) acquire(ctx context.Context, key string) (rxthrottle.Token, error) {
	lt := &learnToken{l: g.l}
	if fg := g.l.firstGate(key); !fg.open.Load() {
		select {
		case fg.slot <- struct{}{}:
			lt.first = fg
			if fg.open.Load() { // opened while this one waited
				lt.endFirst()
			}
		case <-ctx.Done():
			return rxthrottle.Token{}, ctx.Err()
		}
	}
	if err := g.l.acquireBudget(ctx, key); err != nil {
		lt.CancelToken(0)
		return rxthrottle.Token{}, err
	}
	for _, b := range g.l.schedules(key) {
		tok, err := b.Acquire(ctx)
		if err != nil {
			lt.CancelToken(0)
			cancelBudget(ctx)
			return rxthrottle.Token{}, err
		}
		lt.parts = append(lt.parts, tok)
	}
	tok, err := g.inner.acquire(ctx, key)
	if err != nil {
		lt.CancelToken(0)
		cancelBudget(ctx)
		return rxthrottle.Token{}, err
	}
	lt.parts = append(lt.parts, tok)
	lt.departed = g.l.clock.Now()
	return limiterkit.NewToken(lt, 0), nil
}

func (g learnGate) pause(key string, until time.Time) {
	g.inner.pause(key, until)
	for _, b := range g.l.schedules(key) {
		b.Pause(until)
	}
}

// learnToken is the hold of one request of a learning Transport: its
// tokens of every schedule, and the first-answer gate if it went through
// it. Release and Cancel end them all, once.
type learnToken struct {
	l        *learner
	parts    []rxthrottle.Token
	first    *firstGate // the gate whose slot this request holds, if any
	once     sync.Once
	departed time.Time // when the tokens were all granted
}

func (t *learnToken) endFirst() {
	if t.first != nil {
		<-t.first.slot
		t.first = nil
	}
}

// firstGate lets one request of a route go at a time until the first
// answer to one of them is read.
type firstGate struct {
	open atomic.Bool
	slot chan struct{} // holds the one request in flight before open
}

// firstGate returns key's route's gate.
func (l *learner) firstGate(key string) *firstGate {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.routeLocked(key).first
}

// ReleaseToken releases every part: the request was answered or failed.
func (t *learnToken) ReleaseToken(uint64) {
	t.once.Do(func() {
		t.l.noteRTT(t.l.clock.Since(t.departed))
		for _, p := range t.parts {
			p.Release()
		}
		t.endFirst()
	})
}

// noteRTT adds a round trip to the moving average (weight 1/8) and to the
// low mark (which takes a shorter one at once and drifts up to longer ones
// by 1/64 of the difference, so that it follows a network that slowed),
// lock free: a lost update among racing ones only delays them a little.
func (l *learner) noteRTT(d time.Duration) {
	old := l.rtt.Load()
	if old == 0 {
		l.rtt.Store(int64(d))
		l.rttLow.Store(int64(d))
		return
	}
	l.rtt.Store(old + (int64(d)-old)/8)
	if low := l.rttLow.Load(); int64(d) < low {
		l.rttLow.Store(int64(d))
	} else {
		l.rttLow.Store(low + (int64(d)-low)/64)
	}
}

// CancelToken gives every part back: the request was never sent.
func (t *learnToken) CancelToken(uint64) {
	t.once.Do(func() {
		for _, p := range t.parts {
			p.Cancel()
		}
		t.endFirst()
	})
}
