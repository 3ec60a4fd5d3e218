// Command structure prints the figure of rxthrottle's structure that
// CONTRIBUTING.md records ("The structure"): the packages of the module
// tree and their import levels, then the files of those packages, the
// references between them, the levels they stand on, and the references
// that go from a lower level back up to a higher one. Run it from the
// repository's root:
//
//	go run .ci/structure/main.go        # the figure
//	go run .ci/structure/main.go -v     # and every upward reference
//
// A file refers to another when it uses a name (a type, function, method,
// field, variable or constant) declared in the other, as go/types resolves
// it; only the non-test files of the packages counted take part. Files
// that refer to each other, directly or through others, form a cycle: a
// level holds such a cycle as one, and a file's level is one more than the
// highest level it refers to (0 for a file that refers to none). A
// reference inside a cycle goes back up: it is from a file to one that
// depends on it, whichever level one calls the pair's. Packages cannot
// form a cycle (Go refuses one), so every import goes down a level.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

const module = "github.com/rxthrottle/rxthrottle"

// skipped are the packages the figure leaves out: examples, benchmarks
// and modules of tests only, which no user imports.
func skipped(path string) bool {
	rel := strings.TrimPrefix(strings.TrimPrefix(path, module), "/")
	for _, p := range []string{"examples", "bench", "internal/integration", "httpthrottle/interop"} {
		if rel == p || strings.HasPrefix(rel, p+"/") {
			return true
		}
	}
	return false
}

type listed struct {
	ImportPath string
	Dir        string
	Export     string
	GoFiles    []string
	Imports    []string
	Standard   bool
}

func main() {
	verbose := flag.Bool("v", false, "list every upward reference")
	flag.Parse()
	pkgs, exports, err := list()
	if err != nil {
		fmt.Fprintln(os.Stderr, "structure:", err)
		os.Exit(1)
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok || f == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
	g := newGraph()
	root, _ := os.Getwd()
	for _, p := range pkgs {
		if err := g.addPackage(fset, imp, root, p); err != nil {
			fmt.Fprintln(os.Stderr, "structure:", err)
			os.Exit(1)
		}
	}
	g.report(os.Stdout, pkgs, *verbose)
}

// list returns the packages counted, in import order, and the export data
// of every package they import. It asks go list, over every module go.work
// uses.
func list() ([]listed, map[string]string, error) {
	patterns := []string{"./..."}
	work, err := os.ReadFile("go.work")
	if err != nil {
		return nil, nil, err
	}
	sc := bufio.NewScanner(bytes.NewReader(work))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); strings.HasPrefix(l, "./") {
			patterns = append(patterns, l+"/...")
		}
	}
	cmd := exec.Command("go", append([]string{"list", "-e", "-deps", "-export", "-json=ImportPath,Dir,Export,GoFiles,Imports,Standard"}, patterns...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, nil, fmt.Errorf("go list: %w", err)
	}
	var pkgs []listed
	exports := map[string]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p listed
		if err := dec.Decode(&p); err != nil {
			return nil, nil, err
		}
		exports[p.ImportPath] = p.Export
		if !p.Standard && (p.ImportPath == module || strings.HasPrefix(p.ImportPath, module+"/")) && !skipped(p.ImportPath) && len(p.GoFiles) > 0 {
			pkgs = append(pkgs, p)
		}
	}
	return pkgs, exports, nil
}

type graph struct {
	files []string                   // by index
	index map[string]int             // file (relative) -> index
	pkgOf map[string]string          // file -> package
	refs  map[[2]int]map[string]bool // the names each reference uses
}

func newGraph() *graph {
	return &graph{index: map[string]int{}, pkgOf: map[string]string{}, refs: map[[2]int]map[string]bool{}}
}

func (g *graph) node(file string) int {
	if i, ok := g.index[file]; ok {
		return i
	}
	g.index[file] = len(g.files)
	g.files = append(g.files, file)
	return len(g.files) - 1
}

// addPackage type-checks p's files and adds their references to files of
// the packages counted (those already added, which p may import, and p's
// own).
func (g *graph) addPackage(fset *token.FileSet, imp types.Importer, root string, p listed) error {
	var files []*ast.File
	for _, name := range p.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, 0)
		if err != nil {
			return err
		}
		files = append(files, f)
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: imp, Error: func(error) {}}
	if _, err := conf.Check(p.ImportPath, fset, files, info); err != nil {
		return fmt.Errorf("%s: %w", p.ImportPath, err)
	}
	rel := func(path string) string {
		r, err := filepath.Rel(root, path)
		if err != nil {
			return path
		}
		return r
	}
	for _, f := range files {
		g.pkgOf[rel(fset.File(f.Pos()).Name())] = p.ImportPath
		g.node(rel(fset.File(f.Pos()).Name()))
	}
	for id, obj := range info.Uses {
		if obj.Pkg() == nil || !obj.Pos().IsValid() {
			continue
		}
		from := rel(fset.File(id.Pos()).Name())
		to := rel(fset.Position(obj.Pos()).Filename)
		if from == to || strings.HasSuffix(to, "_test.go") {
			continue
		}
		if _, counted := g.pkgOf[to]; !counted {
			continue
		}
		r := [2]int{g.node(from), g.node(to)}
		if g.refs[r] == nil {
			g.refs[r] = map[string]bool{}
		}
		g.refs[r][obj.Name()] = true
	}
	return nil
}

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

func (g *graph) report(w io.Writer, pkgs []listed, verbose bool) {
	// Packages: levels of the import graph.
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

	// The files in order: the packages importers first (go list -deps
	// lists them imports first), each package's files in its own order.
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
}
