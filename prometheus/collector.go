package rxprom

import (
	"errors"
	"fmt"
	"reflect"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/guard"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
)

// Collector is a prometheus.Collector over the Stats of the limiters,
// Transports and Guards added to it, read at each scrape, and the histogram
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
	kind    string // "limiter", "transport", "guard": the label's name
	name    string
	collect func(ch chan<- prometheus.Metric)
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
	return c.addStats("AddLimiter", name, l.Stats, singleMetrics)
}

// AddKeyed is AddLimiter for a limiter with a schedule per key (a
// *rxthrottle.Keyed, a *redisstore.Keyed): its Stats are over all keys, and
// it has rxthrottle_keys_live and rxthrottle_keys_blocked instead of
// rxthrottle_free_tokens and rxthrottle_held_tokens. Keys are not labels.
func (c *Collector) AddKeyed(name string, kl rxthrottle.KeyedLimiter) error {
	if isNil(kl) {
		return fmt.Errorf("rxprom: AddKeyed(%q): the limiter is nil", name)
	}
	return c.addStats("AddKeyed", name, kl.Stats, keyedMetrics)
}

// addStats adds a limiter whose Stats stats reads: the series of every
// limiter, and its kind's own.
func (c *Collector) addStats(method, name string, stats func() rxthrottle.Stats, own []metric[rxthrottle.Stats]) error {
	return c.add("limiter", method, name, func(ch chan<- prometheus.Metric) {
		s := stats()
		collect(ch, limiterMetrics, s, name)
		collect(ch, own, s, name)
	})
}

// AddTransport exports the TransportStats of t as the series labelled
// transport=name. The Stats of t's limiter are its own: add it too.
func (c *Collector) AddTransport(name string, t *httpthrottle.Transport) error {
	if t == nil {
		return fmt.Errorf("rxprom: AddTransport(%q): the Transport is nil", name)
	}
	return c.add("transport", "AddTransport", name, func(ch chan<- prometheus.Metric) {
		collect(ch, transportMetrics, t.Stats(), name)
	})
}

// AddGuard exports the Stats of g as the series labelled guard=name.
func (c *Collector) AddGuard(name string, g *guard.Guard) error {
	if g == nil {
		return fmt.Errorf("rxprom: AddGuard(%q): the Guard is nil", name)
	}
	return c.add("guard", "AddGuard", name, func(ch chan<- prometheus.Metric) {
		collect(ch, guardMetrics, g.Stats(), name)
	})
}

// add appends a source, unless its name is empty or taken for its kind.
func (c *Collector) add(kind, method, name string, fn func(chan<- prometheus.Metric)) error {
	if c == nil || c.wait == nil {
		return errZero
	}
	if name == "" {
		return fmt.Errorf("rxprom: %s: the name is empty", method)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.sources {
		if s.kind == kind && s.name == name {
			return fmt.Errorf("rxprom: %s(%q): a %s of that name is already added", method, name, kind)
		}
	}
	c.sources = append(c.sources, source{kind, name, fn})
	return nil
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

// Describe sends the descriptions of every series the Collector can
// export. It is part of prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	if c == nil || c.wait == nil {
		return // a Collector without NewCollector exports nothing
	}
	describe(ch, limiterMetrics)
	describe(ch, singleMetrics)
	describe(ch, keyedMetrics)
	describe(ch, transportMetrics)
	describe(ch, guardMetrics)
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
		s.collect(ch)
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
