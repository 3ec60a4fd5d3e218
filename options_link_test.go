package rxthrottle

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEveryOptionNamed: every option type of the package (a type with an
// apply(*config) method) has its name in optionName, which limiterkit's
// users see in "does not read rxthrottle.WithX" errors: a type missing
// there would be named by its Go type instead.
func TestEveryOptionNamed(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	require.NoError(t, err)
	var types []string
	for _, f := range pkgs["rxthrottle"].Files {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Name.Name != "apply" || fn.Recv == nil || len(fn.Type.Params.List) != 1 {
				continue
			}
			if star, ok := fn.Type.Params.List[0].Type.(*ast.StarExpr); !ok || star.X.(*ast.Ident).Name != "config" {
				continue
			}
			types = append(types, fn.Recv.List[0].Type.(*ast.Ident).Name)
		}
	}
	require.NotEmpty(t, types)
	src, err := os.ReadFile("options_link.go")
	require.NoError(t, err)
	for _, typ := range types {
		require.True(t, strings.Contains(string(src), "case "+typ+":"), "optionName does not name %s", typ)
	}
}
