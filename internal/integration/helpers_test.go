package integration_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle"
	rxprom "github.com/rxthrottle/rxthrottle/prometheus"
)

// exposition registers c on a pedantic registry and returns what a scrape
// reads, in the text format.
func exposition(t *testing.T, c prometheus.Collector) string {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(c))
	mfs, err := reg.Gather()
	require.NoError(t, err)
	var b strings.Builder
	for _, mf := range mfs {
		_, err := expfmt.MetricFamilyToText(&b, mf)
		require.NoError(t, err)
	}
	return b.String()
}

// observeWait is c.ObserveWait(name), which must not fail.
func observeWait(t *testing.T, c *rxprom.Collector, name string) func(rxthrottle.Event) {
	t.Helper()
	hook, err := c.ObserveWait(name)
	require.NoError(t, err)
	return hook
}
