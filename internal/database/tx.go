package database

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
	"github.com/uptrace/bun/schema"
)

// RunInTx runs fn in a transaction on db, committed when fn returns nil
// and rolled back otherwise, as [bun.DB.RunInTx] does, and returns fn's
// error or the commit's.
//
// On PostgreSQL it saves the round trip of BEGIN, which is what a short
// transaction on a hot path waits for most besides its statements: BEGIN
// is sent in one message with the transaction's first statement.
// pgdriver sends every statement as a simple query, which may hold
// several; a BEGIN in it opens a transaction block that outlasts the
// message. A transaction that runs no statement sends nothing at all. fn
// must run its statements through tx (the queries tx.NewSelect() and the
// others build, or tx's ExecContext, QueryContext and QueryRowContext),
// one at a time, and must not begin a nested transaction.
//
// On SQLite, or when db is not a *bun.DB (a transaction already, say), tx
// is a [bun.Tx] of db.RunInTx (see [Open] for how SQLite transactions
// begin).
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
		tx.end(ctx, "ROLLBACK")
		return err
	}
	return tx.end(ctx, "COMMIT")
}

// Tx is a PostgreSQL transaction of [RunInTx] whose BEGIN travels with
// its first statement. It implements [bun.IDB].
type Tx struct {
	db   *bun.DB
	conn bun.Conn
	// begun reports whether BEGIN was sent; broken, whether the
	// connection may be left inside the transaction, so that it must not
	// go back to the pool.
	begun, broken bool
}

var _ bun.IDB = (*Tx)(nil)

// begin returns query, preceded by BEGIN for the transaction's first
// statement.
func (tx *Tx) begin(query string) string {
	if tx.begun {
		return query
	}
	tx.begun = true
	return "BEGIN; " + query
}

// end commits or rolls back (as verb says) the transaction if it began.
func (tx *Tx) end(ctx context.Context, verb string) error {
	if !tx.begun {
		return nil
	}
	// The rollback runs even when ctx is done: the connection must not
	// go back to the pool inside a transaction.
	if verb == "ROLLBACK" {
		ctx = context.WithoutCancel(ctx)
	}
	if _, err := tx.conn.ExecContext(ctx, verb); err != nil {
		tx.broken = true
		return fmt.Errorf("database: %s: %w", verb, err)
	}
	return nil
}

// close returns the connection to the pool, or discards it when the
// transaction may still be open on it.
func (tx *Tx) close() {
	if tx.broken {
		_ = tx.conn.Raw(func(any) error { return driver.ErrBadConn })
	}
	_ = tx.conn.Close()
}

// ExecContext implements [bun.IConn].
func (tx *Tx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return tx.conn.ExecContext(ctx, tx.begin(query), args...)
}

// QueryContext implements [bun.IConn].
func (tx *Tx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return tx.conn.QueryContext(ctx, tx.begin(query), args...)
}

// QueryRowContext implements [bun.IConn].
func (tx *Tx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return tx.conn.QueryRowContext(ctx, tx.begin(query), args...)
}

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
