package redisstore

import (
	"context"
	"sync/atomic"
	"time"
)

// confWatch keeps the stored configuration fresh while callers of this
// process sleep on their reservations. A process reads the configuration
// before its admissions (ensureConf); a caller sleeping on a departure
// the script gave it admits nothing more, so in a process that admits
// nothing else meanwhile another process's SetLimit would not reach it,
// and it would depart under the old limits. While any caller sleeps so, a
// goroutine (one per schedule, none while nobody sleeps) reads the
// configuration every confBound/2 as admissions do; a read that finds
// other limits re-plans the sleepers (config.go, replan), as this
// process's own SetLimit does.
type confWatch struct {
	sleepers atomic.Int64 // callers sleeping on a departure
	running  atomic.Bool  // the watching goroutine runs
	wakes    atomic.Int64 // the watch's wake-ups, for tests
}

// sleepStart counts a caller that starts to sleep on its departure, and
// starts the watch if it is not running; sleepEnd counts it out.
func (s *schedule) sleepStart() {
	w := &s.conf.watch
	w.sleepers.Add(1)
	if !w.running.Load() && w.running.CompareAndSwap(false, true) {
		go s.watchConf()
	}
}

func (s *schedule) sleepEnd() { s.conf.watch.sleepers.Add(-1) }

// watchConf reads the stored configuration when the one in force turns
// confBound/2 old (or a period after a read that failed), as long as a
// caller sleeps on its departure; it ends once none does. While the
// breaker is open it reads nothing: Redis failed, and the next caller's
// probe will tell.
func (s *schedule) watchConf() {
	w := &s.conf.watch
	var tried time.Time
	for {
		due := s.lim.Load().readLocal
		if tried.After(due) {
			due = tried
		}
		due = due.Add(confBound / 2)
		tm := time.NewTimer(time.Until(due))
		<-tm.C
		w.wakes.Add(1)
		if w.sleepers.Load() == 0 {
			w.running.Store(false)
			// A caller that started to sleep as it stopped saw it
			// running, and started none.
			if w.sleepers.Load() == 0 || !w.running.CompareAndSwap(false, true) {
				return
			}
		}
		if s.brk.open.Load() {
			// Redis failed: the next caller's probe will tell. Look
			// again a period on, not at a due instant already past.
			tried = time.Now()
			continue
		}
		if time.Since(s.lim.Load().readLocal) < confBound/2 {
			continue // an admission read it meanwhile: due a period after
		}
		tried = time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), s.endBound())
		_ = s.ensureConf(ctx) // a failure leaves the limits in force: tried again a period later
		cancel()
	}
}
