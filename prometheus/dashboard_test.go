package rxprom_test

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
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

// otherModules are the dashboard's metrics of Stats outside this module:
// internal/integration checks them against the real sources.
var otherModules = []string{"rxthrottle_leased_total"} // redisstore.LeaseStats

// TestDashboard loads the Grafana dashboard shipped in grafana/ and checks
// that every metric its queries name is one the Collector exports, and
// that it has the panels it promises.
func TestDashboard(t *testing.T) {
	d, names := dashboardMetrics(t, "grafana/rxthrottle.json")
	got := exposition(t, fullCollector(t))
	require.NotEmpty(t, names)
	for _, n := range names {
		if slices.Contains(otherModules, n) {
			continue
		}
		assert.Contains(t, got, "\n"+n+"{", "the dashboard's %s is not exported", n)
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
	}, titles)
}
