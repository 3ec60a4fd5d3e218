package main

import (
	"expvar"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/guard"
	rxprom "github.com/rxthrottle/rxthrottle/prometheus"
)

// The names the limiters are exported under: the limiter="users" and
// guard="api" labels of /metrics.
const (
	keyedName = "users"
	guardName = "api"
)

// metrics is what the example exports. For /metrics, a Prometheus registry
// of its own holding an rxprom.Collector: the limiters' Stats, read at each
// scrape, and a histogram of waits that the OnAdmit hook feeds. For
// /debug/vars, counters by key that the hooks feed (expvar.Maps).
//
// Every hook is safe for concurrent use and cheap: the limiter's hooks run
// with its lock held.
//
// Counting by user is fine for a demo; in production, keys (users, tokens)
// are unbounded, and so would the number of series be: Prometheus gets no
// key label, and per-key detail belongs in logs.
type metrics struct {
	registry    *prometheus.Registry
	collector   *rxprom.Collector
	observeWait func(rxthrottle.Event) // the collector's OnAdmit hook

	waits    expvar.Map // callers that found no token and waited, by key
	admitted expvar.Map // callers let through, by key
	refused  expvar.Map // guard: requests refused, by key
	blocks   expvar.Map // guard: times a key was blocked, by key
}

// newMetrics returns metrics whose wait histogram has buckets that suit a
// limiter with the given window: no wait, fractions of the window, a few
// windows.
func newMetrics(window time.Duration) (*metrics, error) {
	w := window.Seconds()
	c, err := rxprom.NewCollector(rxprom.WithBuckets(0, w/4, w/2, w, 2*w, 4*w))
	if err != nil {
		return nil, err
	}
	reg := prometheus.NewRegistry()
	if err := reg.Register(c); err != nil {
		return nil, err
	}
	observe, err := c.ObserveWait(keyedName)
	if err != nil {
		return nil, err
	}
	return &metrics{registry: reg, collector: c, observeWait: observe}, nil
}

// watch adds the limiters to the collector, under their names.
func (m *metrics) watch(keyed *rxthrottle.Keyed, g *guard.Guard) error {
	if err := m.collector.AddKeyed(keyedName, keyed); err != nil {
		return err
	}
	return m.collector.AddGuard(guardName, g)
}

// handler serves the registry in the Prometheus exposition format.
func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

// onWait is the limiter's OnWait hook.
func (m *metrics) onWait(e rxthrottle.Event) { m.waits.Add(e.Key, 1) }

// onAdmit is the limiter's OnAdmit hook.
func (m *metrics) onAdmit(e rxthrottle.Event) {
	m.admitted.Add(e.Key, 1)
	m.observeWait(e)
}

// onLimited is the guard's OnLimited hook.
func (m *metrics) onLimited(key string, _ guard.Decision) { m.refused.Add(key, 1) }

// onBlocked is the guard's OnBlocked hook.
func (m *metrics) onBlocked(key string, _ time.Time) { m.blocks.Add(key, 1) }
