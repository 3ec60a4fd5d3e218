package rxotel

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/guard"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
	"github.com/rxthrottle/rxthrottle/internal/statseries"
)

// ScopeName is the instrumentation scope of the instruments: the module's
// path, as OpenTelemetry asks.
const ScopeName = "github.com/rxthrottle/rxthrottle/otel"

// Metrics exports the Stats of the limiters, Transports, Guards and other
// sources (AddStats) added to it through asynchronous OpenTelemetry
// instruments, read at each collection, and the wait histogram that the
// hooks from ObserveWait feed. The instruments of the root module's Stats
// are made once, by New, on the MeterProvider of WithMeterProvider (the
// global one by default), those of other Stats when they are first added;
// add to it before or after the first collection.
//
// Names are per kind: a limiter and a Transport may both be "github". A
// Metrics is safe for concurrent use. Its zero value is not usable: call
// New; call Close to stop observing.
type Metrics struct {
	wait  metric.Float64Histogram
	meter metric.Meter

	mu      sync.Mutex
	insts   map[string]metric.Observable // by figure name
	fromNew map[string]bool              // the figures whose instruments New made
	regs    []metric.Registration        // New's callback, then the sources' with instruments of their own
	closed  bool
	sources []*source // observed by New's callback, in the order added
	all     []*source // every source added, for the duplicate check
}

// source is one thing added to a Metrics.
type source struct {
	kind  string // its figures' Source, the attribute's name: "limiter", "transport"...
	name  string
	names []string // the figures it exports
	insts []metric.Observable
	read  func() []rxthrottle.Figure
	attrs metric.ObserveOption
}

// New makes the instruments and returns Metrics with nothing added yet. It
// reads the options WithMeterProvider and WithBuckets; a nil option, a nil
// provider, bad buckets or an instrument the provider refuses is an error.
func New(opts ...Option) (*Metrics, error) {
	cfg, err := buildConfig(opts)
	if err != nil {
		return nil, err
	}
	m := &Metrics{meter: cfg.provider.Meter(ScopeName), insts: map[string]metric.Observable{}, fromNew: map[string]bool{}}
	m.wait, err = m.meter.Float64Histogram("rxthrottle.wait.duration",
		metric.WithUnit("s"),
		metric.WithDescription("How long each admitted caller waited for a token (fed by the limiter's OnAdmit hook)."),
		metric.WithExplicitBucketBoundaries(cfg.buckets...))
	if err != nil {
		return nil, fmt.Errorf("rxotel: New: %w", err)
	}
	var all []metric.Observable
	for _, figs := range statseries.Known() {
		for _, f := range figs {
			inst, err := observable(m.meter, f)
			if err != nil {
				return nil, fmt.Errorf("rxotel: New: %w", err)
			}
			m.insts[f.Name], m.fromNew[f.Name] = inst, true
			all = append(all, inst)
		}
	}
	reg, err := m.meter.RegisterCallback(m.observe, all...)
	if err != nil {
		return nil, fmt.Errorf("rxotel: New: %w", err)
	}
	m.regs = append(m.regs, reg)
	return m, nil
}

// AddLimiter exports the Stats of a single-quota limiter (a
// *rxthrottle.Bucket, a *redisstore.Bucket...) with the attribute
// limiter=name. For the wait histogram, also give the limiter the hook
// m.ObserveWait(name) where it takes one (rxthrottle.OnAdmit).
func (m *Metrics) AddLimiter(name string, l rxthrottle.Limiter) error {
	if isNil(l) {
		return fmt.Errorf("rxotel: AddLimiter(%q): the limiter is nil", name)
	}
	return m.add("AddLimiter", name, func() []rxthrottle.Figure { return l.Stats().Figures() },
		func(n string) bool { return !statseries.KeyedOnly(n) })
}

// AddKeyed is AddLimiter for a limiter with a schedule per key (a
// *rxthrottle.Keyed, a *redisstore.Keyed): its Stats are over all keys, and
// it has rxthrottle.keys_live and rxthrottle.keys_blocked instead of
// rxthrottle.free_tokens and rxthrottle.held_tokens. Keys are not
// attributes: they are unbounded, and so would the number of series be.
func (m *Metrics) AddKeyed(name string, kl rxthrottle.KeyedLimiter) error {
	if isNil(kl) {
		return fmt.Errorf("rxotel: AddKeyed(%q): the limiter is nil", name)
	}
	return m.add("AddKeyed", name, func() []rxthrottle.Figure { return kl.Stats().Figures() },
		func(n string) bool { return !statseries.SingleOnly(n) })
}

// AddTransport exports the TransportStats of t with the attribute
// transport=name. The Stats of t's limiter are its own: add it too; and,
// for a learning Transport, its LearnStats (AddStats).
func (m *Metrics) AddTransport(name string, t *httpthrottle.Transport) error {
	if t == nil {
		return fmt.Errorf("rxotel: AddTransport(%q): the Transport is nil", name)
	}
	return m.add("AddTransport", name, func() []rxthrottle.Figure { return t.Stats().Figures() }, nil)
}

// AddGuard exports the Stats of g with the attribute guard=name.
func (m *Metrics) AddGuard(name string, g *guard.Guard) error {
	if g == nil {
		return fmt.Errorf("rxotel: AddGuard(%q): the Guard is nil", name)
	}
	return m.add("AddGuard", name, func() []rxthrottle.Figure { return g.Stats().Figures() }, nil)
}

// AddStats exports the Figures of the snapshot stats returns, read at each
// collection, with the attribute of their Source set to name: any Stats of
// rxthrottle's modules, those without an Add method of their own included
// (grpcthrottle's Interceptor.Stats, interceptor=name; a learning
// Transport's LearnStats, transport=name; redisstore's Bucket.LeaseStats,
// limiter=name), and any snapshot of yours that implements
// rxthrottle.Figures. rxotel imports neither gRPC nor Redis for them:
//
//	rxotel.AddStats(m, "api", interceptor.Stats)
//
// A source may share its name with another of its Source whose figures are
// others (AddTransport and a learning Transport's LearnStats, both "api").
// AddStats calls stats once to describe its figures; the instruments of
// figures not seen before are made then.
func AddStats[S rxthrottle.Figures](m *Metrics, name string, stats func() S) error {
	if stats == nil {
		return fmt.Errorf("rxotel: AddStats(%q): stats is nil", name)
	}
	return m.add("AddStats", name, func() []rxthrottle.Figure { return stats().Figures() }, nil)
}

var errZero = errors.New("rxotel: Metrics used without New")

// ObserveWait returns a hook for rxthrottle.OnAdmit that records each
// admitted caller's wait in rxthrottle.wait.duration{limiter=name}. It is
// cheap (the attributes are made once, here), as a hook must be. Give the
// same name as to AddLimiter or AddKeyed. It returns an error, and no
// hook, for an empty name or Metrics not made by New (nil or the zero
// value), so the hook never fails inside the limiter.
func (m *Metrics) ObserveWait(name string) (func(rxthrottle.Event), error) {
	if m == nil || m.wait == nil {
		return nil, errZero
	}
	if name == "" {
		return nil, errors.New("rxotel: ObserveWait: the name is empty")
	}
	wait := m.wait
	opt := metric.WithAttributeSet(attribute.NewSet(attribute.String("limiter", name)))
	return func(e rxthrottle.Event) { wait.Record(context.Background(), e.Wait.Seconds(), opt) }, nil
}

// Close stops observing the Stats of what was added: later collections
// no longer see them, nor those of sources added after Close. The wait
// histogram keeps what it recorded. Close is idempotent.
func (m *Metrics) Close() error {
	if m == nil || m.wait == nil {
		return nil
	}
	m.mu.Lock()
	regs := m.regs
	m.regs, m.closed = nil, true
	m.mu.Unlock()
	var errs []error
	for _, r := range regs {
		errs = append(errs, r.Unregister())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("rxotel: Close: %w", err)
	}
	return nil
}

// attrsOf is the attribute set kind=name, made once per source.
func attrsOf(kind, name string) metric.ObserveOption {
	return metric.WithAttributeSet(attribute.NewSet(attribute.String(kind, name)))
}
