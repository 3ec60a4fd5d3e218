package redisstore

import (
	"context"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/redisstore/redistest"
)

// impatientWorkload runs issue 17's workload on l: 30 goroutines, each
// calling Wait in a loop with a deadline of 1-60 ms, for d; it returns
// how many calls were admitted.
func impatientWorkload(l rxthrottle.Limiter, d time.Duration) int64 {
	var admitted atomic.Int64
	var wg sync.WaitGroup
	end := time.Now().Add(d)
	for range 30 {
		wg.Go(func() {
			for time.Now().Before(end) {
				ctx, cancel := context.WithTimeout(context.Background(), time.Duration(1+rand.IntN(60))*time.Millisecond)
				if l.Wait(ctx) == nil {
					admitted.Add(1)
				}
				cancel()
			}
		})
	}
	wg.Wait()
	return admitted.Load()
}

// TestImpatientReport measures issue 17's starving workload, for the
// closing note; it runs only with RXTHROTTLE_IMPATIENT_REPORT=1:
//
//	RXTHROTTLE_IMPATIENT_REPORT=1 go test -run TestImpatientReport -v ./redisstore/
//
// 30 goroutines with deadlines of 1-60 ms call Wait for 10 s on one
// Per(3, 100ms) quota, through the in-memory Bucket and through a
// redisstore Bucket; then a patient caller (3 s deadline), through the
// same Bucket and through a new one (another process), is timed: the
// formula lets it go within one window.
func TestImpatientReport(t *testing.T) {
	if os.Getenv("RXTHROTTLE_IMPATIENT_REPORT") != "1" {
		t.Skip("set RXTHROTTLE_IMPATIENT_REPORT=1 to measure (about 25s)")
	}
	limit := rxthrottle.Per(3, 100*time.Millisecond)
	d := 10 * time.Second
	mem, err := rxthrottle.NewBucket(limit)
	if err != nil {
		t.Fatal(err)
	}
	memN := impatientWorkload(mem, d)

	srv := redistest.Start(t)
	b, err := NewBucket(srv.Client(t), "impatient", limit)
	if err != nil {
		t.Fatal(err)
	}
	redisN := impatientWorkload(b, d)
	v, err := srv.Do("TIME")
	if err != nil {
		t.Fatal(err)
	}
	tm := v.([]any)
	var sec, usec int64
	for i, p := range tm {
		var x int64
		for _, c := range p.(string) {
			x = 10*x + int64(c-'0')
		}
		if i == 0 {
			sec = x
		} else {
			usec = x
		}
	}
	now := sec*1_000_000 + usec
	var newest int64
	if s := scores(t, srv, b.keys[0]); len(s) > 0 {
		newest = s[len(s)-1]
	}
	t.Logf("in-memory Bucket admitted %d, redisstore %d (%.1f%%); redisstore's newest completion is %v after Redis's now",
		memN, redisN, 100*float64(redisN)/float64(memN), time.Duration(newest-now)*time.Microsecond)
	for _, via := range []string{"the same Bucket", "a new Bucket"} {
		l := b
		if via == "a new Bucket" {
			if l, err = NewBucket(srv.Client(t), "impatient", limit); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		start := time.Now()
		err := l.Wait(ctx)
		cancel()
		t.Logf("patient caller through %s: %v after %v (the formula: at most one window, %v, plus a round trip)", via, err, time.Since(start), limit.Window)
	}
}
