package specmodel

import "math"

// The order of the callers waiting (SPEC.md, "Priorities" and "Fair
// shares"): the highest priority first; within a priority, the tenant
// whose first caller waiting has the smallest virtual finish
// F = max(V, F_t) + n/w, V being the priority's virtual time at that
// caller's arrival and F_t the finish of the tenant's last caller served;
// at a tie, the earlier arrival. Serving a caller that waited, or one that
// went at once while others of its priority waited, makes its finish its
// tenant's F_t and raises V to it. When none of a priority's callers
// waits, its V starts over at 0 and its tenants' finishes are forgotten (a
// tenant with no caller waiting keeps no credit): that changes no order,
// and keeps the floating-point sums the same as an implementation that
// keeps no state for an idle priority.

// fairState is the virtual times of Run's simulation.
type fairState struct {
	v    map[int]float64     // by priority
	f    map[fairKey]float64 // by priority and tenant
	arrV map[int]float64     // a waiting caller's V at its arrival, by index
}

type fairKey struct {
	prio   int
	tenant string
}

// weight returns item i's weight: Weight, or 1 if that is not a positive
// finite number.
func (s *sim) weight(i int) float64 {
	w := s.items[i].Weight
	if !(w > 0) || math.IsInf(w, 1) {
		return 1
	}
	return w
}

// finish returns the virtual finish of caller i as the first waiting of
// its tenant, V being the virtual time at its arrival.
func (s *sim) finish(i int, v float64) float64 {
	it := s.items[i]
	last, ok := s.fair.f[fairKey{it.Priority, it.Tenant}]
	if !ok {
		last = math.Inf(-1)
	}
	return max(v, last) + float64(s.cost(i))/s.weight(i)
}

// head returns the caller that goes next.
func (s *sim) head() (int, bool) {
	best, bestF := -1, 0.0
	for j, q := range s.queue {
		if !s.firstOfTenant(j) {
			continue
		}
		f := s.finish(q, s.fair.arrV[q])
		if best < 0 || s.items[q].Priority > s.items[best].Priority ||
			s.items[q].Priority == s.items[best].Priority && f < bestF {
			best, bestF = q, f
		}
	}
	return best, best >= 0
}

// firstOfTenant reports whether s.queue[j] is the first caller waiting of
// its priority and tenant.
func (s *sim) firstOfTenant(j int) bool {
	it := s.items[s.queue[j]]
	for _, q := range s.queue[:j] {
		if s.items[q].Priority == it.Priority && s.items[q].Tenant == it.Tenant {
			return false
		}
	}
	return true
}

// leads reports whether caller i, arriving now, goes before every caller
// waiting.
func (s *sim) leads(i int) bool {
	it := s.items[i]
	mine := s.finish(i, s.fair.v[it.Priority])
	for j, q := range s.queue {
		o := s.items[q]
		switch {
		case o.Priority > it.Priority:
			return false
		case o.Priority < it.Priority:
		case o.Tenant == it.Tenant:
			return false
		case s.firstOfTenant(j) && s.finish(q, s.fair.arrV[q]) <= mine:
			return false
		}
	}
	return true
}

// served records the service of caller i, which waited (arrV its V at
// arrival) or went at once: a caller that went at once while none of its
// priority waited changes nothing.
func (s *sim) served(i int, waited bool) {
	if s.fair.v == nil {
		s.fair = fairState{v: map[int]float64{}, f: map[fairKey]float64{}, arrV: map[int]float64{}}
	}
	it := s.items[i]
	v := s.fair.v[it.Priority]
	if waited {
		v = s.fair.arrV[i]
	} else if !s.priorityWaits(it.Priority) {
		return
	}
	f := s.finish(i, v)
	s.fair.v[it.Priority] = max(s.fair.v[it.Priority], f)
	s.fair.f[fairKey{it.Priority, it.Tenant}] = f
}

// queued records caller i's arrival in the queue.
func (s *sim) queued(i int) {
	if s.fair.v == nil {
		s.fair = fairState{v: map[int]float64{}, f: map[fairKey]float64{}, arrV: map[int]float64{}}
	}
	s.fair.arrV[i] = s.fair.v[s.items[i].Priority]
}

// left is called when a caller of priority p has left the queue (served or
// withdrawn): if none of p waits, p starts over.
func (s *sim) left(p int) {
	if s.priorityWaits(p) {
		return
	}
	s.fair.v[p] = 0
	for k := range s.fair.f {
		if k.prio == p {
			delete(s.fair.f, k)
		}
	}
}

// priorityWaits reports whether a caller of priority p waits.
func (s *sim) priorityWaits(p int) bool {
	for _, q := range s.queue {
		if s.items[q].Priority == p {
			return true
		}
	}
	return false
}
