package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"strings"
)

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
