package integration_test

import (
	"encoding/json"
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle/httpthrottle"
	rxprom "github.com/rxthrottle/rxthrottle/prometheus"
)

// TestDashboardEveryModule checks every metric the prometheus module's
// Grafana dashboard names against a Collector with a source of every kind,
// those of the other modules included (a leasing redisstore Bucket, a
// gRPC Interceptor): the prometheus module's own test checks what it can
// without them.
func TestDashboardEveryModule(t *testing.T) {
	raw, err := os.ReadFile("../../prometheus/grafana/rxthrottle.json")
	require.NoError(t, err)
	var d struct {
		Panels []struct {
			Targets []struct{ Expr string }
		}
	}
	require.NoError(t, json.Unmarshal(raw, &d))

	c, err := rxprom.NewCollector()
	require.NoError(t, err)
	addOneOfEach(t, c)
	b, _ := leasedBucket(t, 20)
	require.NoError(t, c.AddLimiter("shared", b))
	require.NoError(t, rxprom.AddStats(c, "shared", b.LeaseStats))
	require.NoError(t, rxprom.AddStats(c, "api", grpcCalls(t, 1).Stats))
	learning, err := httpthrottle.NewLearningTransport()
	require.NoError(t, err)
	require.NoError(t, rxprom.AddStats(c, "learned", learning.LearnStats))
	got := exposition(t, c)

	name := regexp.MustCompile(`\brxthrottle_[a-z0-9_]+`)
	n := 0
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			for _, m := range name.FindAllString(tg.Expr, -1) {
				n++
				assert.Contains(t, got, "\n"+m+"{", "the dashboard's %s is not exported", m)
			}
		}
	}
	assert.Greater(t, n, 10)
}
