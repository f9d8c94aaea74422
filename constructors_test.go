package tradekit_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestConstructorNames holds the module to one constructor convention
// (docs/style.md, "Constructors"): New builds a package's main type,
// NewStore its store, NewX any other type X. A constructor named after
// the kind of its package's main type (NewService, NewHandler, …) is the
// convention broken: that type is the main one, built by New.
func TestConstructorNames(t *testing.T) {
	t.Parallel()
	mainKinds := map[string]bool{"NewService": true, "NewHandler": true, "NewServer": true, "NewEngine": true}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && path != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if ok && fn.Recv == nil && mainKinds[fn.Name.Name] {
				t.Errorf("%s: %s: a package's main type is built by New (docs/style.md, \"Constructors\")",
					fset.Position(fn.Pos()), fn.Name.Name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
