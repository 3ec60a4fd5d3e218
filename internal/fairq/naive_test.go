package fairq

import "math"

// naive is the rule of the package doc restated as simply as it can be:
// every caller in one list in arrival order, every finish remembered, the
// next caller found by scanning everyone.
type naive struct {
	calls   []Caller
	arrV    []float64 // the virtual time of the caller's priority at arrival
	waiting []int     // in arrival order
	v       map[int]float64
	f       map[[2]any]float64 // by (priority, tenant)
}

func (n *naive) vOf(p int) float64 { return n.v[p] }

func (n *naive) push(c Caller) {
	if n.v == nil {
		n.v, n.f = map[int]float64{}, map[[2]any]float64{}
	}
	c = c.norm()
	n.calls = append(n.calls, c)
	n.arrV = append(n.arrV, n.vOf(c.Prio))
	n.waiting = append(n.waiting, len(n.calls)-1)
}

// tag returns the finish of i, the first waiting of its tenant.
func (n *naive) tag(i int, f map[[2]any]float64) float64 {
	c := n.calls[i]
	last, ok := f[[2]any{c.Prio, c.Tenant}]
	if !ok {
		last = math.Inf(-1)
	}
	return max(n.arrV[i], last) + float64(c.Cost)/c.Weight
}

// next returns the index in waiting of the caller that goes next among
// those of waiting, and its finish, with the finishes f.
func (n *naive) next(waiting []int, f map[[2]any]float64) (int, float64) {
	best, bestTag := -1, 0.0
	for j, i := range waiting {
		c := n.calls[i]
		first := true // the first of its tenant and priority?
		for _, k := range waiting[:j] {
			if n.calls[k].Prio == c.Prio && n.calls[k].Tenant == c.Tenant {
				first = false
			}
		}
		if !first {
			continue
		}
		tag := n.tag(i, f)
		if best < 0 {
			best, bestTag = j, tag
			continue
		}
		b := n.calls[waiting[best]]
		if c.Prio > b.Prio || c.Prio == b.Prio && tag < bestTag {
			best, bestTag = j, tag
		}
	}
	return best, bestTag
}

func (n *naive) pop() int {
	j, tag := n.next(n.waiting, n.f)
	i := n.waiting[j]
	c := n.calls[i]
	n.v[c.Prio] = max(n.v[c.Prio], tag)
	n.f[[2]any{c.Prio, c.Tenant}] = tag
	n.waiting = append(n.waiting[:j:j], n.waiting[j+1:]...)
	n.restart(c.Prio)
	return i
}

// restart starts priority p's virtual time over if none of its callers
// waits (which changes no order: every finish is at most V then).
func (n *naive) restart(p int) {
	for _, i := range n.waiting {
		if n.calls[i].Prio == p {
			return
		}
	}
	n.v[p] = 0
	for k := range n.f {
		if k[0] == p {
			delete(n.f, k)
		}
	}
}

func (n *naive) remove(i int) {
	for j, k := range n.waiting {
		if k == i {
			n.waiting = append(n.waiting[:j:j], n.waiting[j+1:]...)
			break
		}
	}
	n.restart(n.calls[i].Prio)
}

func (n *naive) leads(c Caller) bool {
	c = c.norm()
	if len(n.waiting) == 0 {
		return true
	}
	n.push(c)
	j, _ := n.next(n.waiting, n.f)
	won := n.waiting[j] == len(n.calls)-1
	n.calls, n.arrV, n.waiting = n.calls[:len(n.calls)-1], n.arrV[:len(n.arrV)-1], n.waiting[:len(n.waiting)-1]
	return won
}

func (n *naive) admit(c Caller) {
	c = c.norm()
	if n.v == nil {
		return
	}
	for _, i := range n.waiting {
		if n.calls[i].Prio == c.Prio {
			n.push(c)
			tag := n.tag(len(n.calls)-1, n.f)
			n.calls, n.arrV, n.waiting = n.calls[:len(n.calls)-1], n.arrV[:len(n.arrV)-1], n.waiting[:len(n.waiting)-1]
			n.v[c.Prio] = tag
			n.f[[2]any{c.Prio, c.Tenant}] = tag
			return
		}
	}
}

// ahead serves copies of the waiting callers until i comes.
func (n *naive) ahead(i int) []int {
	waiting := append([]int(nil), n.waiting...)
	f := map[[2]any]float64{}
	for k, v := range n.f {
		f[k] = v
	}
	var out []int
	for {
		j, tag := n.next(waiting, f)
		k := waiting[j]
		if k == i {
			return out
		}
		out = append(out, k)
		f[[2]any{n.calls[k].Prio, n.calls[k].Tenant}] = tag
		waiting = append(waiting[:j:j], waiting[j+1:]...)
	}
}
