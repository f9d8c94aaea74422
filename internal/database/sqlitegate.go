package database

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// SQLite lets one writer at a time hold a database file. A writer that
// finds it held waits in SQLite's busy handler, which sleeps 1, 2, 5,
// 10 ms and so on between tries: two write transactions that overlap by
// a few microseconds cost the second one a millisecond or more. Within
// the process, writers queue at a writeGate instead, and the next one
// starts the moment the one before commits; the busy handler still
// covers other processes (the CLI's imports, say) and statements the
// gate does not see (prepared statements run outside a transaction).
//
// The gate is taken by a transaction that may write (every one but a
// read-only one: with _txlock=immediate each BEGINs IMMEDIATE, taking
// the file's write lock at once) until it commits or rolls back, and by a
// statement outside a transaction that writes, for its run: Exec of
// anything but SELECT or PRAGMA, and a query that starts with INSERT,
// UPDATE, DELETE or REPLACE (RETURNING rows), until its rows close. A
// writer waits for the gate as long as SQLite's busy timeout, or until
// its context ends.
type writeGate struct {
	ch chan struct{} // holds a token while a writer is in
}

// gates holds a gate per database file path: every *sql.DB the process
// opens on one file shares it.
var gates sync.Map // string → *writeGate

// gateOf returns the gate of the database file at path.
func gateOf(path string) *writeGate {
	g, _ := gates.LoadOrStore(path, &writeGate{ch: make(chan struct{}, 1)})
	return g.(*writeGate)
}

// errGateTimeout reports a writer that waited busyTimeout for the gate.
var errGateTimeout = fmt.Errorf("database: another writer held the SQLite database for %s (SQLITE_BUSY)", busyTimeout)

// enter waits for the gate, up to busyTimeout or until ctx ends.
func (g *writeGate) enter(ctx context.Context) error {
	select {
	case g.ch <- struct{}{}:
		return nil
	default:
	}
	t := time.NewTimer(busyTimeout)
	defer t.Stop()
	select {
	case g.ch <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return errGateTimeout
	}
}

// leave lets the next writer in.
func (g *writeGate) leave() { <-g.ch }

// gatedConnector opens connections of drv to dsn whose writers pass gate.
type gatedConnector struct {
	drv  driver.Driver
	dsn  string
	gate *writeGate
}

// Connect implements [driver.Connector].
func (c *gatedConnector) Connect(context.Context) (driver.Conn, error) {
	dc, err := c.drv.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	return &gatedConn{Conn: dc, gate: c.gate}, nil
}

// Driver implements [driver.Connector].
func (c *gatedConnector) Driver() driver.Driver { return c.drv }

// gatedConn is a driver connection whose writers pass its gate. database/sql
// uses a connection from one goroutine at a time, so held needs no lock.
type gatedConn struct {
	driver.Conn
	gate   *writeGate
	held   bool // this connection's transaction holds the gate
	manual bool // …a transaction begun by a BEGIN statement
}

// The interfaces database/sql looks for, each passed on to the driver's
// connection.
var (
	_ driver.ConnBeginTx        = (*gatedConn)(nil)
	_ driver.ConnPrepareContext = (*gatedConn)(nil)
	_ driver.ExecerContext      = (*gatedConn)(nil)
	_ driver.QueryerContext     = (*gatedConn)(nil)
	_ driver.Pinger             = (*gatedConn)(nil)
	_ driver.SessionResetter    = (*gatedConn)(nil)
	_ driver.Validator          = (*gatedConn)(nil)
)

// Begin implements [driver.Conn].
func (c *gatedConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

// BeginTx implements [driver.ConnBeginTx]: a transaction that may write
// holds the gate until it ends.
func (c *gatedConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	bt, ok := c.Conn.(driver.ConnBeginTx)
	if !ok {
		return nil, errors.New("database: the SQLite driver cannot begin a transaction with a context")
	}
	if opts.ReadOnly || c.held {
		return bt.BeginTx(ctx, opts)
	}
	if err := c.gate.enter(ctx); err != nil {
		return nil, err
	}
	tx, err := bt.BeginTx(ctx, opts)
	if err != nil {
		c.gate.leave()
		return nil, err
	}
	c.held = true
	return &gatedTx{Tx: tx, conn: c}, nil
}

// PrepareContext implements [driver.ConnPrepareContext].
func (c *gatedConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if pc, ok := c.Conn.(driver.ConnPrepareContext); ok {
		return pc.PrepareContext(ctx, query)
	}
	return c.Conn.Prepare(query)
}

// ExecContext implements [driver.ExecerContext]: outside a transaction,
// a statement other than SELECT or PRAGMA passes the gate. A transaction
// begun and ended by statements (BEGIN, then COMMIT, END or ROLLBACK, as
// the bulk importer does on a connection of its own) holds the gate as
// one begun by BeginTx does.
func (c *gatedConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	ec, ok := c.Conn.(driver.ExecerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	switch {
	case c.held:
		res, err := ec.ExecContext(ctx, query, args)
		if c.manual && endsTx(query, err) {
			c.held, c.manual = false, false
			c.gate.leave()
		}
		return res, err
	case startsWith(query, "SELECT", "PRAGMA"):
		return ec.ExecContext(ctx, query, args)
	}
	if err := c.gate.enter(ctx); err != nil {
		return nil, err
	}
	res, err := ec.ExecContext(ctx, query, args)
	if err == nil && startsWith(query, "BEGIN") {
		c.held, c.manual = true, true
		return res, nil
	}
	c.gate.leave()
	return res, err
}

// endsTx reports whether the statement query, which returned err, ended
// the connection's transaction: a ROLLBACK (but not ROLLBACK TO a
// savepoint) always does, a COMMIT or END when it succeeds.
func endsTx(query string, err error) bool {
	if startsWith(query, "ROLLBACK") {
		q := strings.Fields(strings.ToUpper(query))
		return len(q) < 2 || q[1] != "TO" && !(q[1] == "TRANSACTION" && len(q) > 2 && q[2] == "TO")
	}
	return err == nil && startsWith(query, "COMMIT", "END")
}

// QueryContext implements [driver.QueryerContext]: outside a
// transaction, a query that writes (INSERT, UPDATE, DELETE or REPLACE
// with RETURNING) holds the gate until its rows close.
func (c *gatedConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	qc, ok := c.Conn.(driver.QueryerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	if c.held || !startsWith(query, "INSERT", "UPDATE", "DELETE", "REPLACE") {
		return qc.QueryContext(ctx, query, args)
	}
	if err := c.gate.enter(ctx); err != nil {
		return nil, err
	}
	rows, err := qc.QueryContext(ctx, query, args)
	if err != nil {
		c.gate.leave()
		return nil, err
	}
	return &gatedRows{Rows: rows, gate: c.gate}, nil
}

// Ping implements [driver.Pinger].
func (c *gatedConn) Ping(ctx context.Context) error {
	if p, ok := c.Conn.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

// ResetSession implements [driver.SessionResetter].
func (c *gatedConn) ResetSession(ctx context.Context) error {
	if r, ok := c.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

// IsValid implements [driver.Validator].
func (c *gatedConn) IsValid() bool {
	if v, ok := c.Conn.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

// Close implements [driver.Conn]. A connection closed inside its
// transaction (database/sql does not, but a driver error might) lets the
// gate go, since SQLite ends the transaction with the connection.
func (c *gatedConn) Close() error {
	if c.held {
		c.held, c.manual = false, false
		c.gate.leave()
	}
	return c.Conn.Close()
}

// gatedTx is a transaction that holds its connection's gate.
type gatedTx struct {
	driver.Tx
	conn *gatedConn
}

// Commit implements [driver.Tx]; the gate is let go however it ends.
func (t *gatedTx) Commit() error {
	defer t.end()
	return t.Tx.Commit()
}

// Rollback implements [driver.Tx]; the gate is let go however it ends.
func (t *gatedTx) Rollback() error {
	defer t.end()
	return t.Tx.Rollback()
}

func (t *gatedTx) end() {
	if t.conn.held {
		t.conn.held = false
		t.conn.gate.leave()
	}
}

// gatedRows are the rows of a writing query, which holds the gate until
// they close.
type gatedRows struct {
	driver.Rows
	gate *writeGate
	once sync.Once
}

// Close implements [driver.Rows].
func (r *gatedRows) Close() error {
	err := r.Rows.Close()
	r.once.Do(r.gate.leave)
	return err
}

// startsWith reports whether query's first word, after spaces, is one of
// words, in any case.
func startsWith(query string, words ...string) bool {
	q := strings.TrimLeft(query, " \t\r\n(")
	for _, w := range words {
		if len(q) >= len(w) && strings.EqualFold(q[:len(w)], w) {
			return true
		}
	}
	return false
}
