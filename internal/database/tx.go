package database

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
	"github.com/uptrace/bun/schema"
)

// RunInTx runs fn in a transaction on db, committed when fn returns nil
// and rolled back otherwise, as [bun.DB.RunInTx] does, and returns fn's
// error or the commit's.
//
// On PostgreSQL it saves round trips, which are what a short transaction
// on a hot path waits for most: pgdriver sends every statement as a
// simple query, which may hold several statements, run one after the
// other (a BEGIN among them opens a transaction block that outlasts the
// message; in READ COMMITTED each statement reads the database as it is
// when that statement starts). So BEGIN is sent with the transaction's
// first statement, and the statements whose results nobody reads
// ([LockUser]'s lock, and those of [ExecWithNext]) wait for the next
// statement, or for COMMIT. A transaction that runs no statement sends
// nothing at all. fn must run its statements through tx (the queries
// tx.NewSelect() and the others build, or tx's ExecContext, QueryContext
// and QueryRowContext), one at a time, and must not begin a nested
// transaction.
//
// On SQLite, or when db is not a *bun.DB (a transaction already, say), tx
// is a [bun.Tx] of db.RunInTx (see [Open] for how SQLite transactions
// begin), and every statement runs when it is called.
func RunInTx(ctx context.Context, db bun.IDB, fn func(ctx context.Context, tx bun.IDB) error) error {
	bdb, ok := db.(*bun.DB)
	if !ok || db.Dialect().Name() != dialect.PG {
		return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error { return fn(ctx, tx) })
	}
	conn, err := bdb.Conn(ctx)
	if err != nil {
		return err
	}
	tx := &Tx{db: bdb, conn: conn}
	defer tx.close()
	if err := fn(ctx, tx); err != nil {
		tx.rollback(ctx)
		return err
	}
	return tx.commit(ctx)
}

// ExecWithNext runs q, a statement that returns no rows, in the
// transaction tx: on PostgreSQL in a [Tx] it is sent with the
// transaction's next statement, or with its COMMIT, which saves its round
// trip; it runs before that statement (a lock it takes is held for it),
// and its error is the transaction's. Elsewhere it runs now. It is for
// the writes whose results the transaction does not read: the last ones,
// and an update that takes a row's lock before the read that follows it.
func ExecWithNext(ctx context.Context, tx bun.IDB, q Statement) error {
	if t, ok := tx.(*Tx); ok {
		t.queue(q.String())
		return nil
	}
	_, err := q.Exec(ctx)
	return err
}

// InTx reports whether db is a transaction: a [bun.Tx], or a [Tx] of
// [RunInTx].
func InTx(db bun.IDB) bool {
	switch db.(type) {
	case bun.Tx, *Tx:
		return true
	}
	return false
}

// Statement is a bun query that [ExecWithNext] runs: an insert, update,
// delete or raw query that returns no rows.
type Statement interface {
	Exec(ctx context.Context, dest ...any) (sql.Result, error)
	String() string
}

// Tx is a PostgreSQL transaction of [RunInTx]. It implements [bun.IDB].
type Tx struct {
	db   *bun.DB
	conn bun.Conn
	// pending are the statements that go with the next one (after BEGIN,
	// until it is sent).
	pending []string
	// begun reports whether BEGIN was sent, ended whether COMMIT or
	// ROLLBACK was then; broken, whether the connection may be left
	// inside the transaction, so that it must not go back to the pool.
	begun, ended, broken bool
	// statements is the state of the connection's prepared statements
	// (see [Prepared]), once looked up; preparing, the ids of those whose
	// PREPARE is among the pending statements.
	statements map[string]bool
	preparing  []string
}

var _ bun.IDB = (*Tx)(nil)

// queue has statement sent with the next one.
func (tx *Tx) queue(statement string) {
	tx.pending = append(tx.pending, statement)
}

// with returns query formatted with args, preceded by the pending
// statements (and BEGIN, for the transaction's first), and clears them.
// It also returns the ids of the statements those prepare, whose outcome
// the caller reports to [Tx.sent].
func (tx *Tx) with(query string, args []any) (string, []string) {
	if len(args) > 0 {
		query = tx.db.Formatter().FormatQuery(query, args...)
	}
	if tx.begun && len(tx.pending) == 0 {
		return query, nil
	}
	var b strings.Builder
	if !tx.begun {
		b.WriteString("BEGIN; ")
		tx.begun = true
	}
	for _, p := range tx.pending {
		b.WriteString(p)
		b.WriteString("; ")
	}
	tx.pending = tx.pending[:0]
	b.WriteString(query)
	ids := tx.preparing
	tx.preparing = nil
	return b.String(), ids
}

// commit commits the transaction, with its pending statements, or rolls
// it back when they fail.
func (tx *Tx) commit(ctx context.Context) error {
	if !tx.begun && len(tx.pending) == 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, "COMMIT"); err != nil {
		// A failed statement skips the rest of its message, COMMIT
		// included, and leaves the transaction aborted.
		tx.rollback(ctx)
		return fmt.Errorf("database: commit: %w", err)
	}
	tx.ended = true
	return nil
}

// rollback rolls the transaction back if it began, even when ctx is
// done: the connection must not go back to the pool inside a
// transaction.
func (tx *Tx) rollback(ctx context.Context) {
	if !tx.begun {
		return
	}
	if _, err := tx.conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK"); err != nil {
		tx.broken = true
	}
	tx.ended = true
}

// close returns the connection to the pool, or discards it when the
// transaction may still be open on it (after a failed ROLLBACK, or when
// fn panicked).
func (tx *Tx) close() {
	if tx.broken || tx.begun && !tx.ended {
		_ = tx.conn.Raw(func(any) error { return driver.ErrBadConn })
	}
	_ = tx.conn.Close()
}

// ExecContext implements [bun.IConn] for bun's queries, which run the
// database's query hooks themselves: it runs none.
func (tx *Tx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	q, ids := tx.with(query, args)
	res, err := tx.conn.Conn.ExecContext(ctx, q)
	tx.sent(ids, err)
	return res, err
}

// QueryContext implements [bun.IConn] as ExecContext does. (pgdriver
// returns the rows once the statements before the query have run, or
// the first error among them.)
func (tx *Tx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	q, ids := tx.with(query, args)
	rows, err := tx.conn.Conn.QueryContext(ctx, q)
	tx.sent(ids, err)
	return rows, err
}

// QueryRowContext implements [bun.IConn] as ExecContext does. Its row
// holds its error, so the statements it prepares are uncertain.
func (tx *Tx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	q, ids := tx.with(query, args)
	tx.sent(ids, errUnreported)
	return tx.conn.Conn.QueryRowContext(ctx, q)
}

// errUnreported stands for an outcome a statement does not report.
var errUnreported = errors.New("database: the outcome is not reported")

// Dialect implements [bun.IDB].
func (tx *Tx) Dialect() schema.Dialect { return tx.db.Dialect() }

// NewValues implements [bun.IDB].
func (tx *Tx) NewValues(model any) *bun.ValuesQuery { return bun.NewValuesQuery(tx.db, model).Conn(tx) }

// NewSelect implements [bun.IDB].
func (tx *Tx) NewSelect() *bun.SelectQuery { return bun.NewSelectQuery(tx.db).Conn(tx) }

// NewInsert implements [bun.IDB].
func (tx *Tx) NewInsert() *bun.InsertQuery { return bun.NewInsertQuery(tx.db).Conn(tx) }

// NewUpdate implements [bun.IDB].
func (tx *Tx) NewUpdate() *bun.UpdateQuery { return bun.NewUpdateQuery(tx.db).Conn(tx) }

// NewDelete implements [bun.IDB].
func (tx *Tx) NewDelete() *bun.DeleteQuery { return bun.NewDeleteQuery(tx.db).Conn(tx) }

// NewMerge implements [bun.IDB].
func (tx *Tx) NewMerge() *bun.MergeQuery { return bun.NewMergeQuery(tx.db).Conn(tx) }

// NewRaw implements [bun.IDB].
func (tx *Tx) NewRaw(query string, args ...any) *bun.RawQuery {
	return bun.NewRawQuery(tx.db, query, args...).Conn(tx)
}

// NewCreateTable implements [bun.IDB].
func (tx *Tx) NewCreateTable() *bun.CreateTableQuery { return bun.NewCreateTableQuery(tx.db).Conn(tx) }

// NewDropTable implements [bun.IDB].
func (tx *Tx) NewDropTable() *bun.DropTableQuery { return bun.NewDropTableQuery(tx.db).Conn(tx) }

// NewCreateIndex implements [bun.IDB].
func (tx *Tx) NewCreateIndex() *bun.CreateIndexQuery { return bun.NewCreateIndexQuery(tx.db).Conn(tx) }

// NewDropIndex implements [bun.IDB].
func (tx *Tx) NewDropIndex() *bun.DropIndexQuery { return bun.NewDropIndexQuery(tx.db).Conn(tx) }

// NewTruncateTable implements [bun.IDB].
func (tx *Tx) NewTruncateTable() *bun.TruncateTableQuery {
	return bun.NewTruncateTableQuery(tx.db).Conn(tx)
}

// NewAddColumn implements [bun.IDB].
func (tx *Tx) NewAddColumn() *bun.AddColumnQuery { return bun.NewAddColumnQuery(tx.db).Conn(tx) }

// NewDropColumn implements [bun.IDB].
func (tx *Tx) NewDropColumn() *bun.DropColumnQuery { return bun.NewDropColumnQuery(tx.db).Conn(tx) }

// errNested refuses a transaction inside a [Tx].
var errNested = errors.New("database: a transaction of RunInTx cannot begin another")

// BeginTx implements [bun.IDB]: it refuses.
func (tx *Tx) BeginTx(context.Context, *sql.TxOptions) (bun.Tx, error) { return bun.Tx{}, errNested }

// RunInTx implements [bun.IDB]: it refuses.
func (tx *Tx) RunInTx(context.Context, *sql.TxOptions, func(context.Context, bun.Tx) error) error {
	return errNested
}
