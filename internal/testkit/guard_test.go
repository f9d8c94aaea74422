package testkit

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// guardExempt are the directories, relative to the module's root, whose
// tests the guards below skip: only this package, the one place allowed
// to poll. Every other test of the module is held to the guards.
var guardExempt = []string{"internal/testkit"}

// clockExempt are the test files allowed a clock of their own, relative
// to the module's root: none, since every test now uses [Clock]. An entry
// here is a debt to pay, not a place to hide one.
var clockExempt = map[string]bool{}

// testFile is a parsed _test.go file of the module.
type testFile struct {
	rel  string // slash-separated, relative to the module's root
	fset *token.FileSet
	file *ast.File
}

// moduleTests parses the module's _test.go files outside guardExempt.
func moduleTests(tb testing.TB, root string) []testFile {
	tb.Helper()
	var out []testFile
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			for _, ex := range guardExempt {
				if rel == ex {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		out = append(out, testFile{rel: rel, fset: fset, file: f})
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	if len(out) < 50 {
		tb.Fatalf("found %d test files under %s: not the module's root?", len(out), root)
	}
	return out
}

// isSleep reports whether n is a call of time.Sleep.
func isSleep(n ast.Node) bool {
	call, ok := n.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	return ok && x.Name == "time" && sel.Sel.Name == "Sleep"
}

// commentLines returns the lines of f on which a comment ends, and those
// on which one starts.
func commentLines(tf testFile) (ends, starts map[int]bool) {
	ends, starts = map[int]bool{}, map[int]bool{}
	for _, g := range tf.file.Comments {
		for _, c := range g.List {
			starts[tf.fset.Position(c.Pos()).Line] = true
			ends[tf.fset.Position(c.End()).Line] = true
		}
	}
	return ends, starts
}

// checkSleeps returns the module's test sleeps that break the rules: a
// time.Sleep inside a for loop is a hand-written polling loop, unless a
// comment on its own line says why it is not one (a measurement's pace);
// any other time.Sleep needs a comment on its line or just above saying
// what it is for, since it must not wait for something to happen
// ([Eventually] does that).
func checkSleeps(files []testFile) []string {
	var bad []string
	for _, tf := range files {
		ends, starts := commentLines(tf)
		var visit func(n ast.Node, inLoop bool)
		visit = func(n ast.Node, inLoop bool) {
			ast.Inspect(n, func(m ast.Node) bool {
				switch m := m.(type) {
				case *ast.ForStmt:
					if m != n {
						visit(m, true)
						return false
					}
				case *ast.RangeStmt:
					if m != n {
						visit(m, true)
						return false
					}
				case *ast.FuncLit:
					if m != n {
						visit(m, false) // its own loops count, not the ones around it
						return false
					}
				}
				if !isSleep(m) {
					return true
				}
				pos := tf.fset.Position(m.Pos())
				switch {
				case inLoop && !starts[pos.Line]:
					bad = append(bad, pos.String()+": time.Sleep in a loop: a polling loop is testkit.Eventually")
				case !starts[pos.Line] && !ends[pos.Line-1]:
					bad = append(bad, pos.String()+": time.Sleep without a comment saying what it is for")
				}
				return true
			})
		}
		visit(tf.file, false)
	}
	return bad
}

// checkClocks returns the module's test types with a Now method returning
// time.Time: clocks of their own, where [Clock] serves.
func checkClocks(files []testFile) []string {
	var bad []string
	for _, tf := range files {
		if clockExempt[tf.rel] {
			continue
		}
		for _, d := range tf.file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || !strings.EqualFold(fn.Name.Name, "now") || fn.Type.Results == nil || len(fn.Type.Results.List) != 1 {
				continue
			}
			if sel, ok := fn.Type.Results.List[0].Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Time" {
				bad = append(bad, tf.fset.Position(fn.Pos()).String()+": a clock of its own: use testkit.Clock")
			}
		}
	}
	return bad
}

// TestNoPollingLoops checks the module's tests for hand-written polling
// loops and unexplained sleeps (see checkSleeps).
func TestNoPollingLoops(t *testing.T) {
	t.Parallel()
	for _, b := range checkSleeps(moduleTests(t, filepath.Join("..", ".."))) {
		t.Error(b)
	}
}

// TestNoOwnClocks checks that the module's tests use [Clock] rather than
// clocks of their own.
func TestNoOwnClocks(t *testing.T) {
	t.Parallel()
	for _, b := range checkClocks(moduleTests(t, filepath.Join("..", ".."))) {
		t.Error(b)
	}
}
