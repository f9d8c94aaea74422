package database

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"
)

// RunInTx runs fn in a transaction on db, committed when fn returns nil
// and rolled back otherwise, as [bun.DB.RunInTx] does, and returns fn's
// error or the commit's.
//
// On PostgreSQL it saves round trips, which are what a short transaction
// on a hot path waits for most: BEGIN, and the statements whose results
// nobody reads ([LockUser]'s lock, and those of [ExecWithNext]), wait for
// the transaction's next statement, or its COMMIT, and go with it in one
// pgx batch: one message to the server, one round trip. A read comes
// back as the batch's last result (see [pgConn]); a [Prepared] statement
// in a batch runs as the statement prepared on the connection (see
// [pgConn.named]). The statements of a batch run one after the other,
// and in READ COMMITTED each reads the database as it is when it
// starts. A transaction that runs no statement sends nothing at all. fn
// must run its statements through tx (the queries tx.NewSelect() and the
// others build, or tx's ExecContext, QueryContext and QueryRowContext),
// one at a time, and must not begin a nested transaction.
//
// On SQLite, or when db is not a *bun.DB (a transaction already, say), tx
// is a [bun.Tx] of db.RunInTx (see [Open] for how SQLite transactions
// begin), and every statement runs when it is called.
func RunInTx(ctx context.Context, db bun.IDB, fn func(ctx context.Context, tx bun.IDB) error) error {
	bdb, ok := db.(*bun.DB)
	var pg *pgConnector
	if ok {
		pg = pgOf(bdb)
	}
	if pg == nil {
		return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error { return fn(ctx, tx) })
	}
	conn, err := bdb.Conn(ctx)
	if err != nil {
		return err
	}
	tx := &Tx{db: bdb, pg: pg, conn: conn}
	defer tx.close()
	if err := fn(ctx, tx); err != nil {
		if tx.sendErr != nil {
			// What fn saw next (an aborted transaction) follows from it.
			err = tx.sendErr
		}
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
	if b, ok := q.(bound); ok {
		return b.p.ExecWithNext(ctx, tx, b.params...)
	}
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
	pg   *pgConnector
	conn bun.Conn
	// pending are the statements that go with the next one (after BEGIN,
	// until it is sent).
	pending []*pgx.QueuedQuery
	// begun reports whether BEGIN was sent, ended whether COMMIT or
	// ROLLBACK was then; broken, whether the connection may be left
	// inside the transaction, so that it must not go back to the pool.
	begun, ended, broken bool
	// sendErr is the error of the first batch that failed.
	sendErr error
}

var _ bun.IDB = (*Tx)(nil)

// queue has the statement query, with the parameters args ($1, $2, …),
// sent with the next one.
func (tx *Tx) queue(query string, args ...any) {
	tx.pending = append(tx.pending, &pgx.QueuedQuery{SQL: query, Arguments: args})
}

// send runs, in one batch, BEGIN when the transaction has not begun, the
// pending statements, and last when it is not nil, and returns last's
// command tag.
func (tx *Tx) send(ctx context.Context, last *pgx.QueuedQuery) (pgconn.CommandTag, error) {
	var qs []*pgx.QueuedQuery
	began := !tx.begun
	if began {
		qs = append(qs, &pgx.QueuedQuery{SQL: "BEGIN"})
		tx.begun = true
	}
	qs = append(qs, tx.pending...)
	tx.pending = tx.pending[:0]
	if last != nil {
		qs = append(qs, last)
	}
	var tag pgconn.CommandTag
	err := tx.conn.Raw(func(dc any) error {
		pc := dc.(*pgConn)
		run := func() error {
			qs, err := pc.named(ctx, qs)
			if err != nil {
				return err
			}
			br := pc.Conn.Conn().SendBatch(ctx, &pgx.Batch{QueuedQueries: qs})
			for range qs {
				if tag, err = br.Exec(); err != nil {
					br.Close()
					return err
				}
			}
			return br.Close()
		}
		err := run()
		if err != nil && began && pc.lost(ctx, err) {
			err = run()
		}
		return err
	})
	tx.pg.forgetAfter(qs, err)
	if err != nil && tx.sendErr == nil {
		tx.sendErr = err
	}
	return tag, err
}

// flush sends the pending statements, and BEGIN, unless there is nothing
// to send.
func (tx *Tx) flush(ctx context.Context) error {
	if tx.begun && len(tx.pending) == 0 {
		return nil
	}
	_, err := tx.send(ctx, nil)
	return err
}

// commit commits the transaction, with its pending statements, or rolls
// it back when they fail.
func (tx *Tx) commit(ctx context.Context) error {
	if !tx.begun && len(tx.pending) == 0 {
		return nil
	}
	if _, err := tx.send(ctx, &pgx.QueuedQuery{SQL: "COMMIT"}); err != nil {
		// A failed statement skips the rest of its batch, COMMIT
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

// format returns query with bun's args formatted into it.
func (tx *Tx) format(query string, args []any) string {
	if len(args) == 0 {
		return query
	}
	return tx.db.Formatter().FormatQuery(query, args...)
}

// ExecContext implements [bun.IConn] for bun's queries, which run the
// database's query hooks themselves: it runs none. The pending
// statements go in one batch with it.
func (tx *Tx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return tx.execDriver(ctx, tx.format(query, args))
}

// QueryContext implements [bun.IConn] as ExecContext does: the pending
// statements go in one batch with it, and its rows are the batch's last
// result. When one of them fails, that is the query's error.
func (tx *Tx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return tx.conn.Conn.QueryContext(tx.readCtx(ctx), tx.format(query, args))
}

// QueryRowContext implements [bun.IConn] as QueryContext does. A row
// holds its error.
func (tx *Tx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return tx.conn.Conn.QueryRowContext(tx.readCtx(ctx), tx.format(query, args))
}

// readCtx returns the context of a read that runs now, as the last
// statement of a batch after BEGIN, when the transaction has not begun,
// and the pending statements, which it takes (see [pgConn]).
func (tx *Tx) readCtx(ctx context.Context) context.Context {
	if tx.begun && len(tx.pending) == 0 {
		return ctx
	}
	before := make([]*pgx.QueuedQuery, 0, len(tx.pending)+1)
	if !tx.begun {
		before = append(before, &pgx.QueuedQuery{SQL: "BEGIN"})
		tx.begun = true
	}
	before = append(before, tx.pending...)
	tx.pending = tx.pending[:0]
	return withBefore(ctx, before)
}

// pendingBefore reports whether a read that runs now would go after
// statements not yet sent (BEGIN among them).
func (tx *Tx) pendingBefore() bool { return !tx.begun || len(tx.pending) > 0 }

// execDriver runs query with the driver's parameters args (not bun's):
// alone when nothing is pending, else with the pending statements.
func (tx *Tx) execDriver(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if tx.begun && len(tx.pending) == 0 {
		return tx.conn.Conn.ExecContext(ctx, query, args...)
	}
	tag, err := tx.send(ctx, &pgx.QueuedQuery{SQL: query, Arguments: withoutMode(args)})
	if err != nil {
		return nil, err
	}
	return driver.RowsAffected(tag.RowsAffected()), nil
}

// queryDriver runs query with the driver's parameters args: with the
// pending statements, as the last of their batch, when batch is true,
// else once they have run (for a statement that runs prepared, in
// another mode than the batch's).
func (tx *Tx) queryDriver(ctx context.Context, batch bool, query string, args ...any) (*sql.Rows, error) {
	if batch {
		return tx.conn.Conn.QueryContext(tx.readCtx(ctx), query, args...)
	}
	if err := tx.flush(ctx); err != nil {
		return nil, err
	}
	return tx.conn.Conn.QueryContext(ctx, query, args...)
}

// withoutMode returns args without a leading pgx.QueryExecMode: a batch
// runs in the connection's mode.
func withoutMode(args []any) []any {
	if len(args) > 0 {
		if _, ok := args[0].(pgx.QueryExecMode); ok {
			return args[1:]
		}
	}
	return args
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
