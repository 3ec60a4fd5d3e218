// Command structure prints the figure of rxthrottle's structure that
// CONTRIBUTING.md records ("The structure"): the packages of the module
// tree and their import levels, then the files of those packages, the
// references between them, the levels they stand on, and the references
// that go from a lower level back up to a higher one. Run it from the
// repository's root:
//
//	go run ./.ci/structure        # the figure
//	go run ./.ci/structure -v     # and every upward reference
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
	"go/importer"
	"go/token"
	"io"
	"os"
	"os/exec"
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
	reportPackages(os.Stdout, pkgs)
	g.reportFiles(os.Stdout, pkgs, *verbose)
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
