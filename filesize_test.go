package rxthrottle

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The size rule of the repository's code (issue 30, item 7): a file holds
// one job and a function one step, each small enough to be read whole by
// someone new to the code. A file over the bound is split by job (what
// each part is for), not at a line count.
const (
	maxFileLines = 300
	maxFuncLines = 80
)

// TestFilesAndFunctionsSize fails for every non-test Go or Lua file of
// the repository's tree below this directory (every module in a checkout:
// the nested ones are subdirectories; only the root's in a module zip)
// over maxFileLines lines, and every function or method of a Go one over
// maxFuncLines, counted from its declaration's first line (its doc comment
// apart) to its closing brace, function literals declared outside any
// function included. Tests, testdata and dot directories (.ci,
// .git) are left out.
func TestFilesAndFunctionsSize(t *testing.T) {
	var files []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if (strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go")) || strings.HasSuffix(name, ".lua") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	root := 0
	for _, path := range files {
		checkSize(t, path)
		if filepath.Dir(path) == "." {
			root++
		}
	}
	if root < 10 {
		t.Fatalf("checked %d files of the root package: not run from its directory?", root)
	}
}

// checkSize reports path if it is over maxFileLines lines, and each of its
// functions over maxFuncLines if it is a Go file.
func checkSize(t *testing.T, path string) {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(src, []byte("\n")); n > maxFileLines {
		t.Errorf("%s is %d lines, over %d: split it by job", path, n, maxFileLines)
	}
	if !strings.HasSuffix(path, ".go") {
		return
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			checkFuncSize(t, fset, path, d.Name.Name, d)
		case *ast.GenDecl:
			// A function literal outside any function (var f = func...)
			// is a function too; one inside a function counts in its
			// enclosing function's lines.
			ast.Inspect(d, func(n ast.Node) bool {
				if fl, ok := n.(*ast.FuncLit); ok {
					checkFuncSize(t, fset, path, "a function literal", fl)
					return false
				}
				return true
			})
		}
	}
}

// checkFuncSize reports fn, called name, of path if it is over
// maxFuncLines lines, from its first line (its doc comment apart) to its
// closing brace.
func checkFuncSize(t *testing.T, fset *token.FileSet, path, name string, fn ast.Node) {
	t.Helper()
	from, to := fset.Position(fn.Pos()), fset.Position(fn.End())
	if n := to.Line - from.Line + 1; n > maxFuncLines {
		t.Errorf("%s:%d: %s is %d lines, over %d: break it up", path, from.Line, name, n, maxFuncLines)
	}
}
