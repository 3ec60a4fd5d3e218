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
		tl := Timeline{Subscribe: int64(r.subscribed / frame), Unsubscribe: NoFrame}
		if r.ended {
			tl.Unsubscribe = int64(r.unsubscribed / frame)
		}
		s, _ := draw(tl)
		note := ""
		if r.subscribed%frame != 0 || r.ended && r.unsubscribed%frame != 0 {
			note = fmt.Sprintf("   (between frames: %v)", r)
		}
		fmt.Fprintf(b, "  %s %s%s\n", label, s, note)
	}
}
