package integration_test

import (
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/guard"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
	rxotel "github.com/rxthrottle/rxthrottle/otel"
	rxprom "github.com/rxthrottle/rxthrottle/prometheus"
)

// exporter is what rxprom's Collector and rxotel's Metrics both offer.
type exporter interface {
	AddLimiter(string, rxthrottle.Limiter) error
	AddKeyed(string, rxthrottle.KeyedLimiter) error
	AddTransport(string, *httpthrottle.Transport) error
	AddGuard(string, *guard.Guard) error
	ObserveWait(string) (func(rxthrottle.Event), error)
}

// addOneOfEach adds a limiter, a keyed limiter, a Transport and a Guard to
// e, and admits one caller through the limiter.
func addOneOfEach(t *testing.T, e exporter) {
	t.Helper()
	hook, err := e.ObserveWait("b")
	require.NoError(t, err)
	b, err := rxthrottle.NewBucket(rxthrottle.Per(1, time.Second), rxthrottle.OnAdmit(hook))
	require.NoError(t, err)
	kl, err := rxthrottle.NewKeyed(rxthrottle.Per(1, time.Second))
	require.NoError(t, err)
	tr, err := httpthrottle.NewTransport(b)
	require.NoError(t, err)
	g, err := guard.New(guard.Policy{Limit: rxthrottle.Per(1, time.Second), Block: time.Second})
	require.NoError(t, err)
	require.NoError(t, e.AddLimiter("b", b))
	require.NoError(t, e.AddKeyed("k", kl))
	require.NoError(t, e.AddTransport("t", tr))
	require.NoError(t, e.AddGuard("g", g))
	require.NoError(t, b.Wait(t.Context()))
}

// familyLabels gathers reg: each family's name, with the label names of
// its series (every series has one).
func familyLabels(t *testing.T, reg prometheus.Gatherer) map[string]string {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	out := map[string]string{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName())
			}
			require.Len(t, labels, 1, "%s: labels %v", f.GetName(), labels)
			out[f.GetName()] = labels[0]
		}
	}
	return out
}

// Through OpenTelemetry's Prometheus exporter, the instruments come out
// under rxprom's names and labels, but for the wait histogram
// (rxthrottle_wait_duration_seconds, rxprom's rxthrottle_wait_seconds):
// a dashboard made for rxprom reads them as they are.
func TestPrometheusNamesAreRxprom(t *testing.T) {
	reg := prometheus.NewRegistry()
	exp, err := otelprom.New(otelprom.WithRegisterer(reg), otelprom.WithoutScopeInfo(), otelprom.WithoutTargetInfo())
	require.NoError(t, err)
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp))
	t.Cleanup(func() { _ = mp.Shutdown(t.Context()) })
	m, err := rxotel.New(rxotel.WithMeterProvider(mp))
	require.NoError(t, err)
	addOneOfEach(t, m)
	viaOTel := familyLabels(t, reg)

	c, err := rxprom.NewCollector()
	require.NoError(t, err)
	addOneOfEach(t, c)
	preg := prometheus.NewPedanticRegistry()
	require.NoError(t, preg.Register(c))
	viaProm := familyLabels(t, preg)

	assert.Equal(t, "limiter", viaOTel["rxthrottle_wait_duration_seconds"])
	delete(viaOTel, "rxthrottle_wait_duration_seconds")
	assert.Equal(t, "limiter", viaProm["rxthrottle_wait_seconds"])
	delete(viaProm, "rxthrottle_wait_seconds")
	assert.Equal(t, viaProm, viaOTel)
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range viaProm {
			if !yield(n) {
				return
			}
		}
	})
	assert.Greater(t, len(names), 25, "every series of the four sources: %v", names)
}
