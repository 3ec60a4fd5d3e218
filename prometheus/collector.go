package rxprom

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/guard"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
	"github.com/rxthrottle/rxthrottle/internal/statseries"
)

// Collector is a prometheus.Collector over the Stats of the limiters,
// Transports, Guards and other sources (AddStats) added to it, read at each scrape, and the histogram
// of waits that the hooks from ObserveWait feed. Register it once
// (prometheus.MustRegister(c), or with a prometheus.Registry of your own);
// add to it before or after.
//
// Names are per kind: a limiter and a Transport may both be "github". A
// Collector is safe for concurrent use. Its zero value is not usable: call
// NewCollector.
type Collector struct {
	wait *prometheus.HistogramVec

	mu      sync.Mutex
	sources []source // in the order added
}

// source is one thing added to a Collector.
type source struct {
	kind   string // its figures' Source, the label's name: "limiter", "transport"...
	name   string
	series series
	read   func() []rxthrottle.Figure
}

var _ prometheus.Collector = (*Collector)(nil)

// NewCollector returns an empty Collector. It reads the option WithBuckets;
// a nil option or bad buckets are an error.
func NewCollector(opts ...Option) (*Collector, error) {
	cfg, err := buildConfig(opts)
	if err != nil {
		return nil, err
	}
	return &Collector{
		wait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "rxthrottle_wait_seconds",
			Help:    "How long each admitted caller waited for a token (fed by the limiter's OnAdmit hook).",
			Buckets: cfg.buckets,
		}, []string{"limiter"}),
	}, nil
}

// AddLimiter exports the Stats of a single-quota limiter (a
// *rxthrottle.Bucket, a *redisstore.Bucket...) as the series labelled
// limiter=name. For the wait histogram, also give the limiter the hook
// c.ObserveWait(name) where it takes one (rxthrottle.OnAdmit).
func (c *Collector) AddLimiter(name string, l rxthrottle.Limiter) error {
	if isNil(l) {
		return fmt.Errorf("rxprom: AddLimiter(%q): the limiter is nil", name)
	}
	return c.addStats("AddLimiter", name, l.Stats, statseries.KeyedOnly)
}

// AddKeyed is AddLimiter for a limiter with a schedule per key (a
// *rxthrottle.Keyed, a *redisstore.Keyed): its Stats are over all keys, and
// it has rxthrottle_keys_live and rxthrottle_keys_blocked instead of
// rxthrottle_free_tokens and rxthrottle_held_tokens. Keys are not labels.
func (c *Collector) AddKeyed(name string, kl rxthrottle.KeyedLimiter) error {
	if isNil(kl) {
		return fmt.Errorf("rxprom: AddKeyed(%q): the limiter is nil", name)
	}
	return c.addStats("AddKeyed", name, kl.Stats, statseries.SingleOnly)
}

// addStats adds a limiter whose Stats stats reads, without the figures
// leaveOut names (the other kind of limiter's).
func (c *Collector) addStats(method, name string, stats func() rxthrottle.Stats, leaveOut func(string) bool) error {
	return c.add(method, name, func() []rxthrottle.Figure { return stats().Figures() },
		func(n string) bool { return !leaveOut(n) })
}

// AddTransport exports the TransportStats of t as the series labelled
// transport=name. The Stats of t's limiter are its own: add it too; and,
// for a learning Transport, its LearnStats (AddStats).
func (c *Collector) AddTransport(name string, t *httpthrottle.Transport) error {
	if t == nil {
		return fmt.Errorf("rxprom: AddTransport(%q): the Transport is nil", name)
	}
	return c.add("AddTransport", name, func() []rxthrottle.Figure { return t.Stats().Figures() }, nil)
}

// AddGuard exports the Stats of g as the series labelled guard=name.
func (c *Collector) AddGuard(name string, g *guard.Guard) error {
	if g == nil {
		return fmt.Errorf("rxprom: AddGuard(%q): the Guard is nil", name)
	}
	return c.add("AddGuard", name, func() []rxthrottle.Figure { return g.Stats().Figures() }, nil)
}

// AddStats exports the Figures of the snapshot stats returns, read at each
// scrape, as the series labelled by their Source with name: any Stats of
// rxthrottle's modules, those without an Add method of their own included
// (grpcthrottle's Interceptor.Stats, labelled interceptor=name; a learning
// Transport's LearnStats, transport=name; redisstore's Bucket.LeaseStats,
// limiter=name), and any snapshot of yours that implements
// rxthrottle.Figures. rxprom imports neither gRPC nor Redis for them:
//
//	rxprom.AddStats(c, "api", interceptor.Stats)
//
// A source may share its name with another of its Source whose figures are
// others (AddTransport and a learning Transport's LearnStats, both "api").
// AddStats calls stats once to describe its figures.
func AddStats[S rxthrottle.Figures](c *Collector, name string, stats func() S) error {
	if stats == nil {
		return fmt.Errorf("rxprom: AddStats(%q): stats is nil", name)
	}
	return c.add("AddStats", name, func() []rxthrottle.Figure { return stats().Figures() }, nil)
}

// add appends a source whose figures read returns, those keep accepts
// (all with a nil keep), unless its name is empty, its figures are not
// exportable (statseries.Check), or a source of its Source and name already
// exports one of them.
func (c *Collector) add(method, name string, read func() []rxthrottle.Figure, keep func(string) bool) error {
	if c == nil || c.wait == nil {
		return errZero
	}
	if name == "" {
		return fmt.Errorf("rxprom: %s: the name is empty", method)
	}
	first := read()
	if err := statseries.Check(first); err != nil {
		return fmt.Errorf("rxprom: %s(%q): %w", method, name, err)
	}
	kind := first[0].Source
	s := newSeries(first, keep)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, o := range c.sources {
		if o.kind == kind && o.name == name && overlap(o.series.names(), s.names()) {
			return fmt.Errorf("rxprom: %s(%q): a %s of that name is already added", method, name, kind)
		}
	}
	c.sources = append(c.sources, source{kind, name, s, read})
	return nil
}

// overlap reports whether a and b have a name in common.
func overlap(a, b []string) bool {
	for _, n := range a {
		if slices.Contains(b, n) {
			return true
		}
	}
	return false
}

var errZero = errors.New("rxprom: Collector used without NewCollector")

// ObserveWait returns a hook for rxthrottle.OnAdmit that puts each admitted
// caller's wait into rxthrottle_wait_seconds{limiter=name}. It is cheap (a
// few atomic operations, no lock, no allocation), as a hook must be. Give
// the same name as to AddLimiter or AddKeyed. It returns an error, and no
// hook, for an empty name or a Collector not made by NewCollector (nil or
// the zero value).
func (c *Collector) ObserveWait(name string) (func(rxthrottle.Event), error) {
	if c == nil || c.wait == nil {
		return nil, errZero
	}
	if name == "" {
		return nil, errors.New("rxprom: ObserveWait: the name is empty")
	}
	obs := c.wait.WithLabelValues(name)
	return func(e rxthrottle.Event) { obs.Observe(e.Wait.Seconds()) }, nil
}

// Describe sends the descriptions of every series of the root module's
// Stats and of the sources added so far. A pedantic registry checks the
// series of a scrape against those: there, add the sources of other Stats
// (AddStats) before registering. It is part of prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	if c == nil || c.wait == nil {
		return // a Collector without NewCollector exports nothing
	}
	seen := map[string]bool{}
	for _, s := range known {
		s.describe(ch, seen)
	}
	c.mu.Lock()
	sources := c.sources
	c.mu.Unlock()
	for _, s := range sources {
		s.series.describe(ch, seen)
	}
	c.wait.Describe(ch)
}

// Collect reads the Stats of everything added and sends them, with the
// wait histogram. It is part of prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	if c == nil || c.wait == nil {
		return
	}
	c.mu.Lock()
	sources := c.sources // add only appends: the first len(sources) stay as they are
	c.mu.Unlock()
	for _, s := range sources { // Stats outside c.mu: an Add need not wait for a scrape
		s.series.collect(ch, s.read(), s.name)
	}
	c.wait.Collect(ch)
}

// isNil reports whether v is nil or a nil pointer in an interface.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}
