package database

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"
)

// Prepared is a query that runs on PostgreSQL with parameters, as a
// statement that pgx prepares once per connection and then only binds
// and executes. PostgreSQL parses, analyses and plans a query sent as
// text each time it runs, which for a query that joins a few tables costs
// more than running it: the statement of an order's check took 0.95 ms
// of the server's CPU as text and 0.28 ms prepared.
//
// How pgx runs it is the DSN's default_query_exec_mode: cache_statement
// (pgx's default) prepares it on each connection, by a name of its own
// (see [pgConn.named]), alone or in a batch;
// cache_describe sends it unnamed, with the description pgx cached, for
// a transaction pooler that does not carry prepared statements from one
// server connection to the next (PgBouncer before 1.21, or later without
// max_prepared_statements), and then it runs as the call of a PL/pgSQL
// function made for it, which keeps its plan (see functions.go). A pool
// that turns out to be such a pooler switches to cache_describe by
// itself; see [Open].
//
// A Prepared is made once, as a package variable, by [NewPrepared] from a
// function that builds the query for given parameters. On PostgreSQL that
// function is called once, with the parameters $1, $2, … (as [bun.Safe]
// values), for the statement's text; PostgreSQL infers each parameter's
// type from where it stands, so a parameter must stand where its type is
// plain (compared with a column, say), not alone in the select list.
// Elsewhere (on SQLite, or in a transaction that is not [RunInTx]'s) it
// is called with the parameters themselves, and the query runs as text.
//
// The query must list the columns it returns rather than select *: a
// prepared statement whose result would change with its tables (a
// column added by a migration while an older instance runs) fails.
type Prepared struct {
	name  string
	build func(db bun.IDB, params ...any) schema.QueryAppender

	// asText has the statement run as text, its values written into it
	// as bun writes them, behind a pooler that keeps no prepared
	// statement (cache_describe), rather than as its function's call:
	// for the inserts of whole rows, whose calls, with dozens of values,
	// cost more to send and parse than planning the statement itself.
	asText bool

	once sync.Once
	text string // with $1, $2, …
	read bool   // text is a SELECT (else a write; see functions.go)
	rows bool   // text returns rows: a SELECT, or a write with RETURNING
	err  error
}

// NewPrepared returns the query that build builds, named name in its
// errors.
func NewPrepared(name string, build func(db bun.IDB, params ...any) schema.QueryAppender) *Prepared {
	return &Prepared{name: name, build: build}
}

// Scan runs p's query with params on db and scans its rows into dest,
// as bun's Scan does (a single-row dest and no row is sql.ErrNoRows).
func (p *Prepared) Scan(ctx context.Context, db bun.IDB, dest any, params ...any) error {
	return p.run(db, params, func(q *bun.RawQuery, _ bool) error { return q.Scan(ctx, dest) })
}

// Exec runs p's query with params on db, and returns its result.
func (p *Prepared) Exec(ctx context.Context, db bun.IDB, params ...any) (sql.Result, error) {
	var res sql.Result
	err := p.run(db, params, func(q *bun.RawQuery, counted bool) (err error) {
		if !counted {
			res, err = q.Exec(ctx)
			return err
		}
		var n int64
		err = q.Scan(ctx, &n)
		res = driver.RowsAffected(n)
		return err
	})
	return res, err
}

// run runs fn with p's query with params on db: as the call of its
// function once there is one (see functions.go) behind a pooler that
// keeps no prepared statement, fn's counted true when that call returns
// the number of rows a write changed; in a [Tx] with statements pending,
// a statement that returns rows in one batch with them, as their last.
// Outside a transaction, a statement that a transaction pooler lost (see
// [pgConnector.noteErr]), or whose function failed, runs once more, as
// it is: it never ran. In a transaction the error ends the transaction.
func (p *Prepared) run(db bun.IDB, params []any, fn func(q *bun.RawQuery, counted bool) error) error {
	bdb, pg, conn := p.target(db, len(params))
	if pg == nil || p.textBehind(pg) {
		return fn(db.NewRaw("?", p.build(db, params...)), false)
	}
	if p.err != nil {
		return p.err
	}
	tx, _ := db.(*Tx)
	for try := 0; ; try++ {
		text, viaFunction := pg.text(p)
		if tx != nil {
			// A statement that returns rows goes with what is
			// pending, as the batch's last statement: a function's
			// call, or the statement itself, prepared by name on the
			// connection (see pgConn.named). One that returns none
			// goes with it as the batch's last.
			conn = txDriver{tx: tx, batch: p.rows || viaFunction}
		}
		args := append([]any{pg.execMode()}, params...)
		err := fn(bdb.NewRaw("?", bun.Safe(text)).Conn(withArgs{conn, args}), viaFunction && !p.rows)
		switch {
		case viaFunction && isFunctionErr(err):
			pg.forget(p, err)
		case !pg.noteErr(err):
			return err
		}
		if InTx(db) || try > 0 {
			return err
		}
	}
}

// textBehind reports whether p runs as text with its values on c's pool:
// a statement made so (asText) behind a pooler without prepared
// statements.
func (p *Prepared) textBehind(c *pgConnector) bool {
	return p.asText && c.execMode() == pgx.QueryExecModeCacheDescribe
}

// text returns the text that runs p on c's pool: its function's call,
// and true, behind a pooler that keeps no prepared statement once the
// function exists; else p's own.
func (c *pgConnector) text(p *Prepared) (string, bool) {
	if c.execMode() == pgx.QueryExecModeCacheDescribe {
		if call := c.call(p); call != "" {
			return call, true
		}
	}
	return p.text, false
}

// ExecWithNext runs p's query with params as [ExecWithNext] runs a
// statement: in a [Tx], with the transaction's next statement.
func (p *Prepared) ExecWithNext(ctx context.Context, db bun.IDB, params ...any) error {
	if tx, ok := db.(*Tx); ok {
		if p.once.Do(func() { p.prepare(tx.db, len(params)) }); p.err != nil {
			return p.err
		}
		if p.textBehind(tx.pg) {
			return ExecWithNext(ctx, tx, tx.NewRaw("?", p.build(tx, params...)))
		}
		text, _ := tx.pg.text(p)
		tx.queue(text, params...)
		return nil
	}
	_, err := p.Exec(ctx, db, params...)
	return err
}

// With returns p's statement with params, bound to db: a [Statement]
// that [ExecWithNext] queues as p's (prepared, see
// [Prepared.ExecWithNext]) and that Exec runs as [Prepared.Exec] does.
// It is for the functions that return a statement for a transaction to
// send with its next one.
func (p *Prepared) With(db bun.IDB, params ...any) Statement {
	return bound{p: p, db: db, params: params}
}

// bound is a [Prepared] with its parameters, as a [Statement].
type bound struct {
	p      *Prepared
	db     bun.IDB
	params []any
}

// Exec implements [Statement].
func (b bound) Exec(ctx context.Context, _ ...any) (sql.Result, error) {
	return b.p.Exec(ctx, b.db, b.params...)
}

// String implements [Statement]: the statement's name.
func (b bound) String() string { return b.p.name }

// target returns what runs p's statement on db, with its text made for n
// parameters: the database, its PostgreSQL connector and the connection
// that takes the driver's parameters; a nil connector when the query
// runs as text instead.
func (p *Prepared) target(db bun.IDB, n int) (*bun.DB, *pgConnector, driverConn) {
	var bdb *bun.DB
	var conn driverConn
	switch d := db.(type) {
	case *Tx:
		bdb, conn = d.db, txDriver{tx: d}
	case *bun.DB:
		bdb, conn = d, d.DB
	default:
		return nil, nil, nil
	}
	pg := pgOf(bdb)
	if pg != nil {
		p.once.Do(func() { p.prepare(bdb, n) })
	}
	return bdb, pg, conn
}

// prepare builds p's text with n parameters on db.
func (p *Prepared) prepare(db *bun.DB, n int) {
	params := make([]any, n)
	for i := range params {
		params[i] = bun.Safe(fmt.Sprintf("$%d", i+1))
	}
	b, err := p.build(db, params...).AppendQuery(db.Formatter(), nil)
	if err != nil {
		p.err = fmt.Errorf("database: prepare %s: %w", p.name, err)
		return
	}
	p.text = string(b)
	t := strings.TrimSpace(p.text)
	p.read = len(t) >= 6 && strings.EqualFold(t[:6], "SELECT")
	p.rows = p.read || strings.Contains(strings.ToUpper(t), " RETURNING ")
}

// driverConn is what runs a statement with the driver's parameters: a
// *sql.DB, or a [Tx] as txDriver.
type driverConn interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// txDriver runs a [Tx]'s statements with the driver's parameters: a read
// in one batch with the pending statements when batch is true, else after
// them.
type txDriver struct {
	tx    *Tx
	batch bool
}

// QueryContext implements driverConn.
func (t txDriver) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return t.tx.queryDriver(ctx, t.batch, query, args...)
}

// ExecContext implements driverConn.
func (t txDriver) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return t.tx.execDriver(ctx, query, args...)
}

// QueryRowContext implements driverConn.
func (t txDriver) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if t.batch {
		return t.tx.conn.Conn.QueryRowContext(t.tx.readCtx(ctx), query, args...)
	}
	_ = t.tx.flush(ctx) // a failure is the transaction's, the row's too
	return t.tx.conn.Conn.QueryRowContext(ctx, query, args...)
}

// withArgs is the [bun.IConn] of a bun query whose text takes the
// driver's parameters args: bun scans its rows, with its hooks, and conn
// runs it.
type withArgs struct {
	conn driverConn
	args []any
}

// QueryContext implements [bun.IConn].
func (w withArgs) QueryContext(ctx context.Context, query string, _ ...any) (*sql.Rows, error) {
	return w.conn.QueryContext(ctx, query, w.args...)
}

// ExecContext implements [bun.IConn].
func (w withArgs) ExecContext(ctx context.Context, query string, _ ...any) (sql.Result, error) {
	return w.conn.ExecContext(ctx, query, w.args...)
}

// QueryRowContext implements [bun.IConn].
func (w withArgs) QueryRowContext(ctx context.Context, query string, _ ...any) *sql.Row {
	return w.conn.QueryRowContext(ctx, query, w.args...)
}
