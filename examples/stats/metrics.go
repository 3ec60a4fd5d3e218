package main

import (
	"expvar"
	"fmt"
	"io"
	"math"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/guard"
)

// metrics is what the hooks feed: counters by key and a histogram of waits,
// the shapes a Prometheus client would hold (CounterVec, Histogram), built
// on expvar and atomics so the example needs no dependency. With
// client_golang, each method body becomes one call:
// waitsTotal.WithLabelValues(e.Key).Inc(), waitSeconds.Observe(...).
//
// Every method is safe for concurrent use and cheap: the limiter's hooks
// run with its lock held.
//
// A label per user is fine for a demo; in production, keys (users, tokens)
// are unbounded, and so would the metrics' cardinality be: label by a
// bounded class (plan, tenant tier) and keep per-key detail in logs.
type metrics struct {
	waits    expvar.Map // callers that found no token and waited, by key
	admitted expvar.Map // callers let through, by key
	refused  expvar.Map // guard: requests refused, by key
	blocks   expvar.Map // guard: times a key was blocked, by key
	wait     histogram  // how long admitted callers waited, in seconds
}

func newMetrics(window time.Duration) *metrics {
	return &metrics{wait: newHistogram(window)}
}

// onWait is the limiter's OnWait hook.
func (m *metrics) onWait(e rxthrottle.Event) { m.waits.Add(e.Key, 1) }

// onAdmit is the limiter's OnAdmit hook.
func (m *metrics) onAdmit(e rxthrottle.Event) {
	m.admitted.Add(e.Key, 1)
	m.wait.observe(e.Wait)
}

// onLimited is the guard's OnLimited hook.
func (m *metrics) onLimited(key string, _ guard.Decision) { m.refused.Add(key, 1) }

// onBlocked is the guard's OnBlocked hook.
func (m *metrics) onBlocked(key string, _ time.Time) { m.blocks.Add(key, 1) }

// histogram counts observations in cumulative buckets, like a Prometheus
// histogram: counts[i] is the number of observations <= bounds[i], the last
// bound being +Inf.
type histogram struct {
	bounds []time.Duration
	counts []atomic.Uint64
	sum    atomic.Int64 // nanoseconds
}

// newHistogram returns a histogram whose buckets suit waits for a limiter
// with the given window: no wait, fractions of the window, a few windows.
func newHistogram(window time.Duration) histogram {
	bounds := []time.Duration{0, window / 4, window / 2, window, 2 * window, 4 * window, math.MaxInt64}
	return histogram{bounds: bounds, counts: make([]atomic.Uint64, len(bounds))}
}

func (h *histogram) observe(d time.Duration) {
	for i, b := range h.bounds {
		if d <= b {
			h.counts[i].Add(1)
		}
	}
	h.sum.Add(int64(d))
}

// bucket is one bucket of a histogram snapshot.
type bucket struct {
	le    string // upper bound in seconds, or "+Inf"
	count uint64
}

// histogramView is a histogram's snapshot.
type histogramView struct {
	buckets    []bucket
	count      uint64
	sumSeconds float64
}

func (h *histogram) view() histogramView {
	v := histogramView{sumSeconds: time.Duration(h.sum.Load()).Seconds()}
	for i, b := range h.bounds {
		v.buckets = append(v.buckets, bucket{le: le(b), count: h.counts[i].Load()})
	}
	v.count = v.buckets[len(v.buckets)-1].count
	return v
}

// le formats a bucket bound the way Prometheus does.
func le(b time.Duration) string {
	if b == math.MaxInt64 {
		return "+Inf"
	}
	return strconv.FormatFloat(b.Seconds(), 'g', -1, 64)
}

// writePrometheus writes the hook-fed metrics and the limiters' gauges in
// the Prometheus text exposition format, as a /metrics endpoint serves them.
func (m *metrics) writePrometheus(w io.Writer, ks rxthrottle.Stats, gs guard.Stats) {
	counterVec := func(name, help string, vec *expvar.Map) {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s counter\n", name, help, name)
		vec.Do(func(kv expvar.KeyValue) { // in key order
			fmt.Fprintf(w, "%s{key=%q} %s\n", name, kv.Key, kv.Value)
		})
	}
	gauge := func(name, help string, v any) {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s gauge\n%s %v\n", name, help, name, name, v)
	}
	counterVec("rxthrottle_waits_total", "Callers that found no free token and waited (OnWait).", &m.waits)
	counterVec("rxthrottle_admitted_total", "Callers let through (OnAdmit).", &m.admitted)
	h := m.wait.view()
	fmt.Fprintf(w, "# HELP rxthrottle_wait_seconds How long admitted callers waited (OnAdmit).\n# TYPE rxthrottle_wait_seconds histogram\n")
	for _, b := range h.buckets {
		fmt.Fprintf(w, "rxthrottle_wait_seconds_bucket{le=%q} %d\n", b.le, b.count)
	}
	fmt.Fprintf(w, "rxthrottle_wait_seconds_sum %g\nrxthrottle_wait_seconds_count %d\n", h.sumSeconds, h.count)
	gauge("rxthrottle_queued", "Callers waiting now (Keyed.Stats).", ks.Queued)
	gauge("rxthrottle_keys_live", "Keys whose state is kept (Keyed.Stats).", ks.KeysLive)
	counterVec("guard_refused_total", "Requests the guard refused (OnLimited).", &m.refused)
	counterVec("guard_blocks_total", "Times the guard blocked a key (OnBlocked).", &m.blocks)
	gauge("guard_keys_blocked", "Keys blocked now (Guard.Stats).", gs.KeysBlocked)
}
