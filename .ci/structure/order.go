package main

import "slices"

// order returns the files in an order that leaves few references going
// back against it (the greedy order of Eades, Lin and Smyth, 1993): files
// nothing refers to any more go first and files that refer to nothing any
// more go last, as they appear; otherwise the file whose references out
// most exceed those into it goes first, the lowest index of those alike.
// The references that go against the order are few (the fewest is a
// hard problem): those that must be turned round for the files to stand
// on levels.
//
// It orders the files of one package (files, by the references among
// them); references to another package are down the order by
// construction (see report).
func (g *graph) order(files []int) []int {
	outs, ins := map[int]map[int]bool{}, map[int]map[int]bool{}
	left := map[int]bool{}
	for _, v := range files {
		outs[v], ins[v] = map[int]bool{}, map[int]bool{}
		left[v] = true
	}
	for r := range g.refs {
		if left[r[0]] && left[r[1]] {
			outs[r[0]][r[1]] = true
			ins[r[1]][r[0]] = true
		}
	}
	remove := func(v int) {
		delete(left, v)
		for w := range outs[v] {
			delete(ins[w], v)
		}
		for w := range ins[v] {
			delete(outs[w], v)
		}
	}
	sorted := func() []int {
		vs := make([]int, 0, len(left))
		for v := range left {
			vs = append(vs, v)
		}
		slices.Sort(vs)
		return vs
	}
	var first, last []int
	for len(left) > 0 {
		moved := true
		for moved {
			moved = false
			for _, v := range sorted() {
				if len(outs[v]) == 0 {
					last = append(last, v)
					remove(v)
					moved = true
				} else if len(ins[v]) == 0 {
					first = append(first, v)
					remove(v)
					moved = true
				}
			}
		}
		if len(left) == 0 {
			break
		}
		best, bestD := -1, 0
		for _, v := range sorted() {
			if d := len(outs[v]) - len(ins[v]); best < 0 || d > bestD {
				best, bestD = v, d
			}
		}
		first = append(first, best)
		remove(best)
	}
	slices.Reverse(last)
	return append(first, last...)
}
