package rxotel_test

import (
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	rxotel "github.com/rxthrottle/rxthrottle/otel"
)

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

	families, err := reg.Gather()
	require.NoError(t, err)
	var names []string
	for _, f := range families {
		names = append(names, f.GetName())
		for _, metric := range f.GetMetric() {
			var labels []string
			for _, l := range metric.GetLabel() {
				labels = append(labels, l.GetName())
			}
			assert.Len(t, labels, 1, "%s: labels %v", f.GetName(), labels)
			assert.Contains(t, []string{"limiter", "transport", "guard"}, labels[0], f.GetName())
		}
	}
	// rxprom's names (prometheus/metrics.go and collector.go), in order.
	want := []string{
		"rxthrottle_admitted_total", "rxthrottle_cancelled_total",
		"rxthrottle_free_tokens",
		"rxthrottle_guard_allowed_total", "rxthrottle_guard_blocks_total", "rxthrottle_guard_checks_total",
		"rxthrottle_guard_errors_total", "rxthrottle_guard_full_total", "rxthrottle_guard_keys_blocked", "rxthrottle_guard_keys_live",
		"rxthrottle_guard_refused_total",
		"rxthrottle_held_tokens", "rxthrottle_keys_blocked", "rxthrottle_keys_live",
		"rxthrottle_max_wait_seconds", "rxthrottle_queued", "rxthrottle_refused_total",
		"rxthrottle_transport_attempt_timeouts_total", "rxthrottle_transport_attempts_total",
		"rxthrottle_transport_cancelled_total",
		"rxthrottle_transport_errors_after_write_total", "rxthrottle_transport_errors_unwritten_total",
		"rxthrottle_transport_header_errors_total",
		"rxthrottle_transport_held_past_error_total", "rxthrottle_transport_holding_past_error",
		"rxthrottle_transport_pushbacks_total", "rxthrottle_transport_resends_total",
		"rxthrottle_transport_retries_total", "rxthrottle_transport_sent_total",
		"rxthrottle_wait_duration_seconds", // rxprom: rxthrottle_wait_seconds
		"rxthrottle_wait_seconds_total", "rxthrottle_waited_total",
	}
	slices.Sort(names)
	assert.Equal(t, want, names)
}
