// Package adaptive is the simulator of WithAdaptiveConcurrency (SPEC.md,
// "Adaptive concurrency"): on virtual time, a server whose latency rises
// with the calls it serves at once, and whose capacity halves and halves
// again in a second phase, called by a Bucket with the adaptive cap and by
// Buckets with fixed caps of 2, 8 and 32 (WithConcurrency). Its test
// checks that the adaptive cap's goodput is at least the best fixed cap's
// within 10%, and its p99 latency at most the best fixed cap's, in both
// phases; with -svg it draws the runs:
//
//	go test ./examples/adaptive -run TestAdaptiveVersusFixedCaps -args -svg=$PWD/examples/adaptive/adaptive.svg
package adaptive

import (
	"slices"
	"sync"
	"time"
)

// Phase is a stretch of the run with the server's capacity.
type Phase struct {
	Length   time.Duration
	Capacity int // calls served at once at the base latency
}

// Server is the simulated server: a call that starts while c calls are in
// flight (itself included) takes Base while c <= Capacity, and
// Base×(c/Capacity)² above it, so that past its capacity the server
// serves fewer calls a second the more it is sent (its goodput falls).
type Server struct {
	Base   time.Duration
	Phases []Phase
	start  time.Time

	mu       sync.Mutex
	inFlight int
	maxSeen  int
	calls    []Call
}

// Call is one call the server answered.
type Call struct {
	Start, End time.Duration // since the run's start
	InFlight   int           // calls in flight at its start, itself included
}

// NewServer returns a server whose run starts now.
func NewServer(base time.Duration, phases []Phase) *Server {
	return &Server{Base: base, Phases: phases, start: time.Now()}
}

// capacityAt returns the capacity at d into the run.
func (s *Server) capacityAt(d time.Duration) int {
	for _, p := range s.Phases {
		if d < p.Length {
			return p.Capacity
		}
		d -= p.Length
	}
	return s.Phases[len(s.Phases)-1].Capacity
}

// Serve serves one call: it sleeps for the call's latency.
func (s *Server) Serve() {
	s.mu.Lock()
	s.inFlight++
	c := s.inFlight
	s.maxSeen = max(s.maxSeen, c)
	at := time.Since(s.start)
	k := s.capacityAt(at)
	lat := s.Base
	if c > k {
		lat = s.Base * time.Duration(c*c) / time.Duration(k*k)
	}
	s.mu.Unlock()
	time.Sleep(lat)
	s.mu.Lock()
	s.inFlight--
	s.calls = append(s.calls, Call{Start: at, End: at + lat, InFlight: c})
	s.mu.Unlock()
}

// Calls returns the calls answered, by their start.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Clone(s.calls)
	slices.SortFunc(out, func(a, b Call) int { return int(a.Start - b.Start) })
	return out
}

// MaxInFlight returns the most calls the server had in flight at once.
func (s *Server) MaxInFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxSeen
}

// Measure is what a run did in one stretch of time.
type Measure struct {
	Goodput float64       // calls answered a second, of those started in it
	P99     time.Duration // the 99th percentile of their latency
}

// MeasureBetween measures the calls that started in [from, to).
func MeasureBetween(calls []Call, from, to time.Duration) Measure {
	var lats []time.Duration
	for _, c := range calls {
		if c.Start >= from && c.Start < to {
			lats = append(lats, c.End-c.Start)
		}
	}
	if len(lats) == 0 {
		return Measure{}
	}
	slices.Sort(lats)
	i := (len(lats)*99+99)/100 - 1 // the nearest rank
	return Measure{Goodput: float64(len(lats)) / (to - from).Seconds(), P99: lats[i]}
}
