package rxthrottle

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The root package's size rule (issue 30, item 7): a file holds one job
// and a function one step, each small enough to be read whole by someone
// new to the code. A file over the bound is split by job (what each part
// is for), not at a line count.
const (
	maxFileLines = 300
	maxFuncLines = 80
)

// TestRootFilesAndFunctionsSize fails for every non-test file of the root
// package over maxFileLines lines and every function or method in one over
// maxFuncLines, counted from its declaration's first line (its doc comment
// apart) to its closing brace.
func TestRootFilesAndFunctionsSize(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		if n := bytes.Count(src, []byte("\n")); n > maxFileLines {
			t.Errorf("%s is %d lines, over %d: split it by job", path, n, maxFileLines)
		}
		f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			from, to := fset.Position(fd.Pos()), fset.Position(fd.End())
			if n := to.Line - from.Line + 1; n > maxFuncLines {
				t.Errorf("%s:%d: %s is %d lines, over %d: break it up", path, from.Line, fd.Name.Name, n, maxFuncLines)
			}
		}
	}
	if checked < 10 {
		t.Fatalf("checked %d files: not run from the root package's directory?", checked)
	}
}
