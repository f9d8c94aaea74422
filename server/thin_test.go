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

// The server and its dashboard are shells over services (docs/design.md,
// "The server is a shell"; "No SQL in `server`" in its dependency rules):
// server.New builds the services and stores once, hands the dashboard
// those it needs, and handlers call them. These tests hold both packages
// to it, with one set of rules.

// thinPackage is a package the rules hold, with what it alone may do.
type thinPackage struct {
	name string // the package's name
	dir  string // its directory, from server's
	// constructors are the functions that may build stores and hand the
	// database to services: the package's constructor and the helpers
	// it calls once.
	constructors map[string]bool
	// holder is the struct type that may keep the database, in its field
	// db, to hand to the constructors and to ping; "" for none.
	holder string
	// build says where stores are built instead, for the messages.
	build string
}

// thinPackages are the packages held to the rules. The dashboard builds
// nothing: server.New gives it its stores and services (mount).
var thinPackages = []thinPackage{
	{name: "server", dir: ".", holder: "Server", build: "build it once in New and keep it in Server",
		constructors: map[string]bool{"New": true, "newTrading": true, "newAlerts": true, "newMetrics": true}},
	{name: "dashboard", dir: filepath.Join("..", "dashboard"), build: "take it from Config, which server.New fills"},
}

// sqlMethods are the methods of bun and database/sql that run SQL or open
// a transaction. No file of these packages calls them: that is the
// services' work.
var sqlMethods = map[string]bool{
	"RunInTx": true, "BeginTx": true, "Begin": true,
	"NewRaw": true, "NewSelect": true, "NewInsert": true, "NewUpdate": true, "NewDelete": true, "NewMerge": true,
	"NewValues": true, "NewCreateTable": true, "NewDropTable": true, "NewTruncateTable": true,
	"NewCreateIndex": true, "NewDropIndex": true, "NewAddColumn": true, "NewDropColumn": true,
	"Exec": true, "ExecContext": true, "QueryContext": true, "QueryRowContext": true,
}

// databaseTypes are the types of a database handle, by package: a value
// of one, or a pointer to one, is the database.
var databaseTypes = map[string]map[string]bool{
	"bun": {"DB": true, "IDB": true, "Tx": true, "Conn": true},
	"sql": {"DB": true, "Tx": true, "Conn": true},
}

// isDatabase reports whether the type expression t is a database handle.
func isDatabase(t ast.Expr) bool {
	if star, ok := t.(*ast.StarExpr); ok {
		t = star.X
	}
	sel, ok := t.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && databaseTypes[pkg.Name][sel.Sel.Name]
}

// thinViolations returns where the file f of package p breaks the rules,
// one line each ("file:line: what"):
//   - a call of a NewStore function outside p's constructors;
//   - a call of one of sqlMethods anywhere;
//   - a use of the receiver's db field outside the constructors, but for
//     pinging it (PingContext, as the server's databaseAnswers does);
//   - a database handle ([isDatabase]) as a parameter outside the
//     constructors, or as a struct field other than p's holder's db.
func thinViolations(p thinPackage, fset *token.FileSet, f *ast.File) []string {
	var out []string
	report := func(n ast.Node, format string, args ...any) {
		pos := fset.Position(n.Pos())
		out = append(out, fmt.Sprintf("%s:%d: ", filepath.Base(pos.Filename), pos.Line)+fmt.Sprintf(format, args...))
	}
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok {
			return true
		}
		st, ok := ts.Type.(*ast.StructType)
		if !ok {
			return true
		}
		for _, field := range st.Fields.List {
			if !isDatabase(field.Type) {
				continue
			}
			if ts.Name.Name == p.holder && len(field.Names) == 1 && field.Names[0].Name == "db" {
				continue
			}
			report(field, "%s keeps a database: keep the stores and services built from it", ts.Name.Name)
		}
		return true
	})
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		name, recv := fn.Name.Name, ""
		if fn.Recv != nil && len(fn.Recv.List) == 1 && len(fn.Recv.List[0].Names) == 1 {
			recv = fn.Recv.List[0].Names[0].Name
		}
		ctor := p.constructors[name]
		if !ctor {
			for _, param := range fn.Type.Params.List {
				if isDatabase(param.Type) {
					report(param, "%s takes a database: take the store or service instead", name)
				}
			}
		}
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
					report(n, "%s calls NewStore: %s", name, p.build)
				case sqlMethods[callee]:
					report(n, "%s calls %s: SQL and transactions belong to the services", name, callee)
				}
			case *ast.FuncLit:
				for _, param := range n.Type.Params.List {
					if isDatabase(param.Type) && !ctor {
						report(param, "%s takes a database: take the store or service instead", name)
					}
				}
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok && recv != "" && x.Name == recv && n.Sel.Name == "db" && !ctor && !pinged[n] {
					report(n, "%s uses %s.db: call a service or a store built in server.New", name, recv)
				}
			}
			return true
		})
	}
	return out
}

// TestThin checks the files of the server and of the dashboard (tests
// aside) against the rules of thinViolations.
func TestThin(t *testing.T) {
	t.Parallel()
	for _, p := range thinPackages {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			names, err := filepath.Glob(filepath.Join(p.dir, "*.go"))
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
				if f.Name.Name != p.name {
					t.Fatalf("%s is in package %s, not %s: the test reads the wrong directory", name, f.Name.Name, p.name)
				}
				n++
				for _, v := range thinViolations(p, fset, f) {
					t.Errorf("%s: %s", p.name, v)
				}
			}
			if n < 5 {
				t.Fatalf("parsed %d files of package %s in %s; the test reads the wrong directory", n, p.name, p.dir)
			}
		})
	}
}

// TestThinCatches plants each kind of violation in a source of each
// package and checks that thinViolations reports it, and that what the
// rules allow passes.
func TestThinCatches(t *testing.T) {
	t.Parallel()
	pkgs := map[string]thinPackage{}
	for _, p := range thinPackages {
		pkgs[p.name] = p
	}
	tests := []struct {
		name string
		pkg  string   // the package the source is in
		body string   // its declarations
		want []string // the violations, by the words that name them
	}{
		{"NewStore in a handler", "server", `func (s *Server) handleX() { marketdata.NewStore(s.db).Assets(ctx) }`,
			[]string{"handleX calls NewStore", "handleX uses s.db"}},
		{"NewStore of a local", "server", `func (s *Server) handleX(db bun.IDB) { billing.NewStore(db).Plans(ctx) }`,
			[]string{"handleX calls NewStore", "handleX takes a database"}},
		{"RunInTx", "server", `func (s *Server) handleX() { s.store.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error { return nil }) }`,
			[]string{"handleX calls RunInTx", "handleX takes a database"}},
		{"raw SQL", "server", `func (s *Server) handleX() { tx.NewRaw("SELECT 1 FOR UPDATE").Exec(ctx) }`,
			[]string{"handleX calls Exec", "handleX calls NewRaw"}},
		{"query builders", "server", `func helper(db bun.IDB) { db.NewSelect().Scan(ctx); db.NewInsert(); db.NewUpdate(); db.NewDelete() }`,
			[]string{"helper calls NewDelete", "helper calls NewInsert", "helper calls NewSelect", "helper calls NewUpdate", "helper takes a database"}},
		{"database/sql", "server", `func (s *Server) handleX() { s.sql.QueryContext(ctx, "SELECT 1") }`,
			[]string{"handleX calls QueryContext"}},
		{"the db field", "server", `func (s *Server) handleX() { connect.Value(ctx, s.db, p) }`,
			[]string{"handleX uses s.db"}},
		{"the db field in a closure", "server", `func (srv *Server) handleX() { f := func() { use(srv.db) }; f() }`,
			[]string{"handleX uses srv.db"}},
		{"SQL in a constructor", "server", `func New(cfg Config, db *bun.DB) *Server { db.NewSelect(); return nil }`,
			[]string{"New calls NewSelect"}},
		{"another database field", "server", `type Server struct { db *bun.DB; tx bun.Tx; pool *sql.DB }`,
			[]string{"Server keeps a database", "Server keeps a database"}},
		{"constructors", "server", `type Server struct { db *bun.DB }
func New(cfg Config, db *bun.DB) *Server { s := &Server{db: db, market: marketdata.NewStore(db), metrics: newMetrics(db)}; s.newTrading(); return s }
func (s *Server) newTrading() { s.paper = paper.New(s.db, paper.Config{}); s.billing = billing.NewStore(s.db) }
func newMetrics(db *bun.DB) *metrics { return collect(db.DB) }`, nil},
		{"a ping", "server", `func (s *Server) databaseAnswers(ctx context.Context) bool { return s.db.PingContext(ctx) == nil }`, nil},
		{"a handler that calls a store", "server", `func (s *Server) handleX() { s.market.Assets(ctx); q := req.URL.Query(); _ = q }`, nil},

		{"dashboard: NewStore in a handler", "dashboard", `func (h *Handler) usagePage(w http.ResponseWriter, r *http.Request) { billing.NewStore(h.db).PlanOf(r.Context(), id) }`,
			[]string{"usagePage calls NewStore", "usagePage uses h.db"}},
		{"dashboard: a store built in New", "dashboard", `func New(db bun.IDB, cfg Config) *Handler { cfg.Billing = billing.NewStore(db); return &Handler{cfg: cfg} }`,
			[]string{"New calls NewStore", "New takes a database"}},
		{"dashboard: a service built on the database", "dashboard", `func (h *Handler) alertRoutes() { h.cfg.Studies = studies.NewService(h.db, studies.Config{}) }`,
			[]string{"alertRoutes uses h.db"}},
		{"dashboard: the handler keeps the database", "dashboard", `type Handler struct { db bun.IDB; cfg Config }`,
			[]string{"Handler keeps a database"}},
		{"dashboard: the config carries the database", "dashboard", `type Config struct { DB *bun.DB; Billing *billing.Store }`,
			[]string{"Config keeps a database"}},
		{"dashboard: SQL in a handler", "dashboard", `func (h *Handler) ordersPage() { h.cfg.Trading.DB().NewSelect().Scan(ctx) }`,
			[]string{"ordersPage calls NewSelect"}},
		{"dashboard: a handler that calls its stores", "dashboard", `type Handler struct { cfg Config }
func New(cfg Config) *Handler { cfg.Usage = cfg.Billing.Usage; return &Handler{cfg: cfg} }
func (h *Handler) keysPage() { h.cfg.Billing.AccountKeys(ctx, id); h.cfg.Brokers.CancelOrder(ctx, u, id) }`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, ok := pkgs[tt.pkg]
			if !ok {
				t.Fatalf("no package %s among thinPackages", tt.pkg)
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "planted.go", "package "+p.name+"\n\n"+tt.body+"\n", parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			got := thinViolations(p, fset, f)
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
