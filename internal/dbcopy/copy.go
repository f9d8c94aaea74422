package dbcopy

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
	"github.com/uptrace/bun/schema"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/internal/database"
)

// The kinds of error [Copy] returns, each as a [*tradekit.Error] whose
// message, for users, names the table or column at fault.
var (
	// ErrNotEmpty reports a target that holds rows of its own: Copy
	// writes only into an empty database. It wraps [tradekit.ErrConflict].
	ErrNotEmpty = fmt.Errorf("the target is not empty: %w", tradekit.ErrConflict)
	// ErrMismatch reports a table whose rows in the target, read back
	// before the commit, differ from the source's: nothing was committed.
	ErrMismatch = errors.New("the copy does not match the source")
	// ErrSchema reports a source and a target whose schemas differ:
	// migrations missing on either side, or tables or columns in one
	// only. It wraps [tradekit.ErrInvalid].
	ErrSchema = fmt.Errorf("the schemas differ: %w", tradekit.ErrInvalid)
)

// failf returns an error of the kind given, with the message for users
// that format and args make, prefixed with the package's name.
func failf(kind error, format string, args ...any) error {
	return fmt.Errorf("dbcopy: %w", tradekit.Errorf(kind, format, args...))
}

// defaultBatchBytes is the size of SQL at which an INSERT is sent: a few
// thousand rows of prices, well within what either database parses at
// once.
const defaultBatchBytes = 1 << 20

// Options tunes [Copy]. The zero value is ready to use.
type Options struct {
	// Progress, when set, is called from Copy's goroutine after each
	// statement written and once after each table.
	Progress func(Progress)
	// BatchBytes is the size of SQL at which an INSERT is sent (1 MiB
	// when zero).
	BatchBytes int
}

// Progress tells how far a [Copy] has come.
type Progress struct {
	Table string // the table being written
	Rows  int64  // rows written so far, of every table
	Total int64  // rows to write in all
}

// Result is what [Copy] copied.
type Result struct {
	Tables []TableResult // in the order written
	Rows   int64
}

// TableResult is one table copied: its rows and their checksum, equal in
// the source and the target.
type TableResult struct {
	Name     string
	Rows     int64
	Checksum string
}

// Copy copies every table of src into dst, except bun's migration
// bookkeeping, in one transaction on dst, and checks the copy before it
// commits: per table, the row count and a checksum of the rows read back
// from dst must equal those read from src.
//
// Both databases must have exactly this binary's migrations applied;
// else the error wraps [ErrSchema], as it does when their tables or
// columns differ. dst must be empty: rows of its own in any table (but
// those its migrations inserted, such as the plans) make the error wrap
// [ErrNotEmpty], naming the table. A mismatch on the read back wraps
// [ErrMismatch], naming the table. On any error, and when ctx ends,
// nothing is committed: dst is as it was.
//
// src is read in one read-only transaction (REPEATABLE READ on
// PostgreSQL), so that the copy is of one moment of it.
func Copy(ctx context.Context, src, dst *bun.DB, opts Options) (*Result, error) {
	if opts.BatchBytes <= 0 {
		opts.BatchBytes = defaultBatchBytes
	}
	if err := CheckMigrations(ctx, src, "source"); err != nil {
		return nil, err
	}
	if err := CheckMigrations(ctx, dst, "target"); err != nil {
		return nil, err
	}
	srcOpts := &sql.TxOptions{ReadOnly: true}
	if src.Dialect().Name() == dialect.PG {
		srcOpts.Isolation = sql.LevelRepeatableRead
	}
	stx, err := src.BeginTx(ctx, srcOpts)
	if err != nil {
		return nil, fmt.Errorf("dbcopy: read the source: %w", err)
	}
	defer stx.Rollback()
	tables, err := planCopy(ctx, stx, dst)
	if err != nil {
		return nil, err
	}
	counts, total, err := countRows(ctx, stx, tables)
	if err != nil {
		return nil, fmt.Errorf("dbcopy: the source: %w", err)
	}
	base, err := baseline(ctx, tables)
	if err != nil {
		return nil, err
	}
	dtx, err := dst.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("dbcopy: write the target: %w", err)
	}
	defer dtx.Rollback()
	if err := clearTarget(ctx, dtx, tables, base); err != nil {
		return nil, err
	}
	var fks []pgForeignKey
	if dst.Dialect().Name() == dialect.PG {
		if fks, err = dropForeignKeys(ctx, dtx, tables); err != nil {
			return nil, err
		}
	}
	sums, err := load(ctx, stx, dtx, tables, opts, total)
	if err != nil {
		return nil, err
	}
	res := &Result{}
	for i, t := range tables {
		if sums[i].rows != counts[i] {
			return nil, failf(ErrMismatch, "%s: counted %d rows in the source, then read %d", t.name, counts[i], sums[i].rows)
		}
		res.Tables = append(res.Tables, TableResult{Name: t.name, Rows: sums[i].rows, Checksum: sums[i].String()})
		res.Rows += sums[i].rows
	}
	if err := addForeignKeys(ctx, dtx, fks); err != nil {
		return nil, err
	}
	for i, t := range tables {
		got, err := tableChecksum(ctx, dtx, t)
		if err != nil {
			return nil, fmt.Errorf("dbcopy: read back %s: %w", t.name, err)
		}
		if got.rows != sums[i].rows || got.String() != sums[i].String() {
			return nil, failf(ErrMismatch, "the table %s differs after the copy: the source has %d rows (checksum %.12s…), the target %d (%.12s…); nothing was committed",
				t.name, sums[i].rows, sums[i].String(), got.rows, got.String())
		}
	}
	if dst.Dialect().Name() == dialect.PG {
		if err := resetSequences(ctx, dtx, tables); err != nil {
			return nil, err
		}
	}
	if err := dtx.Commit(); err != nil {
		return nil, fmt.Errorf("dbcopy: commit: %w", err)
	}
	return res, nil
}

// load writes the rows of tables from src into dst, and returns the
// checksum of each table's rows as read from src.
func load(ctx context.Context, src bun.IDB, dst bun.Tx, tables []*table, opts Options, total int64) ([]*checksum, error) {
	send, sctx := newSender(ctx, dst, opts.Progress, total)
	w := &writer{dialect: dst.Dialect(), pg: dst.Dialect().Name() == dialect.PG, opts: opts, send: send}
	sums := make([]*checksum, len(tables))
	var err error
	for i, t := range tables {
		if sums[i], err = w.copyTable(sctx, src, t); err != nil {
			break
		}
	}
	// The sender's error, if any, is the cause of the reader's.
	if serr := send.wait(); serr != nil {
		return nil, serr
	}
	if err != nil {
		return nil, err
	}
	return sums, nil
}

// CheckMigrations returns an error wrapping [ErrSchema] unless db has
// exactly this binary's migrations applied; side ("source", "target")
// names db in the message.
func CheckMigrations(ctx context.Context, db *bun.DB, side string) error {
	pending, unknown, err := database.MigrationStatus(ctx, db)
	switch {
	case err != nil:
		return failf(ErrSchema, "the %s is not a migrated Tradekit database (%v)", side, err)
	case len(unknown) > 0:
		return failf(ErrSchema, "the %s has %d migrations this version does not know (the first: %s): use the version that wrote it",
			side, len(unknown), unknown[0])
	case len(pending) > 0:
		return failf(ErrSchema, "the %s lacks %d migrations of this version (the first: %s): run 'tradekit migrate' on it first",
			side, len(pending), pending[0])
	}
	return nil
}

// planCopy reads both catalogs and returns the tables to copy, in the
// order to write them.
func planCopy(ctx context.Context, src bun.IDB, dst *bun.DB) ([]*table, error) {
	s, err := inspect(ctx, src)
	if err != nil {
		return nil, fmt.Errorf("dbcopy: the source: %w", err)
	}
	d, err := inspect(ctx, dst)
	if err != nil {
		return nil, fmt.Errorf("dbcopy: the target: %w", err)
	}
	tables, err := plan(s, d, src.Dialect().Name(), dst.Dialect().Name())
	if err != nil {
		return nil, failf(ErrSchema, "%v", err)
	}
	return tables, nil
}

// countRows returns the number of rows of each table in db, and their
// sum.
func countRows(ctx context.Context, db bun.IDB, tables []*table) ([]int64, int64, error) {
	counts := make([]int64, len(tables))
	var total int64
	for i, t := range tables {
		if err := db.NewRaw("SELECT count(*) FROM ?", bun.Ident(t.name)).Scan(ctx, &counts[i]); err != nil {
			return nil, 0, fmt.Errorf("count the rows of %s: %w", t.name, err)
		}
		total += counts[i]
	}
	return counts, total, nil
}

// baseline returns the checksums of the tables that a freshly migrated
// database holds rows in (the plans, the exchanges): a target holding
// exactly those rows counts as empty. It migrates a SQLite database in a
// temporary directory to see them; the checksums do not depend on the
// database.
func baseline(ctx context.Context, tables []*table) (map[string]string, error) {
	dir, err := os.MkdirTemp("", "tradekit-dbcopy-")
	if err != nil {
		return nil, fmt.Errorf("dbcopy: %w", err)
	}
	defer os.RemoveAll(dir)
	db, err := database.Open(ctx, filepath.Join(dir, "fresh.db"), database.Options{})
	if err != nil {
		return nil, fmt.Errorf("dbcopy: a fresh database: %w", err)
	}
	defer db.Close()
	if _, err := database.Migrate(ctx, db); err != nil {
		return nil, fmt.Errorf("dbcopy: a fresh database: %w", err)
	}
	out := map[string]string{}
	for _, t := range tables {
		sum, err := tableChecksum(ctx, db, t)
		if err != nil {
			return nil, fmt.Errorf("dbcopy: a fresh database: %s: %w", t.name, err)
		}
		if sum.rows > 0 {
			out[t.name] = sum.String()
		}
	}
	return out, nil
}

// clearTarget checks that the target is empty, but for the rows its
// migrations inserted (base), and deletes those, last table first, to
// make room for the source's.
func clearTarget(ctx context.Context, tx bun.Tx, tables []*table, base map[string]string) error {
	var fresh []*table
	for _, t := range tables {
		var any bool
		if err := tx.NewRaw("SELECT EXISTS (SELECT 1 FROM ?)", bun.Ident(t.name)).Scan(ctx, &any); err != nil {
			return fmt.Errorf("dbcopy: the target: %s: %w", t.name, err)
		}
		if !any {
			continue
		}
		sum, err := tableChecksum(ctx, tx, t)
		if err != nil {
			return fmt.Errorf("dbcopy: the target: %s: %w", t.name, err)
		}
		if base[t.name] != sum.String() {
			return failf(ErrNotEmpty, "the target is not empty: the table %s holds %d rows; copy into a new database", t.name, sum.rows)
		}
		fresh = append(fresh, t)
	}
	for i := len(fresh) - 1; i >= 0; i-- {
		if _, err := tx.NewRaw("DELETE FROM ?", bun.Ident(fresh[i].name)).Exec(ctx); err != nil {
			return fmt.Errorf("dbcopy: the target: clear %s: %w", fresh[i].name, err)
		}
	}
	return nil
}

// selectColumns returns the SELECT of t's columns, in t's order.
func selectColumns(d schema.Dialect, t *table) string {
	b := []byte("SELECT ")
	for i, c := range t.cols {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = dialect.AppendIdent(b, c.name, d.IdentQuote())
	}
	b = append(b, " FROM "...)
	b = dialect.AppendIdent(b, t.name, d.IdentQuote())
	return string(b)
}

// scanRows runs fn on each row of t in db, as canonical values; vals is
// reused from row to row.
func scanRows(ctx context.Context, db bun.IDB, t *table, fn func(vals []any) error) error {
	rows, err := db.QueryContext(ctx, selectColumns(db.Dialect(), t))
	if err != nil {
		return err
	}
	defer rows.Close()
	raw := make([]any, len(t.cols))
	ptrs := make([]any, len(t.cols))
	for i := range raw {
		ptrs[i] = &raw[i]
	}
	vals := make([]any, len(t.cols))
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		for i, c := range t.cols {
			if vals[i], err = normalize(c.kind, raw[i]); err != nil {
				return fmt.Errorf("the column %s: %w", c.name, err)
			}
		}
		if err := fn(vals); err != nil {
			return err
		}
	}
	return closeRows(rows)
}

// tableChecksum returns the checksum of the rows of t in db.
func tableChecksum(ctx context.Context, db bun.IDB, t *table) (*checksum, error) {
	sum := &checksum{}
	err := scanRows(ctx, db, t, func(vals []any) error {
		sum.add(t, vals)
		return nil
	})
	return sum, err
}

// resetSequences moves every sequence that feeds a column of the tables
// (serial and identity columns) past the largest value copied, so that
// the next insert does not collide. Tradekit's tables have none today;
// bun's migration table, which has one, is the target's own.
func resetSequences(ctx context.Context, tx bun.Tx, tables []*table) error {
	for _, t := range tables {
		for _, c := range t.cols {
			if c.kind != kindInt {
				continue
			}
			var seq sql.NullString
			if err := tx.NewRaw("SELECT pg_get_serial_sequence(?, ?)", quoteIdent(t.name), c.name).Scan(ctx, &seq); err != nil {
				return fmt.Errorf("dbcopy: the sequence of %s.%s: %w", t.name, c.name, err)
			}
			if !seq.Valid {
				continue
			}
			if _, err := tx.NewRaw("SELECT setval(?, coalesce(max(?), 0) + 1, false) FROM ?",
				seq.String, bun.Ident(c.name), bun.Ident(t.name)).Exec(ctx); err != nil {
				return fmt.Errorf("dbcopy: reset the sequence of %s.%s: %w", t.name, c.name, err)
			}
		}
	}
	return nil
}

// quoteIdent returns name as a double-quoted identifier.
func quoteIdent(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}
