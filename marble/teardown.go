package marble

import "time"

// leakWait is how long, in virtual time, teardown waits for observed
// pipelines to close their channels once everything is cancelled. Any
// pipeline that honours its context closes at the same instant; one that
// does not is blocked forever, so waiting in virtual time costs nothing.
const leakWait = time.Hour

// teardown cancels every source and subscription and waits until every
// observed pipeline has closed its channel. One that never closes (rxgo's
// Never ignores its context) is abandoned after leakWait of virtual time;
// if goroutines of it are still blocked, synctest fails the test and lists
// them.
func (s *Scheduler) teardown() {
	s.cancel()
	s.mu.Lock()
	s.tearingDown = true
	if s.collectors == 0 {
		close(s.collected)
	}
	s.mu.Unlock()
	timer := time.NewTimer(leakWait)
	defer timer.Stop()
	select {
	case <-s.collected:
		return
	case <-timer.C:
	}
	for _, e := range s.expectations {
		s.mu.Lock()
		closed := e.closed
		s.mu.Unlock()
		if !closed {
			s.logAt(e.caller, "marble: the observed pipeline had not closed its channel an hour (virtual) after Run cancelled everything; if synctest reports blocked goroutines, they ignore their context")
		}
	}
	close(s.abandon)
	<-s.collected
}

// collectorStarted and collectorDone count the goroutines that read
// observed pipelines.
func (s *Scheduler) collectorStarted() {
	s.mu.Lock()
	s.collectors++
	s.mu.Unlock()
}

func (s *Scheduler) collectorDone() {
	s.mu.Lock()
	s.collectors--
	if s.collectors == 0 && s.tearingDown {
		close(s.collected)
	}
	s.mu.Unlock()
}
