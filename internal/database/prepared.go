package database

import (
	"context"
	"database/sql"
	"fmt"
	"hash/fnv"
	"runtime"
	"slices"
	"strings"
	"sync"
	"weak"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
	"github.com/uptrace/bun/driver/pgdriver"
	"github.com/uptrace/bun/schema"
)

// Prepared is a query that the PostgreSQL transactions of [RunInTx] run
// as a prepared statement. PostgreSQL parses, analyses and plans a query
// sent as text each time it runs, which for a query that joins a few
// tables costs more than running it: the statement of an order's check
// took 0.95 ms of the server's CPU as text and 0.28 ms prepared. Each connection prepares it
// once, with SQL's PREPARE sent in the same message as its first EXECUTE,
// so that it keeps the round trips RunInTx saves (pgdriver prepares with
// a round trip of its own, and runs prepared statements without the
// statements RunInTx sends with them).
//
// A Prepared is made once, as a package variable, by [NewPrepared] from a
// function that builds the query for given parameters. On PostgreSQL that
// function is called once, with the parameters $1, $2, … (as [bun.Safe]
// values), for the text that PREPARE takes; PostgreSQL infers each
// parameter's type from where it stands, so a parameter must stand where
// its type is plain (compared with a column, say), not alone in the
// select list. Elsewhere (on SQLite, or outside such a transaction) it is
// called with the parameters themselves, and the query runs as text.
//
// The query must list the columns it returns rather than select *: a
// prepared statement whose result would change with its tables (a
// column added by a migration while an older instance runs) fails.
type Prepared struct {
	name  string
	build func(db bun.IDB, params ...any) schema.QueryAppender

	once sync.Once
	// id names the statement on the server: name and a hash of text, so
	// that no two texts share one; execute is its EXECUTE, with a ? for
	// each parameter.
	id, text, execute string
	err               error
}

// NewPrepared returns the query that build builds, named name (letters,
// digits and underscores; a prefix of the name the server knows it by).
func NewPrepared(name string, build func(db bun.IDB, params ...any) schema.QueryAppender) *Prepared {
	return &Prepared{name: name, build: build}
}

// Query returns p's query with params, to Scan or Exec on db: in a
// PostgreSQL transaction of [RunInTx], the EXECUTE of the statement
// prepared on the transaction's connection (preceded by its PREPARE when
// the connection has not prepared it yet); elsewhere the query itself.
func (p *Prepared) Query(db bun.IDB, params ...any) *bun.RawQuery {
	tx, ok := db.(*Tx)
	if !ok || tx.prepared() == nil {
		return db.NewRaw("?", p.build(db, params...))
	}
	p.once.Do(func() { p.prepare(tx.db, len(params)) })
	if p.err != nil {
		return tx.NewRaw("").Err(p.err)
	}
	tx.prepare(p.id, p.text)
	return tx.NewRaw(p.execute, params...)
}

// Scan runs p's query with params on db and scans its rows into dest,
// as p.Query(db, params...).Scan(ctx, dest) does, except that on a
// PostgreSQL *bun.DB it too runs the prepared statement: on a connection
// it takes from the pool for the statement, outside any transaction.
func (p *Prepared) Scan(ctx context.Context, db bun.IDB, dest any, params ...any) error {
	return p.run(ctx, db, params, func(q *bun.RawQuery) error { return q.Scan(ctx, dest) })
}

// Exec runs p's query with params on db as Scan does, and returns its
// result.
func (p *Prepared) Exec(ctx context.Context, db bun.IDB, params ...any) (sql.Result, error) {
	var res sql.Result
	err := p.run(ctx, db, params, func(q *bun.RawQuery) (err error) {
		res, err = q.Exec(ctx)
		return err
	})
	return res, err
}

// run runs fn with p's query with params on db, or on a connection of
// db's pool when db is a PostgreSQL *bun.DB.
func (p *Prepared) run(ctx context.Context, db bun.IDB, params []any, fn func(*bun.RawQuery) error) error {
	bdb, ok := db.(*bun.DB)
	if !ok || db.Dialect().Name() != dialect.PG {
		return fn(p.Query(db, params...))
	}
	conn, err := bdb.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	// A Tx that neither begins nor ends: each statement is its own
	// transaction, and the pending PREPARE goes with the statement.
	return fn(p.Query(&Tx{db: bdb, conn: conn, begun: true, ended: true}, params...))
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
	h := fnv.New32a()
	h.Write(b)
	p.id, p.text = fmt.Sprintf("%s_%08x", p.name, h.Sum32()), string(b)
	p.execute = "EXECUTE " + p.id + "(" + strings.TrimSuffix(strings.Repeat("?, ", n), ", ") + ")"
}

// A statement's state on a connection: absent from the connection's map
// when it was never prepared there, prepared when a PREPARE of it
// succeeded, uncertain when one was sent in a message that failed (the
// PREPARE may have run or not, and it outlives its transaction).
const (
	uncertain = false
	prepared  = true
)

// sessions maps each PostgreSQL connection that ran a Prepared (a weak
// pointer to its *pgdriver.Conn, which drops out of the map with the
// connection) to the state of the statements prepared on it. A
// connection serves one goroutine at a time, so its map needs no lock.
var sessions sync.Map // weak.Pointer[pgdriver.Conn] → map[string]bool

// prepared returns the state of the prepared statements of tx's
// connection, nil when it is not pgdriver's (which then runs every query
// as text).
func (tx *Tx) prepared() map[string]bool {
	if tx.statements == nil {
		_ = tx.conn.Raw(func(dc any) error {
			if c, ok := dc.(*pgdriver.Conn); ok {
				tx.statements = session(c)
			}
			return nil
		})
	}
	return tx.statements
}

// session returns c's statements, registering c at its first use.
func session(c *pgdriver.Conn) map[string]bool {
	key := weak.Make(c)
	if m, ok := sessions.Load(key); ok {
		return m.(map[string]bool)
	}
	m := map[string]bool{}
	sessions.Store(key, m)
	runtime.AddCleanup(c, func(key weak.Pointer[pgdriver.Conn]) { sessions.Delete(key) }, key)
	return m
}

// prepare has the statement id prepared as text before tx's next
// statement, unless its connection holds it already.
func (tx *Tx) prepare(id, text string) {
	state, known := tx.statements[id]
	if state == prepared || slices.Contains(tx.preparing, id) {
		return
	}
	if known { // uncertain: drop what may be there
		tx.queue("DO $$BEGIN IF EXISTS (SELECT FROM pg_prepared_statements WHERE name = '" + id +
			"') THEN EXECUTE 'DEALLOCATE " + id + "'; END IF; END$$")
	}
	tx.queue("PREPARE " + id + " AS " + text)
	tx.preparing = append(tx.preparing, id)
}

// sent records the outcome of the message that carried the PREPAREs
// pending: a message that succeeded ran each of them; a failed one may
// have run some.
func (tx *Tx) sent(ids []string, err error) {
	state := prepared
	if err != nil {
		state = uncertain
	}
	for _, id := range ids {
		tx.statements[id] = state
	}
}
