package rxprom_test

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dashboard is what the test reads of grafana/rxthrottle.json.
type dashboard struct {
	Title  string
	Panels []struct {
		Title      string
		Type       string
		Datasource struct{ UID string }
		GridPos    struct{ W, H int }
		Targets    []struct{ Expr string }
	}
	Templating struct {
		List []struct{ Name, Definition string }
	}
}

// dashboardMetrics returns the dashboard and every metric name its queries
// (and its variables') name.
func dashboardMetrics(t *testing.T, path string) (dashboard, []string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var d dashboard
	require.NoError(t, json.Unmarshal(raw, &d))
	name := regexp.MustCompile(`\brxthrottle_[a-z0-9_]+`)
	var names []string
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			names = append(names, name.FindAllString(tg.Expr, -1)...)
		}
	}
	for _, v := range d.Templating.List {
		names = append(names, name.FindAllString(v.Definition, -1)...)
	}
	slices.Sort(names)
	return d, slices.Compact(names)
}

// otherModule reports whether a metric of the dashboard is of Stats
// outside this module (redisstore.LeaseStats, grpcthrottle.Stats):
// internal/integration checks those against the real sources.
func otherModule(name string) bool {
	return name == "rxthrottle_leased_total" || strings.HasPrefix(name, "rxthrottle_grpc_")
}

// TestDashboard loads the Grafana dashboard shipped in grafana/ and checks
// that every metric its queries name is one the Collector exports, that
// every counter the Collector exports has a panel (internal/integration
// checks those of the other modules' Stats), and that it has the panels
// it promises.
func TestDashboard(t *testing.T) {
	d, names := dashboardMetrics(t, "grafana/rxthrottle.json")
	got := exposition(t, fullCollector(t))
	require.NotEmpty(t, names)
	for _, n := range names {
		if !otherModule(n) && !strings.Contains(got, "\n"+n+"{") {
			t.Errorf("the dashboard's %s is not exported", n)
		}
	}
	var titles []string
	for _, p := range d.Panels {
		titles = append(titles, p.Title)
		assert.Equal(t, "timeseries", p.Type, p.Title)
		assert.Equal(t, "${datasource}", p.Datasource.UID, p.Title)
		assert.Positive(t, p.GridPos.W*p.GridPos.H, p.Title)
		assert.NotEmpty(t, p.Targets, p.Title)
	}
	assert.Equal(t, []string{
		"Admissions per limiter", "Refusals and cancellations per limiter", "Wait time", "Hold time",
		"Held and free tokens", "Queue length", "Learned limits", "Lease hit rate", "Concurrency cap",
		"Requests per transport", "Attempts on the wire per transport", "Errors and held tokens per transport",
		"RPCs per interceptor", "RPC errors and kept-open RPCs per interceptor", "Guard checks",
	}, titles)
	assert.Empty(t, missingCounters(got, names), "exported counters the dashboard shows nowhere")
}

// missingCounters returns the counters of the exposition (their "# TYPE
// name counter" lines) that names, the dashboard's metrics, does not
// hold: a counter added to a Stats (TransportStats.Failed, say) shows on
// the dashboard, or this says it does not.
func missingCounters(exposition string, names []string) []string {
	var missing []string
	for line := range strings.Lines(exposition) {
		f := strings.Fields(line)
		if len(f) == 4 && f[0] == "#" && f[1] == "TYPE" && f[3] == "counter" && !slices.Contains(names, f[2]) {
			missing = append(missing, f[2])
		}
	}
	return missing
}
