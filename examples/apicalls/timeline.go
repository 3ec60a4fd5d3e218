package main

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// series is one client's requests as the API saw them.
type series struct {
	name     string
	arrivals []arrival
}

// row is one time slot of one series.
type row struct{ sent, refused int }

// niceSlots are the row heights the automatic slot picks from.
var niceSlots = []time.Duration{
	time.Millisecond, 10 * time.Millisecond, 100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour,
}

// pickSlot returns the smallest nice row height that draws span in at most
// maxRows rows.
func pickSlot(span time.Duration, maxRows int) time.Duration {
	for _, s := range niceSlots {
		if int(span/s)+1 <= maxRows {
			return s
		}
	}
	return (span/time.Duration(maxRows-1) + time.Hour - 1).Truncate(time.Hour)
}

// maxBar is the widest bar of the timeline, in characters.
const maxBar = 20

// maxRows bounds the rows a -slot given by hand can make.
const maxRows = 1000

// writeTimeline draws the series side by side, one row per slot of demo
// time: how many requests reached the API and how many it refused, as
// numbers and as a bar ('#' accepted, 'x' refused).
func writeTimeline(w io.Writer, slot time.Duration, all []series) {
	var span time.Duration
	for _, s := range all {
		for _, a := range s.arrivals {
			span = max(span, a.at)
		}
	}
	note := ""
	switch {
	case slot == 0:
		slot = pickSlot(span, defaultMaxRows)
	case span/slot >= maxRows:
		picked := pickSlot(span, maxRows)
		note = fmt.Sprintf(" (-slot %v would take %d rows)", slot, span/slot+1)
		slot = picked
	}
	n := int(span/slot) + 1
	rows := make([][]row, len(all))
	most := 1
	for i, s := range all {
		rows[i] = make([]row, n)
		for _, a := range s.arrivals {
			r := &rows[i][max(a.at, 0)/slot]
			r.sent++
			if a.refused {
				r.refused++
			}
			most = max(most, r.sent)
		}
	}
	per := (most + maxBar - 1) / maxBar // requests per character
	each := "each character is 1 request"
	if per > 1 {
		each = fmt.Sprintf("each character is up to %d requests", per)
	}

	label := func(d time.Duration) string {
		if slot < time.Second {
			return d.String()
		}
		return clock(d)
	}
	fmt.Fprintf(w, "Timeline: requests reaching the API per %v of demo time%s\n", slot, note)
	fmt.Fprintf(w, "(# accepted, x refused with 429; %s)\n\n", each)
	const cell = 12 + maxBar + 2 // "sent refused bar  "
	var names, heads strings.Builder
	fmt.Fprintf(&names, "  %7s", "")
	fmt.Fprintf(&heads, "  %7s", "time")
	for _, s := range all {
		fmt.Fprintf(&names, "  %-*s", cell, s.name)
		fmt.Fprintf(&heads, "  %-*s", cell, " sent  429s")
	}
	fmt.Fprintln(w, strings.TrimRight(names.String(), " "))
	fmt.Fprintln(w, strings.TrimRight(heads.String(), " "))
	for r := range n {
		var b strings.Builder
		fmt.Fprintf(&b, "  %7s", label(time.Duration(r)*slot))
		for i := range all {
			c := rows[i][r]
			if c.sent == 0 {
				fmt.Fprintf(&b, "  %-*s", cell, "")
				continue
			}
			ok := c.sent - c.refused
			bar := strings.Repeat("#", (ok+per-1)/per) + strings.Repeat("x", (c.refused+per-1)/per)
			fmt.Fprintf(&b, "  %5d %5d %-*s", c.sent, c.refused, cell-12, bar)
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}
