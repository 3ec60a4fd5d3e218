package rxotel

import (
	"context"
	"fmt"
	"slices"

	"go.opentelemetry.io/otel/metric"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/internal/statseries"
)

// add appends a source whose figures read returns, those keep accepts
// (all with a nil keep), unless its name is empty, its figures are not
// exportable (statseries.Check), or a source of its Source and name
// already exports one of them. A source whose figures all have New's
// instruments is observed by New's callback; the instruments of figures
// not seen before are made, and a source with any of those gets a callback
// of its own. The SDK's calls (making instruments, registering a callback)
// are made without m.mu: a collection holds the SDK's lock while New's
// callback takes m.mu.
func (m *Metrics) add(method, name string, read func() []rxthrottle.Figure, keep func(string) bool) error {
	if m == nil || m.wait == nil {
		return errZero
	}
	if name == "" {
		return fmt.Errorf("rxotel: %s: the name is empty", method)
	}
	first := read()
	if err := statseries.Check(first); err != nil {
		return fmt.Errorf("rxotel: %s(%q): %w", method, name, err)
	}
	src := &source{kind: first[0].Source, name: name, read: read, insts: make([]metric.Observable, len(first)),
		attrs: attrsOf(first[0].Source, name)}
	for i, f := range first {
		if keep != nil && !keep(f.Name) {
			continue
		}
		src.names = append(src.names, f.Name)
		m.mu.Lock()
		inst := m.insts[f.Name]
		m.mu.Unlock()
		if inst == nil {
			var err error
			if inst, err = observable(m.meter, f); err != nil { // the SDK gives one instrument per name
				return fmt.Errorf("rxotel: %s(%q): %w", method, name, err)
			}
		}
		src.insts[i] = inst
	}

	m.mu.Lock()
	for _, o := range m.all {
		if o.kind == src.kind && o.name == name && slices.ContainsFunc(o.names, func(n string) bool { return slices.Contains(src.names, n) }) {
			m.mu.Unlock()
			return fmt.Errorf("rxotel: %s(%q): a %s of that name is already added", method, name, src.kind)
		}
	}
	for i, f := range first {
		if src.insts[i] != nil && m.insts[f.Name] == nil {
			m.insts[f.Name] = src.insts[i]
		}
	}
	m.all = append(m.all, src)
	closed, shared := m.closed, m.usesNew(src)
	if shared && !closed {
		m.sources = append(m.sources, src)
	}
	m.mu.Unlock()
	if shared || closed {
		return nil
	}
	reg, err := m.meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		src.observe(o)
		return nil
	}, slices.DeleteFunc(slices.Clone(src.insts), func(i metric.Observable) bool { return i == nil })...)
	if err != nil {
		return fmt.Errorf("rxotel: %s(%q): %w", method, name, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed { // Close ran meanwhile
		return reg.Unregister()
	}
	m.regs = append(m.regs, reg)
	return nil
}

// usesNew reports whether every instrument of src is one New made, so
// that New's callback may observe it.
func (m *Metrics) usesNew(src *source) bool {
	for _, n := range src.names {
		if !m.fromNew[n] {
			return false
		}
	}
	return true
}

// observe reads the source's Stats and reports each of its figures.
func (s *source) observe(o metric.Observer) {
	for i, f := range s.read() {
		if i >= len(s.insts) || s.insts[i] == nil {
			continue
		}
		if fi, ok := s.insts[i].(metric.Float64Observable); ok {
			o.ObserveFloat64(fi, f.Value, s.attrs)
		} else {
			o.ObserveInt64(s.insts[i].(metric.Int64Observable), int64(f.Value), s.attrs)
		}
	}
}

// observe is New's callback: it reads the Stats of the sources whose
// instruments are all New's.
func (m *Metrics) observe(_ context.Context, o metric.Observer) error {
	m.mu.Lock()
	sources := m.sources // add only appends: the first len(sources) stay as they are
	m.mu.Unlock()
	for _, s := range sources { // Stats outside m.mu: an Add need not wait for a collection
		s.observe(o)
	}
	return nil
}
