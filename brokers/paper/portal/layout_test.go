package portal

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// parseDir parses the non-test Go files of dir.
func parseDir(t *testing.T, dir string) map[string]*ast.File {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]*ast.File{}
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files[p] = f
	}
	if len(files) == 0 {
		t.Fatalf("no Go files in %s", dir)
	}
	return files
}

// TestEngineImportsNoPortal checks the direction of the split: the
// portal imports the engine, package brokers/paper, and the engine never
// imports the portal.
func TestEngineImportsNoPortal(t *testing.T) {
	for path, f := range parseDir(t, "..") {
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); strings.HasSuffix(p, "/brokers/paper/portal") {
				t.Errorf("%s imports %s: the engine must not depend on its pages", path, p)
			}
		}
	}
}

// sqlCalls are the methods that run SQL or open a transaction.
var sqlCalls = map[string]bool{
	"NewRaw": true, "NewSelect": true, "NewInsert": true, "NewUpdate": true, "NewDelete": true,
	"RunInTx": true, "BeginTx": true, "ExecContext": true, "QueryContext": true, "QueryRowContext": true,
}

// TestHandlersRunNoSQL checks that the handlers (the methods named
// handle…, and every function that writes an answer: one with an
// http.ResponseWriter parameter) run no SQL and open no transaction: they
// call the portal's store functions or the engine's API.
func TestHandlersRunNoSQL(t *testing.T) {
	n := 0
	for path, f := range parseDir(t, ".") {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil || !strings.HasPrefix(fd.Name.Name, "handle") && !writesAnswer(fd) {
				continue
			}
			n++
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if call := sel.Sel.Name; sqlCalls[call] {
					t.Errorf("%s: %s calls %s: move the SQL into a store function", path, fd.Name.Name, call)
				}
				return true
			})
		}
	}
	if n < 10 {
		t.Fatalf("found %d handlers, want every page and endpoint's", n)
	}
}

// writesAnswer reports whether fd has an http.ResponseWriter parameter.
func writesAnswer(fd *ast.FuncDecl) bool {
	for _, p := range fd.Type.Params.List {
		if sel, ok := p.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "ResponseWriter" {
			return true
		}
	}
	return false
}
