package rxotel

import (
	"context"
	"errors"
	"fmt"
	"reflect"
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

// Metrics exports the Stats of the limiters, Transports and Guards added to
// it through asynchronous OpenTelemetry instruments, read at each
// collection, and the wait histogram that the hooks from ObserveWait feed.
// The instruments are made once, by New, on the MeterProvider of
// WithMeterProvider (the global one by default); add to it before or after
// the first collection.
//
// Names are per kind: a limiter and a Transport may both be "github". A
// Metrics is safe for concurrent use. Its zero value is not usable: call
// New; call Close to stop observing.
type Metrics struct {
	wait metric.Float64Histogram
	reg  metric.Registration
	// The instruments of statseries.Limiter, Single, Keyed, Transport and
	// Guard, in their order.
	limiter, single, keyed, transport, guard []metric.Observable

	mu      sync.Mutex
	sources []source // in the order added
}

// source is one thing added to a Metrics.
type source struct {
	kind    string // "limiter", "transport", "guard": the attribute's name
	name    string
	observe func(o metric.Observer)
}

// New makes the instruments and returns Metrics with nothing added yet. It
// reads the options WithMeterProvider and WithBuckets; a nil option, a nil
// provider, bad buckets or an instrument the provider refuses is an error.
func New(opts ...Option) (*Metrics, error) {
	cfg, err := buildConfig(opts)
	if err != nil {
		return nil, err
	}
	meter := cfg.provider.Meter(ScopeName)
	m := new(Metrics)
	m.wait, err = meter.Float64Histogram("rxthrottle.wait.duration",
		metric.WithUnit("s"),
		metric.WithDescription("How long each admitted caller waited for a token (fed by the limiter's OnAdmit hook)."),
		metric.WithExplicitBucketBoundaries(cfg.buckets...))
	if err != nil {
		return nil, fmt.Errorf("rxotel: New: %w", err)
	}
	var all []metric.Observable
	var errs [5]error
	m.limiter, errs[0] = makeAll(meter, &all, statseries.Limiter)
	m.single, errs[1] = makeAll(meter, &all, statseries.Single)
	m.keyed, errs[2] = makeAll(meter, &all, statseries.Keyed)
	m.transport, errs[3] = makeAll(meter, &all, statseries.Transport)
	m.guard, errs[4] = makeAll(meter, &all, statseries.Guard)
	if err := errors.Join(errs[:]...); err != nil {
		return nil, fmt.Errorf("rxotel: New: %w", err)
	}
	if m.reg, err = meter.RegisterCallback(m.observe, all...); err != nil {
		return nil, fmt.Errorf("rxotel: New: %w", err)
	}
	return m, nil
}

// makeAll makes the instruments of ss, in order, and appends them to all
// too.
func makeAll[S any](meter metric.Meter, all *[]metric.Observable, ss []statseries.Series[S]) ([]metric.Observable, error) {
	out := make([]metric.Observable, 0, len(ss))
	for _, s := range ss {
		inst, err := observable(meter, s)
		if err != nil {
			return nil, err
		}
		out = append(out, inst)
	}
	*all = append(*all, out...)
	return out, nil
}

// AddLimiter exports the Stats of a single-quota limiter (a
// *rxthrottle.Bucket, a *redisstore.Bucket...) with the attribute
// limiter=name. For the wait histogram, also give the limiter the hook
// m.ObserveWait(name) where it takes one (rxthrottle.OnAdmit).
func (m *Metrics) AddLimiter(name string, l rxthrottle.Limiter) error {
	if isNil(l) {
		return fmt.Errorf("rxotel: AddLimiter(%q): the limiter is nil", name)
	}
	return m.addStats("AddLimiter", name, l.Stats, statseries.Single, m.single)
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
	return m.addStats("AddKeyed", name, kl.Stats, statseries.Keyed, m.keyed)
}

// addStats adds a limiter whose Stats stats reads: the instruments of
// every limiter, and its kind's own (ownSeries, made as ownInsts).
func (m *Metrics) addStats(method, name string, stats func() rxthrottle.Stats, ownSeries []statseries.Series[rxthrottle.Stats], ownInsts []metric.Observable) error {
	attrs := attrsOf("limiter", name)
	return m.add("limiter", method, name, func(o metric.Observer) {
		s := stats()
		observeAll(o, statseries.Limiter, m.limiter, s, attrs)
		observeAll(o, ownSeries, ownInsts, s, attrs)
	})
}

// AddTransport exports the TransportStats of t with the attribute
// transport=name. The Stats of t's limiter are its own: add it too.
func (m *Metrics) AddTransport(name string, t *httpthrottle.Transport) error {
	if t == nil {
		return fmt.Errorf("rxotel: AddTransport(%q): the Transport is nil", name)
	}
	attrs := attrsOf("transport", name)
	return m.add("transport", "AddTransport", name, func(o metric.Observer) {
		observeAll(o, statseries.Transport, m.transport, t.Stats(), attrs)
	})
}

// AddGuard exports the Stats of g with the attribute guard=name.
func (m *Metrics) AddGuard(name string, g *guard.Guard) error {
	if g == nil {
		return fmt.Errorf("rxotel: AddGuard(%q): the Guard is nil", name)
	}
	attrs := attrsOf("guard", name)
	return m.add("guard", "AddGuard", name, func(o metric.Observer) {
		observeAll(o, statseries.Guard, m.guard, g.Stats(), attrs)
	})
}

// add appends a source, unless its name is empty or taken for its kind.
func (m *Metrics) add(kind, method, name string, observe func(metric.Observer)) error {
	if m == nil || m.wait == nil {
		return errZero
	}
	if name == "" {
		return fmt.Errorf("rxotel: %s: the name is empty", method)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range m.sources {
		if s.kind == kind && s.name == name {
			return fmt.Errorf("rxotel: %s(%q): a %s of that name is already added", method, name, kind)
		}
	}
	m.sources = append(m.sources, source{kind, name, observe})
	return nil
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
// no longer see them. The wait histogram keeps what it recorded. Close is
// idempotent.
func (m *Metrics) Close() error {
	if m == nil || m.reg == nil {
		return nil
	}
	if err := m.reg.Unregister(); err != nil {
		return fmt.Errorf("rxotel: Close: %w", err)
	}
	return nil
}

// observe is the callback of every asynchronous instrument: it reads the
// Stats of everything added.
func (m *Metrics) observe(_ context.Context, o metric.Observer) error {
	m.mu.Lock()
	sources := m.sources // add only appends: the first len(sources) stay as they are
	m.mu.Unlock()
	for _, s := range sources { // Stats outside m.mu: an Add need not wait for a collection
		s.observe(o)
	}
	return nil
}

// observeAll reports every series of ss, made as insts, for v.
func observeAll[S any](o metric.Observer, ss []statseries.Series[S], insts []metric.Observable, v S, attrs metric.ObserveOption) {
	for i, s := range ss {
		observe(o, s, insts[i], v, attrs)
	}
}

// attrsOf is the attribute set kind=name, made once per source.
func attrsOf(kind, name string) metric.ObserveOption {
	return metric.WithAttributeSet(attribute.NewSet(attribute.String(kind, name)))
}

// isNil reports whether v is nil or a nil pointer in an interface.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}
