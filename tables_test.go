package tradekit_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The design, "What to avoid": "A table read by two packages. Each table
// has one owning package, and the only SQL that names it lives there;
// everyone else calls that package's API." TestTableOwners enforces it
// over the whole repository, package directory by package directory,
// with these rules:
//
//   - The schema's tables are those the migrations create (CREATE TABLE
//     in internal/database/migrations/<dialect>/*.sql). internal/database
//     is the schema's home: its migrations, and its Go code that copies,
//     locks and inspects the schema as a whole, may name any table.
//   - A table's owner is the package whose non-test files declare its bun
//     model (a struct field tagged bun:"table:name"). Two packages
//     declaring a model of one table is a violation. A table with no
//     model anywhere is owned by the one package that names it; two
//     packages naming it is a violation (give it a model in its owner).
//   - Any other package naming a table is a violation. A package names a
//     table when its non-test files have
//     – a bun model tag of it (above);
//     – a string given to TableExpr, ModelTableExpr, Table or Join that
//     has the table's name as a whole word;
//     – any other string where the name follows an SQL keyword that
//     takes a table, written in capitals as the repository writes SQL
//     (FROM, JOIN, INTO, UPDATE, TABLE, REFERENCES, TRUNCATE, COPY),
//     bare or quoted ("…FROM alerts WHERE…"): many tables are English
//     words ("alerts", "plans", "follows", "prices"), which messages,
//     usage texts and column names use freely;
//     – a Model call whose argument is one of the owner's model types:
//     a composite literal or conversion of it, or a variable, parameter
//     or struct field declared with it (a []T or *T too), or assigned
//     the result of one of the package's own functions that returns it.
//     It reads syntax, not types: a model reached another way (a value
//     returned by another package, say) passes unseen.
//
// Tests are exempt: a test may set up and inspect any table. The only
// exceptions are in ownerAllowlist, each with its reason. A package whose
// one statement must join another's table (an order's check, say) embeds
// a piece of SQL that the owner exports (connect.NextFill,
// marketdata.JoinAsset), so the table is named in its owner's source only.

// modulePath is the module's import path.
const modulePath = "github.com/tradekit/tradekit"

// schemaHome is the package directory of the migrations, which may name
// every table.
const schemaHome = "internal/database"

// modelless names the owners of the tables that have no bun model and
// that more than one package has named: the package whose store reads
// and writes them (marketdata's assets and prices are read in bulk with
// column-wise scans, not through models; billing's users likewise).
var modelless = map[string]string{
	"assets": "marketdata",
	"prices": "marketdata",
	"users":  "billing",
}

// ownerAllowlist lists package directories that may name tables they do
// not own, and why. Keep it short: each entry is a hole in the rule.
var ownerAllowlist = map[string]string{
	// A benchmark program that creates its own prices table in a scratch
	// database to time bulk loads; it never touches the schema's.
	"scripts/importbench": "creates its own scratch prices table",
	// The fault run's auditor (a command, run by scripts/faults): after
	// it has traded through the servers, it reads every domain's tables
	// straight from the database, to check the services' work without
	// trusting their code.
	"internal/faultrun": "audits the database independently of the services",
}

// repoTables is what the repository's source says of its tables.
type repoTables struct {
	tables []string                     // the tables the migrations create
	models map[string]map[string]string // package directory → model type → table
	owners map[string][]string          // table → the package directories declaring a model of it
}

// createTable finds the table a CREATE TABLE statement creates.
var createTable = regexp.MustCompile(`(?i)\bcreate\s+(?:unlogged\s+)?table\s+(?:if\s+not\s+exists\s+)?"?([a-z_][a-z0-9_]*)"?`)

// readMigrations returns the tables the migrations of both dialects
// create, sorted.
func readMigrations(tb testing.TB, root string) []string {
	tb.Helper()
	names, err := filepath.Glob(filepath.Join(root, schemaHome, "migrations", "*", "*.sql"))
	if err != nil {
		tb.Fatal(err)
	}
	if len(names) < 20 {
		tb.Fatalf("found %d migrations under %s: the test reads the wrong directory", len(names), schemaHome)
	}
	seen := map[string]bool{}
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			tb.Fatal(err)
		}
		for _, m := range createTable.FindAllStringSubmatch(string(b), -1) {
			seen[strings.ToLower(m[1])] = true
		}
	}
	return slices.Sorted(func(yield func(string) bool) {
		for t := range seen {
			if !yield(t) {
				return
			}
		}
	})
}

// pkgFiles is the parsed non-test Go files of one package directory.
type pkgFiles struct {
	dir   string // relative to the repository's root, with slashes
	fset  *token.FileSet
	files []*ast.File
}

// readPackages parses the non-test Go files of every package directory
// under root, skipping testdata and hidden directories.
func readPackages(tb testing.TB, root string) []pkgFiles {
	tb.Helper()
	byDir := map[string]*pkgFiles{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		p := byDir[rel]
		if p == nil {
			p = &pkgFiles{dir: rel, fset: fset}
			byDir[rel] = p
		}
		p.files = append(p.files, f)
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	var out []pkgFiles
	for _, dir := range slices.Sorted(func(yield func(string) bool) {
		for d := range byDir {
			if !yield(d) {
				return
			}
		}
	}) {
		out = append(out, *byDir[dir])
	}
	return out
}

// readTables reads the migrations' tables and every package's models.
func readTables(tb testing.TB, root string, pkgs []pkgFiles) repoTables {
	tb.Helper()
	r := repoTables{tables: readMigrations(tb, root), models: map[string]map[string]string{}, owners: map[string][]string{}}
	for _, p := range pkgs {
		for _, f := range p.files {
			ast.Inspect(f, func(n ast.Node) bool {
				ts, ok := n.(*ast.TypeSpec)
				if !ok {
					return true
				}
				if table := modelTable(ts); table != "" {
					if r.models[p.dir] == nil {
						r.models[p.dir] = map[string]string{}
					}
					r.models[p.dir][ts.Name.Name] = table
					if !slices.Contains(r.owners[table], p.dir) {
						r.owners[table] = append(r.owners[table], p.dir)
					}
				}
				return false
			})
		}
	}
	// Tables the test must know, lest a change of layout make it pass by
	// finding nothing.
	for table, owner := range map[string]string{"portfolio_fills": "brokers/connect", "follows": "copytrading",
		"webhooks": "alerts", "backtests": "backtest/backtestdb"} {
		if !slices.Contains(r.tables, table) || !slices.Contains(r.owners[table], owner) {
			tb.Fatalf("table %s: created %v, modelled by %v, want a model in %s: the test reads the wrong files",
				table, slices.Contains(r.tables, table), r.owners[table], owner)
		}
	}
	return r
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
	if i := strings.LastIndexByte(table, '.'); i >= 0 {
		table = table[i+1:] // schema.table
	}
	return strings.Trim(table, `"`)
}

// tableArgs are the query methods whose string arguments are table
// expressions or joins: every table named in them counts.
var tableArgs = map[string]bool{"TableExpr": true, "ModelTableExpr": true, "Table": true, "Join": true}

// namer finds the tables a string names.
type namer struct {
	word, sql *regexp.Regexp
}

// newNamer returns the namer of the given tables.
func newNamer(tables []string) namer {
	quoted := make([]string, len(tables))
	for i, t := range tables {
		quoted[i] = regexp.QuoteMeta(t)
	}
	alt := strings.Join(quoted, "|")
	return namer{
		word: regexp.MustCompile(`(?i)\b(` + alt + `)\b`),
		// The keywords in capitals, as the repository writes SQL: prose
		// says "compute from prices".
		sql: regexp.MustCompile(`\b(?:FROM|JOIN|INTO|UPDATE|TABLE|REFERENCES|TRUNCATE|COPY)\s+(?:IF\s+(?:NOT\s+)?EXISTS\s+)?["` + "`" + `]?(?i:(` + alt + `))\b`),
	}
}

// names returns the tables s names, as a whole word when inTable (the
// argument of a table method), else after an SQL keyword.
func (n namer) names(s string, inTable bool) []string {
	re := n.sql
	if inTable {
		re = n.word
	}
	var out []string
	for _, m := range re.FindAllStringSubmatch(s, -1) {
		out = append(out, strings.ToLower(m[1]))
	}
	return out
}

// ownership returns the owner of each table: the package that declares
// its model, else the one package that names it; and the violations of
// the ownership rules themselves (two models, or two packages naming a
// table with no model).
func ownership(r repoTables, named map[string]map[string][]string) (map[string]string, []string) {
	owner := map[string]string{}
	var out []string
	for _, table := range r.tables {
		switch ms := r.owners[table]; {
		case len(ms) == 1:
			owner[table] = ms[0]
		case len(ms) > 1:
			out = append(out, fmt.Sprintf("table %s has a bun model in %d packages (%s): give it one, in its owner, and let the others use its API",
				table, len(ms), strings.Join(ms, ", ")))
			owner[table] = ms[0]
		case modelless[table] != "":
			owner[table] = modelless[table]
		default:
			var by []string
			for dir, tables := range named {
				if _, ok := tables[table]; ok && dir != schemaHome {
					by = append(by, dir)
				}
			}
			slices.Sort(by)
			if len(by) > 1 {
				out = append(out, fmt.Sprintf("table %s, with no bun model, is named by %d packages (%s): give it a model in its owner and let the others use its API",
					table, len(by), strings.Join(by, ", ")))
			}
			if len(by) > 0 {
				owner[table] = by[0]
			}
		}
	}
	return owner, out
}

// tableViolations returns, for package p, where its files name a table
// that owner does not give to p, one line each ("dir/file:line: what");
// named receives, for each table p names, where.
func tableViolations(p pkgFiles, r repoTables, n namer, owner map[string]string, named map[string][]string) []string {
	var out []string
	mention := func(node ast.Node, table, format string, args ...any) {
		pos := p.fset.Position(node.Pos())
		where := fmt.Sprintf("%s/%s:%d", p.dir, filepath.Base(pos.Filename), pos.Line)
		if named != nil {
			named[table] = append(named[table], where)
		}
		if o, ok := owner[table]; owner == nil || !ok || o == p.dir {
			return
		}
		out = append(out, where+": "+fmt.Sprintf(format, args...)+fmt.Sprintf(": table %s is package %s's; use its API", table, owner[table]))
	}
	// The package's struct fields and package-level variables, by name,
	// with the expressions that give their types: what a selector or an
	// identifier that object resolution leaves open may refer to; and its
	// functions and methods, by name, with their results' types.
	fields, globals := map[string][]ast.Expr{}, map[string][]ast.Expr{}
	funcs := map[string][][]ast.Expr{}
	for _, f := range p.files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.GenDecl:
				if d.Tok != token.VAR {
					continue
				}
				for _, sp := range d.Specs {
					vs := sp.(*ast.ValueSpec)
					for i, name := range vs.Names {
						globals[name.Name] = append(globals[name.Name], specType(vs, i))
					}
				}
			case *ast.FuncDecl:
				var results []ast.Expr
				if d.Type.Results != nil {
					for _, res := range d.Type.Results.List {
						for range max(1, len(res.Names)) {
							results = append(results, res.Type)
						}
					}
				}
				funcs[d.Name.Name] = append(funcs[d.Name.Name], results)
			}
		}
		ast.Inspect(f, func(node ast.Node) bool {
			if st, ok := node.(*ast.StructType); ok {
				for _, fld := range st.Fields.List {
					for _, name := range fld.Names {
						fields[name.Name] = append(fields[name.Name], fld.Type)
					}
				}
			}
			return true
		})
	}
	for _, f := range p.files {
		// imported maps the names f imports model-owning packages under
		// to their models.
		imported := map[string]map[string]string{}
		for _, im := range f.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			dir, ok := strings.CutPrefix(path, modulePath+"/")
			if !ok || r.models[dir] == nil || dir == p.dir {
				continue
			}
			name := filepath.Base(dir)
			if im.Name != nil {
				name = im.Name.Name
			}
			imported[name] = r.models[dir]
		}
		// model returns the other package's model that e mentions, and
		// its table.
		model := func(e ast.Expr) (string, string) {
			found, table := "", ""
			ast.Inspect(e, func(node ast.Node) bool {
				if sel, ok := node.(*ast.SelectorExpr); ok && found == "" {
					if x, ok := sel.X.(*ast.Ident); ok && imported[x.Name] != nil {
						if t, ok := imported[x.Name][sel.Sel.Name]; ok {
							found, table = x.Name+"."+sel.Sel.Name, t
						}
					}
				}
				return found == ""
			})
			return found, table
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
				if x, ok := fun.X.(*ast.Ident); ok && imported[x.Name] != nil {
					return nil // the owner's own functions return what they read
				}
				name = fun.Sel.Name
			}
			var res []ast.Expr
			for _, results := range funcs[name] {
				if i < len(results) {
					res = append(res, results[i])
				}
			}
			return res
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
						for i, name := range d.Names {
							if name.Name == x.Name {
								return []ast.Expr{specType(d, i)}
							}
						}
					case *ast.AssignStmt:
						for i, lhs := range d.Lhs {
							if id, ok := lhs.(*ast.Ident); !ok || id.Name != x.Name {
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
					if id, ok := x.X.(*ast.Ident); ok && imported[id.Name] != nil {
						return []ast.Expr{x}
					}
					return fields[x.Sel.Name]
				}
				return []ast.Expr{e}
			}
		}
		// inTable holds the string literals given to a table method.
		inTable := map[*ast.BasicLit]bool{}
		ast.Inspect(f, func(node ast.Node) bool {
			switch node := node.(type) {
			case *ast.ImportSpec:
				return false
			case *ast.Field:
				if table := tagTable(node.Tag); table != "" {
					mention(node.Tag, table, "a bun model of its own")
				}
			case *ast.BasicLit:
				if node.Kind != token.STRING {
					break
				}
				if s, err := strconv.Unquote(node.Value); err == nil {
					for _, table := range n.names(s, inTable[node]) {
						mention(node, table, "a string names table %s", table)
					}
				}
			case *ast.CallExpr:
				sel, ok := node.Fun.(*ast.SelectorExpr)
				if !ok {
					break
				}
				if tableArgs[sel.Sel.Name] {
					for _, a := range node.Args {
						ast.Inspect(a, func(an ast.Node) bool {
							if lit, ok := an.(*ast.BasicLit); ok {
								inTable[lit] = true
							}
							return true
						})
					}
				}
				if sel.Sel.Name != "Model" || len(node.Args) != 1 {
					break
				}
				for _, t := range typeOf(node.Args[0]) {
					if t == nil {
						continue
					}
					if m, table := model(t); m != "" {
						mention(node, table, "a query's Model is %s", m)
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

// checkOwners runs the rules over pkgs and returns the violations.
func checkOwners(pkgs []pkgFiles, r repoTables) []string {
	n := newNamer(r.tables)
	named := map[string]map[string][]string{}
	for _, p := range pkgs {
		named[p.dir] = map[string][]string{}
		tableViolations(p, r, n, nil, named[p.dir])
	}
	owner, out := ownership(r, named)
	for _, p := range pkgs {
		if p.dir == schemaHome || ownerAllowlist[p.dir] != "" {
			continue
		}
		out = append(out, tableViolations(p, r, n, owner, nil)...)
	}
	return out
}

// TestTableOwners checks every package of the repository against the
// rules above.
func TestTableOwners(t *testing.T) {
	t.Parallel()
	pkgs := readPackages(t, ".")
	if len(pkgs) < 30 {
		t.Fatalf("found %d package directories: the test runs in the wrong directory", len(pkgs))
	}
	r := readTables(t, ".", pkgs)
	for dir := range ownerAllowlist {
		if !slices.ContainsFunc(pkgs, func(p pkgFiles) bool { return p.dir == dir }) {
			t.Errorf("ownerAllowlist names %s, which has no Go files: drop it", dir)
		}
	}
	for _, v := range checkOwners(pkgs, r) {
		t.Error(v)
	}
}

// TestTableOwnersCatches plants each kind of violation in a package of
// its own and checks that checkOwners reports it, and that what the
// rules allow passes.
func TestTableOwnersCatches(t *testing.T) {
	t.Parallel()
	pkgs := readPackages(t, ".")
	r := readTables(t, ".", pkgs)
	const imports = `import (
	"github.com/uptrace/bun"
	"github.com/tradekit/tradekit/brokers/connect"
	"github.com/tradekit/tradekit/alerts"
)
`
	tests := []struct {
		name string
		src  string   // declarations of a new package planted/p, after imports
		want []string // the violations, by the words that name them
	}{
		{"a join of another package's table", `func f(q *bun.SelectQuery) {
	q.Join("JOIN portfolio_fills AS pf ON pf.portfolio_id = lp.portfolio_id AND pf.seq = " +
		"(SELECT min(nf.seq) FROM portfolio_fills AS nf WHERE nf.portfolio_id = lp.portfolio_id AND nf.seq > follow.copied_seq)")
}`, []string{"table portfolio_fills", "table portfolio_fills"}},
		{"raw SQL", `func f(db bun.IDB) { db.NewRaw("SELECT count(*) FROM broker_connections WHERE user_id = ?", 1) }`,
			[]string{"table broker_connections"}},
		{"an English word as a table", `func f(db bun.IDB) { db.NewRaw("SELECT count(*) FROM webhooks") }`,
			[]string{"table webhooks"}},
		{"an update", `func f(db bun.IDB) { db.NewRaw("UPDATE follows SET auto_sync = false") }`,
			[]string{"table follows"}},
		{"an insert", `func f(db bun.IDB) { db.NewRaw("INSERT INTO notifications (id) VALUES (?)", 1) }`,
			[]string{"table notifications"}},
		{"a table expression", `func f(db bun.IDB) { db.NewSelect().TableExpr("Portfolios AS p") }`,
			[]string{"table portfolios"}},
		{"a quoted name in a raw string", "func f(db bun.IDB) { db.NewSelect().TableExpr(`\"broker_orders\" AS c`) }",
			[]string{"table broker_orders"}},
		{"a table method", `func f(db bun.IDB) { db.NewSelect().Table("backtests") }`,
			[]string{"table backtests"}},
		{"a subquery", `func f(db bun.IDB) { db.NewSelect().Where("id IN (SELECT portfolio_id FROM portfolio_equity)") }`,
			[]string{"table portfolio_equity"}},
		{"a model of its own", "type row struct {\n\tbun.BaseModel `bun:\"table:portfolio_positions,alias:p\"`\n}",
			[]string{"table portfolio_positions"}},
		{"a var of a model's slice", `func f(db bun.IDB) { var orders []connect.Order; db.NewSelect().Model(&orders).Scan(ctx) }`,
			[]string{"Model is connect.Order"}},
		{"a composite literal", `func f(tx bun.Tx) { c := connect.Connection{}; tx.NewInsert().Model(&c).Exec(ctx) }`,
			[]string{"Model is connect.Connection"}},
		{"a literal in the call", `func f(tx bun.Tx) { tx.NewInsert().Model(&alerts.Notification{}).Exec(ctx) }`,
			[]string{"Model is alerts.Notification"}},
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
		{"through the owners' APIs, and English words", `func f(db bun.IDB, id uuid.UUID) {
	st := connect.NewStore(db)
	p, _ := st.PortfolioOf(ctx, id)
	_ = p
	_ = fmt.Errorf("alerts: update alerts: %w", err)
	_ = "the orders of the portfolio's fills, its webhooks and alerts"
	db.NewUpdate().Column("auto_sync", "notifications").Where("follow.notifications")
	_ = uuid.NewSHA1(ns, []byte("portfolio:"+slug))
}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "planted.go", "package p\n\n"+imports+tt.src+"\n", 0)
			if err != nil {
				t.Fatal(err)
			}
			planted := pkgFiles{dir: "planted/p", fset: fset, files: []*ast.File{f}}
			var got []string
			for _, v := range checkOwners(append(slices.Clone(pkgs), planted), r) {
				if strings.HasPrefix(v, "planted/") {
					got = append(got, v)
				}
			}
			if len(got) != len(tt.want) {
				t.Fatalf("checkOwners = %q, want %d matching %q", got, len(tt.want), tt.want)
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
		src := "package p\n\nimport cn \"" + modulePath + "/brokers/connect\"\n\n" +
			"func f(db bun.IDB) { var o cn.Order; db.NewSelect().Model(&o).Scan(ctx) }\n"
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "planted.go", src, 0)
		if err != nil {
			t.Fatal(err)
		}
		got := checkOwners(append(slices.Clone(pkgs), pkgFiles{dir: "planted/p", fset: fset, files: []*ast.File{f}}), r)
		if !slices.ContainsFunc(got, func(v string) bool { return strings.Contains(v, "planted/p/planted.go:5: a query's Model is cn.Order") }) {
			t.Errorf("checkOwners = %q, want one naming cn.Order in planted/p", got)
		}
	})
	t.Run("a second model", func(t *testing.T) {
		t.Parallel()
		src := "package p\n\nimport \"github.com/uptrace/bun\"\n\ntype Webhook struct {\n\tbun.BaseModel `bun:\"table:webhooks\"`\n}\n"
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "planted.go", src, 0)
		if err != nil {
			t.Fatal(err)
		}
		all := append(slices.Clone(pkgs), pkgFiles{dir: "planted/p", fset: fset, files: []*ast.File{f}})
		got := checkOwners(all, readTables(t, ".", all))
		if !slices.ContainsFunc(got, func(v string) bool {
			return strings.Contains(v, "table webhooks has a bun model in 2 packages (alerts, planted/p)")
		}) {
			t.Errorf("checkOwners = %q, want one saying webhooks has two models", got)
		}
	})
	t.Run("a table named by two packages", func(t *testing.T) {
		t.Parallel()
		// A table of the schema with no model, named by two packages.
		withTable := r
		withTable.tables = append(slices.Clone(r.tables), "planted_rows")
		var planted []pkgFiles
		for _, dir := range []string{"planted/a", "planted/b"} {
			src := "package p\n\nfunc f(db bun.IDB) { db.NewRaw(\"DELETE FROM planted_rows\") }\n"
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "planted.go", src, 0)
			if err != nil {
				t.Fatal(err)
			}
			planted = append(planted, pkgFiles{dir: dir, fset: fset, files: []*ast.File{f}})
			got := checkOwners(append(slices.Clone(pkgs), planted...), withTable)
			want := "table planted_rows, with no bun model, is named by 2 packages (planted/a, planted/b)"
			if has := slices.ContainsFunc(got, func(v string) bool { return strings.Contains(v, want) }); has != (len(planted) == 2) {
				t.Errorf("with %d packages naming it, checkOwners = %q; want %q only with 2", len(planted), got, want)
			}
		}
	})
}
