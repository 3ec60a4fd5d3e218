package admission

import (
	"testing"
	"time"
)

// TestCounters: what each count does to the Counters, step by step.
func TestCounters(t *testing.T) {
	var c Counters
	for i, s := range []struct {
		do   func()
		want Counters
	}{
		{func() { c.Admit(0) }, Counters{Admitted: 1}},
		{func() { c.Admit(3 * time.Second) }, Counters{Admitted: 2, Waited: 1, TotalWait: 3 * time.Second, MaxWait: 3 * time.Second}},
		{func() { c.Admit(time.Second) }, Counters{Admitted: 3, Waited: 2, TotalWait: 4 * time.Second, MaxWait: 3 * time.Second}},
		{c.Cancel, Counters{Admitted: 3, Waited: 2, Cancelled: 1, TotalWait: 4 * time.Second, MaxWait: 3 * time.Second}},
		{c.Refuse, Counters{Admitted: 3, Waited: 2, Cancelled: 1, Refused: 1, TotalWait: 4 * time.Second, MaxWait: 3 * time.Second}},
		{c.Unadmit, Counters{Admitted: 2, Waited: 2, Cancelled: 2, Refused: 1, TotalWait: 4 * time.Second, MaxWait: 3 * time.Second}},
		{c.Fail, Counters{Admitted: 2, Waited: 2, Cancelled: 2, Refused: 1, Failed: 1, TotalWait: 4 * time.Second, MaxWait: 3 * time.Second}},
	} {
		s.do()
		if c != s.want {
			t.Errorf("step %d: Counters = %+v, want %+v", i, c, s.want)
		}
	}
}
