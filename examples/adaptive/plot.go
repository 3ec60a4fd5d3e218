package adaptive

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"
)

// Series is a run as Plot draws it: its name, the server's calls and the
// Bucket's cap every 100 ms.
type Series struct {
	Name  string
	Calls []Call
	Caps  []int
}

// The figure's geometry, in SVG units, and its time step.
const (
	width, left, right = 900.0, 70.0, 160.0
	panelH, gap, top   = 190.0, 40.0, 30.0
	step               = 500 * time.Millisecond
)

var colors = []string{"#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#8c564b"}

// panel is one of the figure's three plots: value is a run's value in the
// step from from, false where it has none.
type panel struct {
	title string
	log   bool
	value func(r Series, from time.Duration) (float64, bool)
}

// panels are the goodput, the p99 latency and the cap, in that order.
func panels() []panel {
	return []panel{
		{"goodput (calls answered a second)", false, func(r Series, from time.Duration) (float64, bool) {
			return MeasureBetween(r.Calls, from, from+step).Goodput, true
		}},
		{"p99 latency (ms)", true, func(r Series, from time.Duration) (float64, bool) {
			m := MeasureBetween(r.Calls, from, from+step)
			return float64(m.P99) / 1e6, m.P99 > 0
		}},
		{"cap on calls in flight", true, func(r Series, from time.Duration) (float64, bool) {
			i := int(from / (100 * time.Millisecond))
			if i >= len(r.Caps) {
				return 0, false
			}
			return float64(r.Caps[i]), r.Caps[i] > 0
		}},
	}
}

// Plot writes an SVG of the runs: over time, the goodput and the p99
// latency in each half second, and the cap on calls in flight (log
// scales for the last two).
func Plot(w io.Writer, runs []Series) error {
	var end time.Duration
	for _, r := range runs {
		for _, c := range r.Calls {
			end = max(end, c.Start)
		}
	}
	end = end.Truncate(step) + step
	var b strings.Builder
	height := top + 3*(panelH+gap)
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif" font-size="12">`+"\n", width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	x := func(d time.Duration) float64 { return left + (width-left-right)*d.Seconds()/end.Seconds() }
	for p, panel := range panels() {
		drawPanel(&b, p, panel, runs, end, x)
	}
	yAxis := top + 3*(panelH+gap) - gap + 16
	for s := time.Duration(0); s <= end; s += 5 * time.Second {
		fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" text-anchor="middle">%.0fs</text>`+"\n", x(s), yAxis, s.Seconds())
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// drawPanel writes panel p's frame, scale and one line a run to b, over
// the time up to end placed at x.
func drawPanel(b *strings.Builder, p int, panel panel, runs []Series, end time.Duration, x func(time.Duration) float64) {
	y0 := top + float64(p)*(panelH+gap)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range runs {
		for from := time.Duration(0); from < end; from += step {
			if v, ok := panel.value(r, from); ok {
				lo, hi = min(lo, v), max(hi, v)
			}
		}
	}
	if !panel.log {
		lo = 0
	}
	hi *= 1.1
	y := func(v float64) float64 {
		if panel.log {
			return y0 + panelH - panelH*math.Log(v/lo*0.9)/math.Log(hi/lo*0.9)
		}
		return y0 + panelH - panelH*(v-lo)/(hi-lo)
	}
	fmt.Fprintf(b, `<text x="%.0f" y="%.0f" font-weight="bold">%s</text>`+"\n", left, y0-8, panel.title)
	fmt.Fprintf(b, `<rect x="%.0f" y="%.0f" width="%.0f" height="%.0f" fill="none" stroke="#999"/>`+"\n", left, y0, width-left-right, panelH)
	for _, v := range ticks(lo, hi, panel.log) {
		fmt.Fprintf(b, `<text x="%.0f" y="%.1f" text-anchor="end">%s</text>`+"\n", left-6, y(v)+4, label(v))
		fmt.Fprintf(b, `<line x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f" stroke="#eee"/>`+"\n", left, width-right, y(v), y(v))
	}
	for i, r := range runs {
		var pts []string
		for from := time.Duration(0); from < end; from += step {
			if v, ok := panel.value(r, from); ok {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(from+step/2), y(v)))
			}
		}
		fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="%d" points="%s"/>`+"\n", colors[i%len(colors)], 1+btoi(i == 0), strings.Join(pts, " "))
		if p == 0 {
			fmt.Fprintf(b, `<text x="%.0f" y="%.0f" fill="%s">%s</text>`+"\n", width-right+12, y0+20+16*float64(i), colors[i%len(colors)], r.Name)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ticks returns a few round values between lo and hi.
func ticks(lo, hi float64, log bool) []float64 {
	var out []float64
	if log {
		for v := math.Pow(10, math.Floor(math.Log10(lo))); v <= hi; v *= 10 {
			for _, m := range []float64{1, 2, 5} {
				if t := v * m; t >= lo && t <= hi {
					out = append(out, t)
				}
			}
		}
		return out
	}
	step := math.Pow(10, math.Floor(math.Log10(hi-lo)))
	if (hi-lo)/step < 4 {
		step /= 2
	}
	for v := math.Ceil(lo/step) * step; v <= hi; v += step {
		out = append(out, v)
	}
	return out
}

func label(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}
