package learn

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/rxthrottle/rxthrottle"
)

// Config is what a Learner is built from: httpthrottle's WithLearnLimits
// options and the Transport's own.
type Config struct {
	Ceiling     []rxthrottle.Limit // joins every learned set (LearnCeiling)
	OnEvent     func(Event)        // OnLearn; nil for none
	MaxBuckets  int                // LearnMaxBuckets
	ProbeWindow time.Duration      // LearnProbeWindow
	MaxPause    time.Duration      // the Transport's WithMaxPause: no window is longer
	Clock       clock.Clock        // the Transport's clock, for the Buckets and the boundary timers
	Window      time.Duration      // LearnWindow: the window of quotas announced without one; 0 for none
	// Single is the Transport's limiter when it is not keyed: a route's own
	// quotas are set on it. nil for a keyed Transport, whose routes get
	// Buckets of their own.
	Single rxthrottle.Limiter
}

// Validate reports the first unusable setting.
func (c *Config) Validate() error {
	for _, l := range c.Ceiling {
		if err := l.Validate(); err != nil {
			return fmt.Errorf("httpthrottle: LearnCeiling(%v): %w", l, err)
		}
	}
	if c.MaxBuckets < 1 {
		return fmt.Errorf("httpthrottle: LearnMaxBuckets(%d): at least 1 bucket is required", c.MaxBuckets)
	}
	if c.ProbeWindow <= 0 {
		return fmt.Errorf("httpthrottle: LearnProbeWindow(%v): the window must be positive", c.ProbeWindow)
	}
	if c.Clock == nil {
		return errors.New("httpthrottle: learning needs a clock")
	}
	return nil
}

// Learner is the state of a learning Transport: the schedules it sets
// limits on, and the gate that lets one request at a time go until the
// first answer is read. Its methods are safe for concurrent use.
type Learner struct {
	cfg Config

	changes, notApplied, refusals atomic.Uint64
	rtt                           atomic.Int64 // a moving average of the round trips, in ns
	rttLow                        atomic.Int64 // the shortest recent round trip, in ns (see noteRTT)

	mu      sync.Mutex
	tick    uint64
	routes  map[string]*learnRoute    // by the Transport's key
	buckets map[string]*learnSchedule // by key + "\x00" + the server's bucket name
	last    Event
	// globalUntil is when the last refusal for the client's global limit
	// ends (pauseAll): a schedule made before then starts paused.
	globalUntil time.Time
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

// New returns a Learner of cfg.
func New(cfg Config) (*Learner, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Learner{
		cfg:     cfg,
		routes:  make(map[string]*learnRoute),
		buckets: make(map[string]*learnSchedule),
	}, nil
}

// routeLocked returns key's route, made if new, forgetting the least
// recently used beyond the bound. Requires l.mu.
func (l *Learner) routeLocked(key string) *learnRoute {
	l.tick++
	r, ok := l.routes[key]
	if !ok {
		if len(l.routes) >= l.cfg.MaxBuckets {
			evictOldest(l.routes, func(r *learnRoute) uint64 { return r.used })
		}
		r = &learnRoute{first: &firstGate{slot: make(chan struct{}, 1)}}
		if l.cfg.Single != nil {
			r.self = &learnSchedule{key: key, set: l.cfg.Single.SetLimit}
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
func (l *Learner) bucketLocked(key, name string) *learnSchedule {
	id := key + "\x00" + name
	s, ok := l.buckets[id]
	if !ok {
		if len(l.buckets) >= l.cfg.MaxBuckets {
			evictOldest(l.buckets, func(s *learnSchedule) uint64 { return s.used })
		}
		s = l.newSchedule(key, name)
		l.buckets[id] = s
	}
	s.used = l.tick
	return s
}

// newSchedule makes a schedule on a Bucket of its own, on the Transport's
// clock, paused while a global refusal lasts (pauseAll). Its starting
// limit is never in force: the announcement that
// makes it sets the learned ones before any request waits on it.
func (l *Learner) newSchedule(key, bucket string) *learnSchedule {
	b, _ := rxthrottle.NewBucket(rxthrottle.Per(1<<30, time.Second), rxthrottle.WithClock(l.cfg.Clock))
	if l.globalUntil.After(l.cfg.Clock.Now()) {
		b.Pause(l.globalUntil)
	}
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
func (l *Learner) schedules(key string) []*rxthrottle.Bucket {
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

// Pause pauses the learned schedules of key's route until until (the
// Transport pauses its own limiter itself).
func (l *Learner) Pause(key string, until time.Time) {
	for _, b := range l.schedules(key) {
		b.Pause(until)
	}
}
