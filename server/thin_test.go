package server_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The server is a shell over services (docs/design.md, "The server is a
// shell"; "No SQL in `server`" in its dependency rules): server.New
// builds the services and stores once, and handlers call them. These
// tests hold the package to it.

// constructors are the functions that may build stores and hand the
// database to services: New and the helpers it calls once, mount among
// them (it builds the dashboard).
var constructors = map[string]bool{"New": true, "newTrading": true, "newAlerts": true, "mount": true}

// sqlMethods are the methods of bun and database/sql that run SQL or open
// a transaction. No server file calls them: that is the services' work.
var sqlMethods = map[string]bool{
	"RunInTx": true, "BeginTx": true, "Begin": true,
	"NewRaw": true, "NewSelect": true, "NewInsert": true, "NewUpdate": true, "NewDelete": true, "NewMerge": true,
	"NewValues": true, "NewCreateTable": true, "NewDropTable": true, "NewTruncateTable": true,
	"NewCreateIndex": true, "NewDropIndex": true, "NewAddColumn": true, "NewDropColumn": true,
	"Exec": true, "ExecContext": true, "QueryContext": true, "QueryRowContext": true,
}

// thinViolations returns where the file f breaks the rules, one line
// each ("file:line: what"):
//   - a call of a NewStore function outside the constructors;
//   - a call of one of sqlMethods anywhere;
//   - a use of the Server's db field outside the constructors, but for
//     pinging it (PingContext, in databaseAnswers).
func thinViolations(fset *token.FileSet, f *ast.File) []string {
	var out []string
	report := func(n ast.Node, format string, args ...any) {
		p := fset.Position(n.Pos())
		out = append(out, fmt.Sprintf("%s:%d: ", filepath.Base(p.Filename), p.Line)+fmt.Sprintf(format, args...))
	}
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		name, recv := fn.Name.Name, ""
		if fn.Recv != nil && len(fn.Recv.List) == 1 && len(fn.Recv.List[0].Names) == 1 {
			recv = fn.Recv.List[0].Names[0].Name
		}
		ctor := constructors[name]
		pinged := map[*ast.SelectorExpr]bool{} // s.db of s.db.PingContext
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				callee := ""
				switch fun := n.Fun.(type) {
				case *ast.Ident:
					callee = fun.Name
				case *ast.SelectorExpr:
					callee = fun.Sel.Name
					if inner, ok := fun.X.(*ast.SelectorExpr); ok && callee == "PingContext" {
						pinged[inner] = true
					}
				}
				switch {
				case callee == "NewStore" && !ctor:
					report(n, "%s calls NewStore: build the store once in New and keep it in Server", name)
				case sqlMethods[callee]:
					report(n, "%s calls %s: SQL and transactions belong to the services", name, callee)
				}
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok && recv != "" && x.Name == recv && n.Sel.Name == "db" && !ctor && !pinged[n] {
					report(n, "%s uses %s.db: call a service or a store built in New", name, recv)
				}
			}
			return true
		})
	}
	return out
}

// TestThin checks the package's files (tests aside) against the rules of
// thinViolations.
func TestThin(t *testing.T) {
	t.Parallel()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	n := 0
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		n++
		for _, v := range thinViolations(fset, f) {
			t.Error(v)
		}
	}
	if n < 10 {
		t.Fatalf("parsed %d files of package server; the test runs in the wrong directory", n)
	}
}

// TestThinCatches plants each kind of violation in a source and checks
// that thinViolations reports it, and that what the rules allow passes.
func TestThinCatches(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string   // functions of package server
		want []string // the violations, by the words that name them
	}{
		{"NewStore in a handler", `func (s *Server) handleX() { marketdata.NewStore(s.db).Assets(ctx) }`,
			[]string{"handleX calls NewStore", "handleX uses s.db"}},
		{"NewStore of a local", `func (s *Server) handleX(db bun.IDB) { billing.NewStore(db).Plans(ctx) }`,
			[]string{"handleX calls NewStore"}},
		{"RunInTx", `func (s *Server) handleX() { s.store.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error { return nil }) }`,
			[]string{"handleX calls RunInTx"}},
		{"raw SQL", `func (s *Server) handleX() { tx.NewRaw("SELECT 1 FOR UPDATE").Exec(ctx) }`,
			[]string{"handleX calls Exec", "handleX calls NewRaw"}},
		{"query builders", `func helper(db bun.IDB) { db.NewSelect().Scan(ctx); db.NewInsert(); db.NewUpdate(); db.NewDelete() }`,
			[]string{"helper calls NewDelete", "helper calls NewInsert", "helper calls NewSelect", "helper calls NewUpdate"}},
		{"database/sql", `func (s *Server) handleX() { s.sql.QueryContext(ctx, "SELECT 1") }`,
			[]string{"handleX calls QueryContext"}},
		{"the db field", `func (s *Server) handleX() { connect.Value(ctx, s.db, p) }`,
			[]string{"handleX uses s.db"}},
		{"the db field in a closure", `func (srv *Server) handleX() { f := func() { use(srv.db) }; f() }`,
			[]string{"handleX uses srv.db"}},
		{"SQL in a constructor", `func New(cfg Config, db *bun.DB) *Server { db.NewSelect(); return nil }`,
			[]string{"New calls NewSelect"}},
		{"constructors", `func New(cfg Config, db *bun.DB) *Server { s := &Server{db: db, market: marketdata.NewStore(db)}; s.newTrading(); return s }
func (s *Server) newTrading() { s.paper = paper.New(s.db, paper.Config{}); s.billing = billing.NewStore(s.db) }`, nil},
		{"a ping", `func (s *Server) databaseAnswers(ctx context.Context) bool { return s.db.PingContext(ctx) == nil }`, nil},
		{"a handler that calls a store", `func (s *Server) handleX() { s.market.Assets(ctx); q := req.URL.Query(); _ = q }`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "planted.go", "package server\n\n"+tt.body+"\n", parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			got := thinViolations(fset, f)
			slices.Sort(got)
			if len(got) != len(tt.want) {
				t.Fatalf("thinViolations = %q, want %d matching %q", got, len(tt.want), tt.want)
			}
			want := slices.Clone(tt.want)
			slices.Sort(want)
			for i := range got {
				if !strings.Contains(got[i], want[i]) {
					t.Errorf("violation %d = %q, want one naming %q", i, got[i], want[i])
				}
			}
		})
	}
}
