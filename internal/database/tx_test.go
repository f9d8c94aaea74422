package database_test

import (
	"context"
	"encoding/binary"
	"errors"
	"slices"
	"testing"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/internal/database"
	"github.com/tradekit/tradekit/internal/dbtest"
)

// TestRunInTx checks that RunInTx's transactions are transactions: what
// one writes is seen by its own statements, by no other connection until
// it commits, and by none at all when it is rolled back; and that the
// connection goes back to the pool outside any transaction.
func TestRunInTx(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		db.SetMaxOpenConns(2) // the transaction's connection and one other
		if _, err := db.ExecContext(ctx, "CREATE TABLE tx_probe (id INTEGER PRIMARY KEY, v TEXT NOT NULL)"); err != nil {
			t.Fatal(err)
		}
		count := func(db bun.IDB) int {
			t.Helper()
			n, err := db.NewSelect().Table("tx_probe").Count(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		err := database.RunInTx(ctx, db, func(ctx context.Context, tx bun.IDB) error {
			if err := database.LockUser(ctx, tx, uuid.New()); err != nil {
				return err
			}
			if _, err := tx.NewRaw("INSERT INTO tx_probe (id, v) VALUES (1, 'a'), (2, 'b')").Exec(ctx); err != nil {
				return err
			}
			if n := count(tx); n != 2 {
				t.Errorf("inside the transaction: %d rows, want its 2", n)
			}
			if db.Dialect().Name().String() == "pg" {
				// SQLite holds the database for the writer; readers see
				// the last commit, which the next check covers on
				// PostgreSQL.
				if n := count(db); n != 0 {
					t.Errorf("outside the transaction before its commit: %d rows, want 0", n)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if n := count(db); n != 2 {
			t.Fatalf("after the commit: %d rows, want 2", n)
		}

		failed := errors.New("failed")
		err = database.RunInTx(ctx, db, func(ctx context.Context, tx bun.IDB) error {
			if _, err := tx.NewRaw("DELETE FROM tx_probe").Exec(ctx); err != nil {
				return err
			}
			return failed
		})
		if !errors.Is(err, failed) {
			t.Fatalf("RunInTx = %v, want fn's error", err)
		}
		// A failed statement aborts the transaction; it is rolled back.
		err = database.RunInTx(ctx, db, func(ctx context.Context, tx bun.IDB) error {
			if _, err := tx.NewRaw("DELETE FROM tx_probe WHERE id = 1").Exec(ctx); err != nil {
				return err
			}
			_, err := tx.NewRaw("INSERT INTO tx_probe (id, v) VALUES (2, 'again')").Exec(ctx)
			return err
		})
		if !database.IsUniqueViolation(err) {
			t.Fatalf("RunInTx = %v, want the unique violation", err)
		}
		// Nothing to roll back, nothing sent.
		if err := database.RunInTx(ctx, db, func(context.Context, bun.IDB) error { return nil }); err != nil {
			t.Fatal(err)
		}
		// Every connection is back in the pool outside a transaction:
		// each sees the two rows, and can write.
		var conns []bun.Conn
		for i := 0; i < 2; i++ {
			conn, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			conns = append(conns, conn)
			if n := count(conn); n != 2 {
				t.Errorf("connection %d after the rollbacks: %d rows, want 2", i, n)
			}
			if _, err := conn.ExecContext(ctx, "UPDATE tx_probe SET v = v"); err != nil {
				t.Errorf("connection %d after the rollbacks: %v", i, err)
			}
		}
		for _, c := range conns {
			c.Close()
		}

		// ExecWithNext's statement is written with the commit; when it
		// fails, nothing of the transaction is.
		err = database.RunInTx(ctx, db, func(ctx context.Context, tx bun.IDB) error {
			if _, err := tx.NewRaw("DELETE FROM tx_probe WHERE id = 1").Exec(ctx); err != nil {
				return err
			}
			return database.ExecWithNext(ctx, tx, tx.NewRaw("INSERT INTO tx_probe (id, v) VALUES (3, 'c')"))
		})
		if err != nil {
			t.Fatal(err)
		}
		if n := count(db); n != 2 {
			t.Fatalf("after ExecWithNext: %d rows, want 2", n)
		}
		err = database.RunInTx(ctx, db, func(ctx context.Context, tx bun.IDB) error {
			if _, err := tx.NewRaw("DELETE FROM tx_probe WHERE id = 2").Exec(ctx); err != nil {
				return err
			}
			return database.ExecWithNext(ctx, tx, tx.NewRaw("INSERT INTO tx_probe (id, v) VALUES (3, 'again')"))
		})
		if !database.IsUniqueViolation(err) {
			t.Fatalf("RunInTx with a failing ExecWithNext = %v, want the unique violation", err)
		}
		var ids []int
		if err := db.NewSelect().Table("tx_probe").Column("id").Order("id").Scan(ctx, &ids); err != nil || !slices.Equal(ids, []int{2, 3}) {
			t.Fatalf("after the failed commit: ids %v (%v), want [2 3]", ids, err)
		}
		if db.Dialect().Name().String() != "pg" {
			return
		}

		// LockUser's lock waits for the next statement, and is held from
		// then on.
		alice := uuid.New()
		err = database.RunInTx(ctx, db, func(ctx context.Context, tx bun.IDB) error {
			if err := database.LockUser(ctx, tx, alice); err != nil {
				return err
			}
			if _, err := tx.NewRaw("SELECT 1").Exec(ctx); err != nil {
				return err
			}
			var got bool
			key := int64(binary.BigEndian.Uint64(alice[:8]))
			if err := db.NewRaw("SELECT pg_try_advisory_xact_lock(?)", key).Scan(ctx, &got); err != nil {
				return err
			}
			if got {
				t.Error("another connection took alice's lock while the transaction held it")
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		err = database.RunInTx(ctx, db, func(ctx context.Context, tx bun.IDB) error {
			return tx.RunInTx(ctx, nil, func(context.Context, bun.Tx) error { return nil })
		})
		if err == nil {
			t.Error("a nested transaction was begun")
		}

		// A panic inside leaves no connection in the pool inside the
		// transaction: what it wrote is gone.
		func() {
			defer func() { _ = recover() }()
			_ = database.RunInTx(ctx, db, func(ctx context.Context, tx bun.IDB) error {
				if _, err := tx.NewRaw("DELETE FROM tx_probe").Exec(ctx); err != nil {
					return err
				}
				panic("inside the transaction")
			})
		}()
		for i := 0; i < 2; i++ {
			if n := count(db); n != 2 {
				t.Errorf("read %d after a panic inside a transaction: %d rows, want 2", i, n)
			}
		}
	})
}
