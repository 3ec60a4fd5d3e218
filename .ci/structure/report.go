package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// reportPackages writes the packages' line of the figure: their levels in
// the import graph.
func reportPackages(w io.Writer, pkgs []listed) {
	plevel := map[string]int{}
	imports := 0
	for _, p := range pkgs { // go list -deps lists a package after its imports
		l := 0
		for _, q := range p.Imports {
			if ql, ok := plevel[q]; ok {
				imports++
				l = max(l, ql+1)
			}
		}
		plevel[p.ImportPath] = l
	}
	plevels := 0
	for _, l := range plevel {
		plevels = max(plevels, l+1)
	}
	fmt.Fprintf(w, "packages: %d on %d levels, %d imports between them, none upward (Go refuses a cycle)\n", len(pkgs), plevels, imports)
}

// reportFiles writes the files' lines of the figure: their levels, their
// references and the upward ones, by package, and with verbose each upward
// reference and the names it uses.
func (g *graph) reportFiles(w io.Writer, pkgs []listed, verbose bool) {
	order := g.filesInOrder(pkgs)
	pos := make([]int, len(order))
	for i, v := range order {
		pos[v] = i
	}
	var up [][2]int
	down := make([][]int, len(g.files))
	for r := range g.refs {
		if pos[r[1]] < pos[r[0]] {
			up = append(up, r)
		} else {
			down[r[0]] = append(down[r[0]], r[1])
		}
	}
	// A file's level is one more than the highest it refers to down the
	// order (0 for none): walk the order from its end.
	level := make([]int, len(g.files))
	levels := 0
	for i := len(order) - 1; i >= 0; i-- {
		v := order[i]
		for _, w := range down[v] {
			level[v] = max(level[v], level[w]+1)
		}
		levels = max(levels, level[v]+1)
	}
	fmt.Fprintf(w, "files: %d on %d levels, %d references between them, %d of them upward\n",
		len(g.files), levels, len(g.refs), len(up))
	byPkg := map[string]int{}
	for _, r := range up {
		byPkg[g.pkgOf[g.files[r[0]]]]++
	}
	var names []string
	for p := range byPkg {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, p := range names {
		fmt.Fprintf(w, "  %-60s %d upward\n", p, byPkg[p])
	}
	if verbose {
		g.listUpward(w, up)
	}
}

// filesInOrder returns the files in order: the packages importers first
// (go list -deps lists them imports first), each package's files in its
// own order.
func (g *graph) filesInOrder(pkgs []listed) []int {
	var order []int
	for i := len(pkgs) - 1; i >= 0; i-- {
		var files []int
		for v, f := range g.files {
			if g.pkgOf[f] == pkgs[i].ImportPath {
				files = append(files, v)
			}
		}
		order = append(order, g.order(files)...)
	}
	return order
}

// listUpward writes each upward reference and the names it uses, sorted.
func (g *graph) listUpward(w io.Writer, up [][2]int) {
	lines := make([]string, 0, len(up))
	for _, r := range up {
		var names []string
		for n := range g.refs[r] {
			names = append(names, n)
		}
		sort.Strings(names)
		lines = append(lines, fmt.Sprintf("  %s -> %s: %s", g.files[r[0]], g.files[r[1]], strings.Join(names, ", ")))
	}
	sort.Strings(lines)
	fmt.Fprintln(w, "upward references:")
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}
