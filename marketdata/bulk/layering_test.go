package bulk_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// sqlWord matches the words SQL of the import's path would start with.
var sqlWord = regexp.MustCompile(`(?i)\b(select|insert|update|delete|copy|truncate|pragma|savepoint|rollback|commit|begin|create)\b`)

// TestLayering checks the split between package bulk and package
// marketdata: bulk's non-test files hold no SQL (the tables are
// marketdata's, reached through marketdata.Loader), and no file of package
// marketdata, tests included, imports bulk (bulk depends on marketdata,
// never the reverse).
func TestLayering(t *testing.T) {
	t.Parallel()
	check := func(glob string, fn func(path string, f *ast.File)) int {
		t.Helper()
		paths, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range paths {
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			fn(path, f)
		}
		return len(paths)
	}
	n := check("*.go", func(path string, f *ast.File) {
		if strings.HasSuffix(path, "_test.go") {
			return
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err == nil && sqlWord.MatchString(s) {
				t.Errorf("%s: string %q looks like SQL: SQL of the import belongs in marketdata.Loader", path, s)
			}
			return true
		})
	})
	m := check(filepath.Join("..", "*.go"), func(path string, f *ast.File) {
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == "github.com/tradekit/tradekit/marketdata/bulk" {
				t.Errorf("%s imports %s: marketdata must not depend on bulk", path, p)
			}
		}
	})
	if n < 5 || m < 20 {
		t.Fatalf("found only %d files in bulk and %d in marketdata", n, m)
	}
}
