package dbcopy

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/tradekit/tradekit/internal/database"
)

// kind is what a column holds, whatever each database calls it: the
// copy reads, writes and checksums a value by its column's kind.
type kind int

const (
	kindText    kind = iota // TEXT, VARCHAR, JSON kept as text
	kindUUID                // PostgreSQL UUID; TEXT on SQLite
	kindDecimal             // PostgreSQL NUMERIC; TEXT on SQLite
	kindInt                 // INTEGER, BIGINT, SMALLINT
	kindFloat               // DOUBLE PRECISION, REAL
	kindBool                // BOOLEAN; an INTEGER 0 or 1 on SQLite
	kindTime                // TIMESTAMP(TZ)
	kindDate                // PostgreSQL DATE; TEXT YYYY-MM-DD on SQLite
	kindBytes               // BYTEA, BLOB
)

var kindNames = [...]string{"text", "uuid", "decimal", "integer", "float", "boolean", "timestamp", "date", "bytes"}

func (k kind) String() string { return kindNames[k] }

// column is one column of a table as the copy handles it.
type column struct {
	name string
	kind kind
	// dstType is the type of the column in the target's catalog.
	dstType string
}

// foreignKey is a reference from columns of a table to columns of ref.
type foreignKey struct {
	ref        string
	cols, refs []string
}

// table is one table to copy: its columns in name order, and its
// references to other tables.
type table struct {
	name string
	cols []column
	fks  []foreignKey
}

// selfRefs returns the foreign keys of t that reference t itself.
func (t *table) selfRefs() []foreignKey {
	var out []foreignKey
	for _, fk := range t.fks {
		if fk.ref == t.name {
			out = append(out, fk)
		}
	}
	return out
}

// colIndex returns the index of the column name in t.cols, or -1.
func (t *table) colIndex(name string) int {
	return slices.IndexFunc(t.cols, func(c column) bool { return c.name == name })
}

// dbColumn is a column as one database's catalog declares it.
type dbColumn struct {
	name, decl string
}

// dbTable is a table as one database's catalog describes it.
type dbTable struct {
	name string
	cols []dbColumn
	fks  []foreignKey
}

// inspect reads the tables of db's catalog (but bun's migration
// bookkeeping), with their columns and foreign keys, by name.
func inspect(ctx context.Context, db bun.IDB) (map[string]*dbTable, error) {
	if db.Dialect().Name() == dialect.PG {
		return inspectPG(ctx, db)
	}
	return inspectSQLite(ctx, db)
}

// isBookkeeping reports whether the table name is bun's migration
// bookkeeping, which is not copied.
func isBookkeeping(name string) bool {
	return name == database.MigrationsTable || name == database.MigrationLocksTable
}

// inspectSQLite reads the catalog of a SQLite database: sqlite_master and
// the table_info and foreign_key_list pragmas.
func inspectSQLite(ctx context.Context, db bun.IDB) (map[string]*dbTable, error) {
	var names []string
	if err := db.NewRaw("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'").
		Scan(ctx, &names); err != nil {
		return nil, fmt.Errorf("read the tables: %w", err)
	}
	tables := map[string]*dbTable{}
	for _, name := range names {
		if isBookkeeping(name) {
			continue
		}
		t := &dbTable{name: name}
		rows, err := db.QueryContext(ctx, "SELECT name, type FROM pragma_table_info(?) ORDER BY cid", name)
		if err != nil {
			return nil, fmt.Errorf("read the columns of %s: %w", name, err)
		}
		for rows.Next() {
			var c dbColumn
			if err := rows.Scan(&c.name, &c.decl); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read the columns of %s: %w", name, err)
			}
			t.cols = append(t.cols, c)
		}
		if err := closeRows(rows); err != nil {
			return nil, fmt.Errorf("read the columns of %s: %w", name, err)
		}
		rows, err = db.QueryContext(ctx, `SELECT id, "table", "from", "to" FROM pragma_foreign_key_list(?) ORDER BY id, seq`, name)
		if err != nil {
			return nil, fmt.Errorf("read the foreign keys of %s: %w", name, err)
		}
		last := int64(-1)
		for rows.Next() {
			var id int64
			var ref, from, to string
			if err := rows.Scan(&id, &ref, &from, &to); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read the foreign keys of %s: %w", name, err)
			}
			if id != last {
				t.fks = append(t.fks, foreignKey{ref: ref})
				last = id
			}
			fk := &t.fks[len(t.fks)-1]
			fk.cols, fk.refs = append(fk.cols, from), append(fk.refs, to)
		}
		if err := closeRows(rows); err != nil {
			return nil, fmt.Errorf("read the foreign keys of %s: %w", name, err)
		}
		tables[name] = t
	}
	return tables, nil
}

// inspectPG reads the catalog of the current schema of a PostgreSQL
// database: information_schema for tables and columns, pg_constraint for
// foreign keys (information_schema cannot pair the columns of a
// multi-column key).
func inspectPG(ctx context.Context, db bun.IDB) (map[string]*dbTable, error) {
	rows, err := db.QueryContext(ctx, `SELECT c.table_name, c.column_name, c.data_type
		FROM information_schema.columns c
		JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
		WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'
		ORDER BY c.table_name, c.ordinal_position`)
	if err != nil {
		return nil, fmt.Errorf("read the columns: %w", err)
	}
	tables := map[string]*dbTable{}
	for rows.Next() {
		var name string
		var c dbColumn
		if err := rows.Scan(&name, &c.name, &c.decl); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read the columns: %w", err)
		}
		if isBookkeeping(name) {
			continue
		}
		t := tables[name]
		if t == nil {
			t = &dbTable{name: name}
			tables[name] = t
		}
		t.cols = append(t.cols, c)
	}
	if err := closeRows(rows); err != nil {
		return nil, fmt.Errorf("read the columns: %w", err)
	}
	rows, err = db.QueryContext(ctx, `SELECT c.oid::text, cl.relname, rf.relname, a.attname, af.attname
		FROM pg_constraint c
		JOIN pg_class cl ON cl.oid = c.conrelid
		JOIN pg_class rf ON rf.oid = c.confrelid
		CROSS JOIN LATERAL unnest(c.conkey, c.confkey) WITH ORDINALITY AS k(attnum, fattnum, ord)
		JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum
		JOIN pg_attribute af ON af.attrelid = c.confrelid AND af.attnum = k.fattnum
		WHERE c.contype = 'f' AND cl.relnamespace = current_schema()::regnamespace
		ORDER BY cl.relname, c.oid, k.ord`)
	if err != nil {
		return nil, fmt.Errorf("read the foreign keys: %w", err)
	}
	last := ""
	for rows.Next() {
		var oid, name, ref, from, to string
		if err := rows.Scan(&oid, &name, &ref, &from, &to); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read the foreign keys: %w", err)
		}
		t := tables[name]
		if t == nil {
			continue
		}
		if oid != last {
			t.fks = append(t.fks, foreignKey{ref: ref})
			last = oid
		}
		fk := &t.fks[len(t.fks)-1]
		fk.cols, fk.refs = append(fk.cols, from), append(fk.refs, to)
	}
	if err := closeRows(rows); err != nil {
		return nil, fmt.Errorf("read the foreign keys: %w", err)
	}
	return tables, nil
}

// closeRows closes rows and returns the error that ended them, if any.
func closeRows(rows interface {
	Close() error
	Err() error
}) error {
	err := rows.Err()
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	return err
}

// pgKind returns the kind of a PostgreSQL column of data_type decl.
func pgKind(decl string) (kind, bool) {
	switch decl {
	case "text", "character varying", "character", "json", "jsonb":
		return kindText, true
	case "uuid":
		return kindUUID, true
	case "numeric":
		return kindDecimal, true
	case "smallint", "integer", "bigint":
		return kindInt, true
	case "double precision", "real":
		return kindFloat, true
	case "boolean":
		return kindBool, true
	case "timestamp with time zone", "timestamp without time zone":
		return kindTime, true
	case "date":
		return kindDate, true
	case "bytea":
		return kindBytes, true
	}
	return 0, false
}

// sqliteKind returns the kind of a SQLite column declared decl. TEXT is
// ambiguous: the PostgreSQL side, when there is one, says what it holds.
func sqliteKind(decl string) (kind, bool) {
	d := strings.ToUpper(decl)
	switch {
	case strings.Contains(d, "BOOL"):
		return kindBool, true
	case strings.Contains(d, "INT"):
		return kindInt, true
	case strings.Contains(d, "CHAR"), strings.Contains(d, "CLOB"), strings.Contains(d, "TEXT"), strings.Contains(d, "JSON"), d == "UUID":
		return kindText, true
	case strings.Contains(d, "TIMESTAMP"), strings.Contains(d, "DATETIME"):
		return kindTime, true
	case strings.Contains(d, "BLOB"), d == "BYTEA":
		return kindBytes, true
	case strings.Contains(d, "REAL"), strings.Contains(d, "FLOA"), strings.Contains(d, "DOUB"):
		return kindFloat, true
	case d == "DATE":
		return kindDate, true
	case strings.Contains(d, "NUMERIC"), strings.Contains(d, "DECIMAL"):
		return kindDecimal, true
	}
	return 0, false
}

// kindOf returns the kind of a column declared decl in a database of
// dialect name d.
func kindOf(d dialect.Name, decl string) (kind, bool) {
	if d == dialect.PG {
		return pgKind(decl)
	}
	return sqliteKind(decl)
}

// plan matches the catalogs of the source and the target: the same
// tables, each with the same columns, of kinds that agree. A column's
// kind is PostgreSQL's when either side is PostgreSQL (SQLite's TEXT
// holds UUIDs, decimals and dates alike), else the source's. The foreign
// keys are the target's, which the load must satisfy. The tables come
// back in an order where every table comes after those it references.
func plan(src, dst map[string]*dbTable, srcDialect, dstDialect dialect.Name) ([]*table, error) {
	for name := range src {
		if dst[name] == nil {
			return nil, fmt.Errorf("the table %s is in the source only", name)
		}
	}
	var tables []*table
	for _, name := range sortedKeys(dst) {
		s, d := src[name], dst[name]
		if s == nil {
			return nil, fmt.Errorf("the table %s is in the target only", name)
		}
		t := &table{name: name, fks: d.fks}
		for _, sc := range s.cols {
			if !slices.ContainsFunc(d.cols, func(c dbColumn) bool { return c.name == sc.name }) {
				return nil, fmt.Errorf("the column %s.%s is in the source only", name, sc.name)
			}
		}
		for _, dc := range d.cols {
			i := slices.IndexFunc(s.cols, func(c dbColumn) bool { return c.name == dc.name })
			if i < 0 {
				return nil, fmt.Errorf("the column %s.%s is in the target only", name, dc.name)
			}
			k, err := columnKind(name, s.cols[i], dc, srcDialect, dstDialect)
			if err != nil {
				return nil, err
			}
			t.cols = append(t.cols, column{name: dc.name, kind: k, dstType: dc.decl})
		}
		slices.SortFunc(t.cols, func(a, b column) int { return strings.Compare(a.name, b.name) })
		tables = append(tables, t)
	}
	return order(tables)
}

// columnKind returns the kind of the column of table that the source
// declares sc and the target dc.
func columnKind(table string, sc, dc dbColumn, srcDialect, dstDialect dialect.Name) (kind, error) {
	sk, ok := kindOf(srcDialect, sc.decl)
	if !ok {
		return 0, fmt.Errorf("the column %s.%s: the source's type %s is not supported", table, sc.name, sc.decl)
	}
	dk, ok := kindOf(dstDialect, dc.decl)
	if !ok {
		return 0, fmt.Errorf("the column %s.%s: the target's type %s is not supported", table, dc.name, dc.decl)
	}
	switch {
	case sk == dk:
		return sk, nil
	case srcDialect == dialect.PG && dstDialect != dialect.PG && dk == kindText:
		return sk, nil
	case dstDialect == dialect.PG && srcDialect != dialect.PG && sk == kindText:
		return dk, nil
	}
	return 0, fmt.Errorf("the column %s.%s is %s in the source (%s) but %s in the target (%s)",
		table, sc.name, sk, sc.decl, dk, dc.decl)
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// order sorts tables so that each comes after the tables it references
// (a reference to itself aside), by name where that leaves a choice.
// References that form a cycle are an error naming its tables.
func order(tables []*table) ([]*table, error) {
	byName := map[string]*table{}
	for _, t := range tables {
		byName[t.name] = t
	}
	var out []*table
	done := map[string]bool{}
	for len(out) < len(tables) {
		progress := false
		for _, t := range tables {
			if done[t.name] || !refsDone(t, done, byName) {
				continue
			}
			out = append(out, t)
			done[t.name] = true
			progress = true
		}
		if !progress {
			var left []string
			for _, t := range tables {
				if !done[t.name] {
					left = append(left, t.name)
				}
			}
			return nil, fmt.Errorf("the foreign keys of the tables %s form a cycle", strings.Join(left, ", "))
		}
	}
	return out, nil
}

// refsDone reports whether every table t references, but itself, is
// done; a reference to a table that is not copied does not count.
func refsDone(t *table, done map[string]bool, byName map[string]*table) bool {
	for _, fk := range t.fks {
		if fk.ref != t.name && byName[fk.ref] != nil && !done[fk.ref] {
			return false
		}
	}
	return true
}
