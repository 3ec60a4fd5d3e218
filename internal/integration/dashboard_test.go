package integration_test

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxthrottle/rxthrottle/httpthrottle"
	rxprom "github.com/rxthrottle/rxthrottle/prometheus"
)

// TestDashboardEveryModule checks every metric the prometheus module's
// Grafana dashboard names against a Collector with a source of every kind,
// those of the other modules included (a leasing redisstore Bucket, a
// gRPC Interceptor), and that every counter they export has a panel: the
// prometheus module's own test checks what it can without them.
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
	var shown []string
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			for _, m := range name.FindAllString(tg.Expr, -1) {
				shown = append(shown, m)
				assert.Contains(t, got, "\n"+m+"{", "the dashboard's %s is not exported", m)
			}
		}
	}
	assert.Greater(t, len(shown), 10)
	// Every counter exported has a panel: grpcthrottle's Stats.Failed
	// (rxthrottle_grpc_failed_total) had none.
	var missing []string
	for line := range strings.Lines(got) {
		f := strings.Fields(line)
		if len(f) == 4 && f[0] == "#" && f[1] == "TYPE" && f[3] == "counter" && !slices.Contains(shown, f[2]) {
			missing = append(missing, f[2])
		}
	}
	assert.Empty(t, missing, "exported counters the dashboard shows nowhere")
}
