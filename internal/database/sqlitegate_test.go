package database_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/tradekit/tradekit/internal/dbtest"
)

// TestSQLiteWriteGate: in one process, SQLite's writers queue at a gate
// (see writeGate) instead of in the driver's sleeping busy handler. A
// writer that finds a write transaction open waits until it ends, or
// until its context does, and reads never wait.
func TestSQLiteWriteGate(t *testing.T) {
	t.Parallel()
	db := dbtest.SQLite(t)
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, "CREATE TABLE counter (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO counter VALUES (1, 0)"); err != nil {
		t.Fatal(err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "UPDATE counter SET n = 1 WHERE id = 1"); err != nil {
		t.Fatal(err)
	}

	// Writers wait while the transaction is open: an Exec, a query with
	// RETURNING and another write transaction.
	short := func() (context.Context, context.CancelFunc) { return context.WithTimeout(ctx, 50*time.Millisecond) }
	c, cancel := short()
	_, err = db.ExecContext(c, "UPDATE counter SET n = 2 WHERE id = 1")
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Exec beside an open write transaction: %v, want it to wait until its deadline", err)
	}
	c, cancel = short()
	err = db.QueryRowContext(c, "UPDATE counter SET n = 2 WHERE id = 1 RETURNING n").Scan(new(int))
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("UPDATE … RETURNING beside an open write transaction: %v, want it to wait until its deadline", err)
	}
	c, cancel = short()
	_, err = db.BeginTx(c, nil)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a second write transaction: %v, want it to wait until its deadline", err)
	}

	// Reads do not wait, nor does a read-only transaction, and they see
	// the last commit. Waiting would last until the deadline, as the
	// write transaction stays open; the deadline is long because a read
	// may open a connection, which on a loaded machine (the race
	// detector, other packages' tests) can take longer than 50 ms.
	c, cancel = context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var n int
	if err := db.QueryRowContext(c, "SELECT n FROM counter WHERE id = 1").Scan(&n); err != nil || n != 0 {
		t.Errorf("a read beside the write transaction: n = %d, %v; want 0", n, err)
	}
	ro, err := db.BeginTx(c, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		t.Fatalf("a read-only transaction beside the write transaction: %v", err)
	}
	if err := ro.QueryRowContext(c, "SELECT n FROM counter WHERE id = 1").Scan(&n); err != nil || n != 0 {
		t.Errorf("a read-only transaction's read: n = %d, %v; want 0", n, err)
	}
	ro.Rollback()

	// A writer waiting when the transaction commits goes in at once.
	done := make(chan error, 1)
	go func() {
		var n int
		done <- db.QueryRowContext(ctx, "UPDATE counter SET n = n + 1 WHERE id = 1 RETURNING n").Scan(&n)
	}()
	time.Sleep(10 * time.Millisecond) // let it queue; it passes either way
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the waiting writer: %v", err)
	}
	if err := db.QueryRowContext(ctx, "SELECT n FROM counter WHERE id = 1").Scan(&n); err != nil || n != 2 {
		t.Errorf("after the commit and the waiting writer: n = %d, %v; want 2", n, err)
	}

	// A rolled-back transaction, and a failed statement, let the gate go.
	tx, err = db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	tx.Rollback()
	if _, err := db.ExecContext(ctx, "UPDATE nosuchtable SET n = 0"); err == nil {
		t.Fatal("an UPDATE of a missing table succeeded")
	}
	if err := db.QueryRowContext(ctx, "UPDATE nosuchtable SET n = 0 RETURNING n").Scan(new(int)); err == nil {
		t.Fatal("an UPDATE … RETURNING of a missing table succeeded")
	}
	c, cancel = short()
	defer cancel()
	if _, err := db.ExecContext(c, "UPDATE counter SET n = 3 WHERE id = 1"); err != nil {
		t.Errorf("a write after a rollback and failed statements: %v", err)
	}
}

// TestSQLiteWriteGateStatements: a transaction begun with a BEGIN
// statement on a connection, as the bulk importer begins its own, holds
// the gate until COMMIT or ROLLBACK, not until ROLLBACK TO a savepoint.
func TestSQLiteWriteGateStatements(t *testing.T) {
	t.Parallel()
	db := dbtest.SQLite(t)
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, "CREATE TABLE counter (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	blocked := func(when string) {
		t.Helper()
		c, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		if _, err := db.ExecContext(c, "INSERT INTO counter VALUES (2, 0)"); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("a write %s: %v, want it to wait until its deadline", when, err)
		}
	}
	for _, end := range []string{"COMMIT", "ROLLBACK", "END TRANSACTION"} {
		for _, stmt := range []string{"BEGIN", "SAVEPOINT s", "INSERT INTO counter VALUES (1, 0)", "ROLLBACK TO SAVEPOINT s"} {
			if _, err := conn.ExecContext(ctx, stmt); err != nil {
				t.Fatalf("%s: %v", stmt, err)
			}
			blocked("after " + stmt)
		}
		if _, err := conn.ExecContext(ctx, end); err != nil {
			t.Fatalf("%s: %v", end, err)
		}
		c, cancel := context.WithTimeout(ctx, time.Second)
		if _, err := db.ExecContext(c, "DELETE FROM counter WHERE id = 2"); err != nil {
			t.Errorf("a write after %s: %v", end, err)
		}
		cancel()
	}
}
