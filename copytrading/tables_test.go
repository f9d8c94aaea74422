package copytrading_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// copytrading reads and writes connect's tables only through connect
// (issue 28: "copytrading has no SQL on connect's tables"): through its
// Store, the query pieces it exports (connect.NextFill, the subqueries
// its order reads take) and connect.Store.InsertAccountHistory, each
// running in the caller's statement or transaction. These tests hold the
// package to it.

// connectPath is the import path of package connect.
const connectPath = "github.com/tradekit/tradekit/brokers/connect"

// connectSchema is what package connect's source says of its tables.
type connectSchema struct {
	tables map[string]bool // the tables of its bun models: "portfolios", …
	models map[string]bool // the types that are bun models of them: "Portfolio", …
	named  *regexp.Regexp  // any of the tables, as a whole SQL word
}

// readConnectSchema parses package connect's files, tests aside, and
// returns its tables: those its structs name with a bun:"table:…" tag.
func readConnectSchema(tb testing.TB) connectSchema {
	tb.Helper()
	names, err := filepath.Glob("../brokers/connect/*.go")
	if err != nil {
		tb.Fatal(err)
	}
	s := connectSchema{tables: map[string]bool{}, models: map[string]bool{}}
	fset := token.NewFileSet()
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			tb.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			if table := modelTable(ts); table != "" {
				s.tables[table], s.models[ts.Name.Name] = true, true
			}
			return false
		})
	}
	// The tables the issue names, lest a change to connect's source make
	// the test pass by finding nothing.
	for _, t := range []string{"portfolios", "portfolio_positions", "portfolio_fills", "portfolio_equity",
		"broker_orders", "broker_connections", "broker_guardrails"} {
		if !s.tables[t] {
			tb.Fatalf("package connect has no model of table %s (found %v): the test reads the wrong directory, or connect changed", t, s.tables)
		}
	}
	words := slices.Sorted(func(yield func(string) bool) {
		for t := range s.tables {
			if !yield(regexp.QuoteMeta(t)) {
				return
			}
		}
	})
	s.named = regexp.MustCompile(`(?i)\b(` + strings.Join(words, "|") + `)\b`)
	return s
}

// modelTable returns the table of a struct type that is a bun model
// (a field tagged bun:"table:name"), "" for other types.
func modelTable(ts *ast.TypeSpec) string {
	st, ok := ts.Type.(*ast.StructType)
	if !ok {
		return ""
	}
	for _, fld := range st.Fields.List {
		if table := tagTable(fld.Tag); table != "" {
			return table
		}
	}
	return ""
}

// tagTable returns the table a struct tag names (bun:"table:name,…"),
// "" if none.
func tagTable(tag *ast.BasicLit) string {
	if tag == nil {
		return ""
	}
	s, err := strconv.Unquote(tag.Value)
	if err != nil {
		return ""
	}
	first, _, _ := strings.Cut(reflect.StructTag(s).Get("bun"), ",")
	table, ok := strings.CutPrefix(first, "table:")
	if !ok {
		return ""
	}
	return table
}

// connectViolations returns where the files of a package, one package's
// parsed with object resolution, use connect's tables but through
// connect, one line each ("file:line: what"):
//   - a string (SQL, a table expression, a struct tag) that names one of
//     the tables as a whole word;
//   - a Model call on one of connect's model types: the argument is a
//     composite literal or conversion of the type, or a variable,
//     parameter or struct field declared with it (a []T or *T too), or
//     assigned the result of one of the package's functions that returns
//     it.
//
// It reads syntax, not types: a model reached another way (a value
// returned by another package, say) passes unseen.
func connectViolations(fset *token.FileSet, files []*ast.File, s connectSchema) []string {
	var out []string
	report := func(n ast.Node, format string, args ...any) {
		p := fset.Position(n.Pos())
		out = append(out, fmt.Sprintf("%s:%d: ", filepath.Base(p.Filename), p.Line)+fmt.Sprintf(format, args...))
	}
	// The package's struct fields and package-level variables, by name,
	// with the expressions that give their types: what a selector or an
	// identifier that object resolution leaves open may refer to; and its
	// functions and methods, by name, with their results' types.
	fields, globals := map[string][]ast.Expr{}, map[string][]ast.Expr{}
	funcs := map[string][][]ast.Expr{}
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.GenDecl:
				if d.Tok != token.VAR {
					continue
				}
				for _, sp := range d.Specs {
					vs := sp.(*ast.ValueSpec)
					for i, n := range vs.Names {
						globals[n.Name] = append(globals[n.Name], specType(vs, i))
					}
				}
			case *ast.FuncDecl:
				var results []ast.Expr
				if d.Type.Results != nil {
					for _, r := range d.Type.Results.List {
						for range max(1, len(r.Names)) {
							results = append(results, r.Type)
						}
					}
				}
				funcs[d.Name.Name] = append(funcs[d.Name.Name], results)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if st, ok := n.(*ast.StructType); ok {
				for _, fld := range st.Fields.List {
					for _, n := range fld.Names {
						fields[n.Name] = append(fields[n.Name], fld.Type)
					}
				}
			}
			return true
		})
	}
	for _, f := range files {
		pkg := "" // the name f imports package connect under
		for _, im := range f.Imports {
			if p, _ := strconv.Unquote(im.Path.Value); p == connectPath {
				pkg = "connect"
				if im.Name != nil {
					pkg = im.Name.Name
				}
			}
		}
		// model returns the connect model that e mentions, "" if none.
		model := func(e ast.Expr) string {
			found := ""
			ast.Inspect(e, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok && found == "" {
					if x, ok := sel.X.(*ast.Ident); ok && pkg != "" && x.Name == pkg && s.models[sel.Sel.Name] {
						found = pkg + "." + sel.Sel.Name
					}
				}
				return found == ""
			})
			return found
		}
		// resultOf returns the types of the i-th result of the package's
		// functions and methods that e, a call, may call.
		resultOf := func(e ast.Expr, i int) []ast.Expr {
			call, ok := e.(*ast.CallExpr)
			if !ok {
				return nil
			}
			name := ""
			switch fun := call.Fun.(type) {
			case *ast.Ident:
				name = fun.Name
			case *ast.SelectorExpr:
				if x, ok := fun.X.(*ast.Ident); ok && x.Name == pkg {
					return nil // connect's own functions return what they read
				}
				name = fun.Sel.Name
			}
			var out []ast.Expr
			for _, results := range funcs[name] {
				if i < len(results) {
					out = append(out, results[i])
				}
			}
			return out
		}
		// typeOf returns the expressions that give the type of the Model
		// argument e: e itself, or its declarations.
		typeOf := func(e ast.Expr) []ast.Expr {
			for {
				switch x := e.(type) {
				case *ast.UnaryExpr:
					e = x.X
					continue
				case *ast.ParenExpr:
					e = x.X
					continue
				case *ast.Ident:
					if x.Obj == nil {
						return globals[x.Name]
					}
					switch d := x.Obj.Decl.(type) {
					case *ast.ValueSpec:
						for i, n := range d.Names {
							if n.Name == x.Name {
								return []ast.Expr{specType(d, i)}
							}
						}
					case *ast.AssignStmt:
						for i, n := range d.Lhs {
							if id, ok := n.(*ast.Ident); !ok || id.Name != x.Name {
								continue
							}
							if len(d.Rhs) == len(d.Lhs) {
								return append(resultOf(d.Rhs[i], 0), d.Rhs[i])
							}
							return resultOf(d.Rhs[0], i)
						}
					case *ast.Field:
						return []ast.Expr{d.Type}
					}
					return nil
				case *ast.SelectorExpr:
					if id, ok := x.X.(*ast.Ident); ok && id.Name == pkg {
						return []ast.Expr{x}
					}
					return fields[x.Sel.Name]
				}
				return []ast.Expr{e}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ImportSpec:
				return false
			case *ast.BasicLit:
				if n.Kind != token.STRING {
					break
				}
				v, err := strconv.Unquote(n.Value)
				if err != nil {
					break
				}
				if m := s.named.FindString(v); m != "" {
					report(n, "a string names connect's table %s: ask package connect", m)
				}
			case *ast.CallExpr:
				sel, ok := n.Fun.(*ast.SelectorExpr)
				if !ok || sel.Sel.Name != "Model" || len(n.Args) != 1 {
					break
				}
				for _, t := range typeOf(n.Args[0]) {
					if t == nil {
						continue
					}
					if m := model(t); m != "" {
						report(n, "a query's Model is %s, a table of connect's: ask package connect", m)
						break
					}
				}
			}
			return true
		})
	}
	return out
}

// specType returns the expression that gives the type of the i-th name
// of a var declaration: its type, else its value.
func specType(vs *ast.ValueSpec, i int) ast.Expr {
	if vs.Type != nil {
		return vs.Type
	}
	if i < len(vs.Values) {
		return vs.Values[i]
	}
	return nil
}

// TestNoConnectTables checks the package's files, tests aside, against
// the rules of connectViolations.
func TestNoConnectTables(t *testing.T) {
	t.Parallel()
	s := readConnectSchema(t)
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if len(files) < 10 {
		t.Fatalf("parsed %d files of package copytrading; the test runs in the wrong directory", len(files))
	}
	for _, v := range connectViolations(fset, files, s) {
		t.Error(v)
	}
}

// TestNoConnectTablesCatches plants each kind of violation in a source
// and checks that connectViolations reports it, and that what the rules
// allow passes.
func TestNoConnectTablesCatches(t *testing.T) {
	t.Parallel()
	s := readConnectSchema(t)
	const imports = `import (
	"github.com/uptrace/bun"
	"github.com/tradekit/tradekit/brokers/connect"
)
`
	tests := []struct {
		name string
		src  string   // declarations of package copytrading, after imports
		want []string // the violations, by the words that name them
	}{
		{"the copy engine's old join", `func f(q *bun.SelectQuery) {
	q.Join("JOIN portfolio_fills AS pf ON pf.portfolio_id = lp.portfolio_id AND pf.seq = " +
		"(SELECT min(nf.seq) FROM portfolio_fills AS nf WHERE nf.portfolio_id = lp.portfolio_id AND nf.seq > follow.copied_seq)")
}`, []string{"table portfolio_fills", "table portfolio_fills"}},
		{"raw SQL", `func f(db bun.IDB) { db.NewRaw("SELECT * FROM broker_orders WHERE id = ?", 1) }`,
			[]string{"table broker_orders"}},
		{"a table expression", `func f(db bun.IDB) { db.NewSelect().TableExpr("Portfolios AS p") }`,
			[]string{"table Portfolios"}},
		{"a quoted name in a raw string", "func f(db bun.IDB) { db.NewSelect().TableExpr(`\"broker_connections\" AS c`) }",
			[]string{"table broker_connections"}},
		{"a subquery", `func f(db bun.IDB) { db.NewSelect().Where("id IN (SELECT portfolio_id FROM portfolio_equity)") }`,
			[]string{"table portfolio_equity"}},
		{"a model of its own", "type row struct {\n\tbun.BaseModel `bun:\"table:portfolio_positions,alias:p\"`\n}",
			[]string{"table portfolio_positions"}},
		{"a var of a model's slice", `func f(db bun.IDB) { var orders []connect.Order; db.NewSelect().Model(&orders).Scan(ctx) }`,
			[]string{"Model is connect.Order"}},
		{"a composite literal", `func f(tx bun.Tx) { c := connect.Connection{}; tx.NewInsert().Model(&c).Exec(ctx) }`,
			[]string{"Model is connect.Connection"}},
		{"a literal in the call", `func f(tx bun.Tx) { tx.NewInsert().Model(&connect.SyncLog{}).Exec(ctx) }`,
			[]string{"Model is connect.SyncLog"}},
		{"a conversion", `func f(db bun.IDB) { db.NewDelete().Model((*connect.Fill)(nil)).Exec(ctx) }`,
			[]string{"Model is connect.Fill"}},
		{"a parameter", `func f(db bun.IDB, p *connect.Portfolio) { db.NewUpdate().Model(p).WherePK().Exec(ctx) }`,
			[]string{"Model is connect.Portfolio"}},
		{"a struct field", `type sim struct{ equity []connect.EquityPoint }
func f(db bun.IDB, s *sim) { db.NewInsert().Model(&s.equity).Exec(ctx) }`,
			[]string{"Model is connect.EquityPoint"}},
		{"a package variable", `var positions []connect.Position
func f(db bun.IDB) { db.NewSelect().Model(&positions).Scan(ctx) }`,
			[]string{"Model is connect.Position"}},
		{"a function's result", `func fills() ([]connect.Fill, error) { return nil, nil }
func f(tx bun.Tx) { fs, err := fills(); _ = err; tx.NewInsert().Model(&fs).Exec(ctx) }`,
			[]string{"Model is connect.Fill"}},
		{"a method's result", `func (s *Service) row() *connect.Portfolio { return nil }
func (s *Service) f(tx bun.Tx) { p := s.row(); tx.NewUpdate().Model(p).Exec(ctx) }`,
			[]string{"Model is connect.Portfolio"}},
		{"through connect", `func f(db bun.IDB, q *bun.SelectQuery, id uuid.UUID) {
	st := connect.NewStore(db)
	p, _ := st.PortfolioOf(ctx, id)
	_ = p
	var follows []Follow
	q.TableExpr("follows AS follow").ColumnExpr("lp.portfolio_id, pf.broker_id").
		Apply(connect.NextFill("pf", "lp.portfolio_id", "follow.copied_seq")).Model(&follows)
	db.NewSelect().ColumnExpr("order_id").TableExpr("copy_events")
	_ = uuid.NewSHA1(ns, []byte("portfolio:"+slug))
	_ = "orders of the portfolio's fills"
}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "planted.go", "package copytrading\n\n"+imports+tt.src+"\n", 0)
			if err != nil {
				t.Fatal(err)
			}
			got := connectViolations(fset, []*ast.File{f}, s)
			if len(got) != len(tt.want) {
				t.Fatalf("connectViolations = %q, want %d matching %q", got, len(tt.want), tt.want)
			}
			for i := range got {
				if !strings.Contains(got[i], tt.want[i]) {
					t.Errorf("violation %d = %q, want one naming %q", i, got[i], tt.want[i])
				}
			}
		})
	}
	t.Run("a renamed import", func(t *testing.T) {
		t.Parallel()
		src := "package copytrading\n\nimport cn \"" + connectPath + "\"\n\n" +
			"func f(db bun.IDB) { var o cn.Order; db.NewSelect().Model(&o).Scan(ctx) }\n"
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "planted.go", src, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := connectViolations(fset, []*ast.File{f}, s); len(got) != 1 || !strings.Contains(got[0], "Model is cn.Order") {
			t.Errorf("connectViolations = %q, want one naming cn.Order", got)
		}
	})
}
