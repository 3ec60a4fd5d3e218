package marble

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"
)

// diffSubscriptions returns "" if got (a source's subscription log) is
// what want describes, else the failure message.
func diffSubscriptions(want, got []subscriptionRecord, frame time.Duration) string {
	sortRecords(want)
	sortRecords(got)
	if reflect.DeepEqual(want, got) || len(want) == 0 && len(got) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("subscriptions differ\n")
	drawRecords(&b, "want", want, frame)
	drawRecords(&b, "got ", got, frame)
	return strings.TrimRight(b.String(), "\n")
}

func sortRecords(rs []subscriptionRecord) {
	sort.SliceStable(rs, func(i, j int) bool {
		a, b := rs[i], rs[j]
		if a.subscribed != b.subscribed {
			return a.subscribed < b.subscribed
		}
		if a.ended != b.ended {
			return a.ended
		}
		return a.unsubscribed < b.unsubscribed
	})
}

func drawRecords(b *strings.Builder, name string, rs []subscriptionRecord, frame time.Duration) {
	if len(rs) == 0 {
		fmt.Fprintf(b, "  %s: (no subscription)\n", name)
		return
	}
	for i, r := range rs {
		label := name + ":"
		if i > 0 {
			label = strings.Repeat(" ", len(label))
		}
		ms := []mark{{at: r.subscribed, symbol: '^'}}
		if r.ended {
			ms = append(ms, mark{at: r.unsubscribed, symbol: '!'})
		}
		// A subscription between frames is drawn with the time
		// progression that puts it there, and its times are given.
		s, _ := drawGrid(ms, frame)
		note := ""
		if !onFrames(frame, ms) {
			s, _, _ = drawLine(ms, frame, 0)
			note = fmt.Sprintf("   (at %v)", r)
		}
		fmt.Fprintf(b, "  %s %s%s\n", label, s, note)
	}
}
