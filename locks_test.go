package tradekit_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// lockHome is the one file whose SQL takes PostgreSQL advisory locks:
// database.LockKey, the helper every lock of the repository goes through
// (database.Lock and LockUser of ids, the follows' creation lock in
// package copytrading, the migrations' lock).
const lockHome = "internal/database/lock.go"

// advisoryLocks returns where the non-test files of pkgs take an advisory
// lock (a string naming a pg_advisory function) outside lockHome.
func advisoryLocks(pkgs []pkgFiles) []string {
	var out []string
	for _, p := range pkgs {
		for _, f := range p.files {
			pos := p.fset.Position(f.Pos())
			file := p.dir + "/" + filepath.Base(pos.Filename)
			if file == lockHome {
				continue
			}
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				if s, err := strconv.Unquote(lit.Value); err == nil && strings.Contains(strings.ToLower(s), "pg_advisory") {
					out = append(out, file+":"+strconv.Itoa(p.fset.Position(lit.Pos()).Line)+": an advisory lock of its own: use database.LockKey")
				}
				return true
			})
		}
	}
	return out
}

// TestOneLockHelper checks that every advisory lock goes through
// database.LockKey, and that the check finds a lock taken elsewhere.
func TestOneLockHelper(t *testing.T) {
	t.Parallel()
	pkgs := readPackages(t, ".")
	found := false
	for _, p := range pkgs {
		for _, f := range p.files {
			if p.dir+"/"+filepath.Base(p.fset.Position(f.Pos()).Filename) == lockHome {
				found = true
			}
		}
	}
	if !found {
		t.Fatalf("%s not found: the test reads the wrong files, or the helper moved", lockHome)
	}
	for _, v := range advisoryLocks(pkgs) {
		t.Error(v)
	}
	t.Run("planted", func(t *testing.T) {
		src := "package p\n\nfunc f(tx bun.Tx) { tx.NewRaw(\"SELECT pg_advisory_xact_lock(?)\", 1) }\n"
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "planted.go", src, 0)
		if err != nil {
			t.Fatal(err)
		}
		got := advisoryLocks([]pkgFiles{{dir: "planted/p", fset: fset, files: []*ast.File{f}}})
		if len(got) != 1 || !strings.HasPrefix(got[0], "planted/p/planted.go:3: ") {
			t.Errorf("advisoryLocks(planted) = %q, want planted/p/planted.go:3", got)
		}
	})
}
