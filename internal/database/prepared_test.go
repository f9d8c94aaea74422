package database_test

import (
	"context"
	"os"
	"testing"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"

	"github.com/tradekit/tradekit/internal/database"
	"github.com/tradekit/tradekit/internal/dbtest"
)

// probeByV is a Prepared query over a table that each test creates.
var probeByV = database.NewPrepared("probe_by_v", func(db bun.IDB, params ...any) schema.QueryAppender {
	return db.NewSelect().Table("prepared_probe").Column("id", "v").Where("v = ?", params[0]).Where("id >= ?", params[1]).Order("id")
})

// probeRename renames the value of the rows of one value to another.
var probeRename = database.NewPrepared("probe_rename", func(db bun.IDB, params ...any) schema.QueryAppender {
	return db.NewUpdate().Table("prepared_probe").Set("v = ?", params[0]).Where("v = ?", params[1])
})

// probeRatio divides by its parameter: 0 fails the statement, once
// prepared (on PostgreSQL: SQLite's quotient is NULL).
var probeRatio = database.NewPrepared("probe_ratio", func(db bun.IDB, params ...any) schema.QueryAppender {
	return db.NewRaw("SELECT 60 / ? AS r", bun.SafeQuery("CAST(? AS integer)", params[0]))
})

// TestPrepared checks that a Prepared query gives what it gives as text,
// on both databases, inside and outside a transaction of RunInTx; that a
// connection prepares it once; and that a statement that failed leaves a
// connection that runs it.
func TestPrepared(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		db.SetMaxOpenConns(1) // every transaction on the same connection
		type row struct {
			ID int
			V  string
		}
		read := func(db bun.IDB, v string, from int) ([]row, error) {
			var rows []row
			err := probeByV.Scan(ctx, db, &rows, v, from)
			return rows, err
		}
		inTx := func(fn func(tx bun.IDB) error) error {
			return database.RunInTx(ctx, db, func(ctx context.Context, tx bun.IDB) error { return fn(tx) })
		}

		// Before its table exists the statement fails, in its PREPARE.
		// (Not through a PgBouncer: 1.21 and later close the client's
		// connection when it prepares again a name whose PREPARE failed,
		// pgbouncer/pgbouncer#1118.)
		var err error
		if os.Getenv(dbtest.EnvPgBouncer) == "" {
			if err = inTx(func(tx bun.IDB) error { _, err := read(tx, "a", 0); return err }); err == nil {
				t.Fatal("a query of a missing table ran")
			}
		}
		if _, err := db.ExecContext(ctx, "CREATE TABLE prepared_probe (id INTEGER PRIMARY KEY, v TEXT NOT NULL)"); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, "INSERT INTO prepared_probe (id, v) VALUES (1, 'a'), (2, 'b'), (3, 'a'), (4, 'a')"); err != nil {
			t.Fatal(err)
		}
		want := []row{{3, "a"}, {4, "a"}}
		for i := 0; i < 3; i++ {
			var got []row
			err := inTx(func(tx bun.IDB) error {
				var err error
				got, err = read(tx, "a", 2)
				if err != nil {
					return err
				}
				// Twice in one transaction: prepared once.
				again, err := read(tx, "b", 0)
				if err == nil && (len(again) != 1 || again[0].ID != 2) {
					t.Errorf("second read in a transaction: %v, want [{2 b}]", again)
				}
				return err
			})
			if err != nil || len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
				t.Fatalf("transaction %d: %v (%v), want %v", i, got, err, want)
			}
		}
		if got, err := read(db, "a", 2); err != nil || len(got) != 2 || got[1] != want[1] {
			t.Fatalf("outside a transaction: %v (%v), want %v", got, err, want)
		}
		// Scan and Exec outside a transaction: prepared on PostgreSQL too.
		var got []row
		if err := probeByV.Scan(ctx, db, &got, "b", 0); err != nil || len(got) != 1 || got[0] != (row{2, "b"}) {
			t.Fatalf("Scan: %v (%v), want [{2 b}]", got, err)
		}
		res, err := probeRename.Exec(ctx, db, "c", "a")
		if err != nil {
			t.Fatal(err)
		}
		if n, err := res.RowsAffected(); err != nil || n != 3 {
			t.Fatalf("Exec: %d rows (%v), want 3", n, err)
		}

		// With the transaction's next statement: a rename back, then a
		// read that sees it.
		err = inTx(func(tx bun.IDB) error {
			if err := probeRename.ExecWithNext(ctx, tx, "a", "c"); err != nil {
				return err
			}
			got, err = read(tx, "a", 0)
			return err
		})
		if err != nil || len(got) != 3 {
			t.Fatalf("ExecWithNext, then a read: %v (%v), want the 3 rows renamed back", got, err)
		}

		if db.Dialect().Name().String() != "pg" {
			return
		}
		// A statement that fails once prepared: the next transactions
		// run it.
		var r int
		err = inTx(func(tx bun.IDB) error { return probeRatio.Scan(ctx, tx, &r, 0) })
		if err == nil {
			t.Fatal("60 / 0 gave no error")
		}
		for _, d := range []int{2, 3} {
			if err := inTx(func(tx bun.IDB) error { return probeRatio.Scan(ctx, tx, &r, d) }); err != nil || r != 60/d {
				t.Fatalf("60 / %d = %d (%v)", d, r, err)
			}
		}

		var names []string
		if err := db.NewRaw("SELECT name FROM pg_prepared_statements ORDER BY name").Scan(ctx, &names); err != nil {
			t.Fatal(err)
		}
		// The read and the rename outside a transaction are prepared; a
		// read in a transaction after its BEGIN may run as its function's
		// call instead, once the function exists (see Tx).
		if (len(names) < 2 || len(names) > 3) && os.Getenv(dbtest.EnvPgBouncer) == "" { // PgBouncer 1.18's are unnamed
			t.Errorf("the connection's prepared statements: %v, want one of each query run prepared", names)
		}
	})
}
