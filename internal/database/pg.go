package database

import (
	"context"
	"crypto/sha256"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
)

// pgConnector is the connector of a PostgreSQL *sql.DB: stdlib's
// connector over one pgxpool.Pool, with what Tradekit's own code needs
// beside the connections (the mode of [Prepared] statements, the server
// of [Listen]). [pgOf] finds it from a *bun.DB, through the driver it
// reports, so that nothing is kept in package state.
type pgConnector struct {
	driver.Connector // stdlib's, over pool
	pool             *pgxpool.Pool
	// mode is how [Prepared] statements run (a pgx.QueryExecMode): the
	// DSN's default_query_exec_mode, cache_statement unless it says
	// otherwise; cache_describe once a transaction pooler is found to
	// keep no prepared statement (see [pgConnector.noteErr]).
	mode atomic.Int32
	// listen is the configuration of [Listen]'s connections.
	listen *pgx.ConnConfig
	log    *slog.Logger
	// listenFallback logs once that notifications do not arrive.
	listenFallback sync.Once
	// functions are the functions that hold the plans of the Prepared
	// reads behind a pooler that keeps no prepared statement.
	functions functions
	// names are the names of the statements prepared by name, by text
	// (see [pgConn.named]).
	names sync.Map
}

// stmtName returns the name that the statement query is prepared by on
// each connection: tradekit_s_ and a hash of its text.
func (c *pgConnector) stmtName(query string) string {
	if n, ok := c.names.Load(query); ok {
		return n.(string)
	}
	sum := sha256.Sum256([]byte(query))
	n := "tradekit_s_" + hex.EncodeToString(sum[:12])
	c.names.Store(query, n)
	return n
}

// pgDriver is the driver a PostgreSQL *sql.DB reports: pgx's, with the
// connector that made the connections.
type pgDriver struct {
	driver.Driver
	c *pgConnector
}

// Driver implements driver.Connector.
func (c *pgConnector) Driver() driver.Driver {
	return pgDriver{Driver: stdlib.GetDefaultDriver(), c: c}
}

// Connect implements driver.Connector: stdlib's connection, as a
// [pgConn].
func (c *pgConnector) Connect(ctx context.Context) (driver.Conn, error) {
	dc, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &pgConn{Conn: dc.(*stdlib.Conn), c: c}, nil
}

// Close implements io.Closer, which sql.DB.Close calls: it closes the pool.
func (c *pgConnector) Close() error {
	c.pool.Close()
	return nil
}

// pgOf returns the connector under db, nil when db is not PostgreSQL.
func pgOf(db *bun.DB) *pgConnector {
	if d, ok := db.DB.Driver().(pgDriver); ok {
		return d.c
	}
	return nil
}

// execMode returns the mode [Prepared] statements run in.
func (c *pgConnector) execMode() pgx.QueryExecMode { return pgx.QueryExecMode(c.mode.Load()) }

// noteErr looks at the error of a [Prepared] statement and reports
// whether it is a named prepared statement missing, or there already:
// which comes from a transaction pooler that hands each transaction
// another server connection and does not carry prepared statements
// along (PgBouncer before 1.21, or later without
// max_prepared_statements). Such a statement never ran. From then on the
// statements are unnamed, their descriptions cached (cache_describe),
// which any pooler passes; the log says so once.
func (c *pgConnector) noteErr(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || (pe.Code != "26000" && pe.Code != "42P05") {
		return false
	}
	if c.mode.CompareAndSwap(int32(pgx.QueryExecModeCacheStatement), int32(pgx.QueryExecModeCacheDescribe)) {
		c.log.Warn("database: the server lost a prepared statement between transactions, as a transaction pooler "+
			"without max_prepared_statements does; statements are no longer prepared by name. Add "+
			"default_query_exec_mode=cache_describe to the DSN to start so", "err", err)
	}
	return true
}

// Tradekit's own parameters of a PostgreSQL DSN, which [Open] takes out
// before pgx reads the rest.
const (
	paramTimeout      = "timeout"
	paramReadTimeout  = "read_timeout"
	paramWriteTimeout = "write_timeout"
)

// newPGConnector opens the pool of dsn, with opts. Nothing connects yet.
func newPGConnector(ctx context.Context, dsn string, opts Options) (*pgConnector, error) {
	dsn, read, write, err := socketTimeouts(dsn, opts.Timeout)
	if err != nil {
		return nil, err
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("database: invalid PostgreSQL DSN: %s", parseReason(err))
	}
	// Each connection is a PostgreSQL backend process. More busy
	// backends than the cores can run only queue on the scheduler:
	// with 32 on 2 cores the loopback load test's p99 was 216 ms,
	// with 8 it was 20 ms (scripts/loadtest).
	cfg.MaxConns = int32(4 * runtime.GOMAXPROCS(0))
	cfg.MaxConnIdleTime = 5 * time.Minute
	c := &pgConnector{log: opts.Logger}
	if c.log == nil {
		c.log = slog.Default()
	}
	// bun formats every value into its statements' text, so that no two
	// of them need share a plan: they run unnamed, parsed and planned
	// each time and cached nowhere, which any pooler passes. Only
	// [Prepared] statements take parameters, in the DSN's mode. When
	// that mode prepares them (cache_statement), the connections run in
	// exec mode, in which a batch (see [Tx]) runs them as the statements
	// [pgConn.named] prepared, bound and executed, beside bun's unnamed
	// ones; otherwise (behind a pooler that keeps no prepared statement)
	// as simple queries, their values formatted in, which such a pooler
	// passes with the least work: one message for a whole batch.
	c.mode.Store(int32(cfg.ConnConfig.DefaultQueryExecMode))
	if cfg.ConnConfig.DefaultQueryExecMode == pgx.QueryExecModeCacheStatement {
		cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeExec
	} else {
		cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	}
	// A listening connection waits for as long as no one notifies: it
	// has no socket timeout.
	c.listen = cfg.ConnConfig.Copy()
	if read > 0 || write > 0 {
		dial := cfg.ConnConfig.DialFunc
		cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
			conn, err := dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return &timeoutConn{Conn: conn, read: read, write: write}, nil
		}
	}
	if opts.ListenDSN != "" {
		ldsn, _, _, err := socketTimeouts(opts.ListenDSN, 0) // a listener has none
		if err != nil {
			return nil, err
		}
		lc, err := pgx.ParseConfig(ldsn)
		if err != nil {
			return nil, fmt.Errorf("database: invalid LISTEN DSN: %s", parseReason(err))
		}
		c.listen = lc
	}
	c.listen.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	cfg.AfterConnect = func(_ context.Context, conn *pgx.Conn) error {
		registerParams(conn.TypeMap())
		return nil
	}
	if c.pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		return nil, fmt.Errorf("database: %w", err)
	}
	c.Connector = stdlib.GetPoolConnector(c.pool)
	return c, nil
}

// parseReason is the reason pgx gives for refusing a DSN, without the
// DSN (pgx hides its password, but not the rest).
func parseReason(err error) string {
	var pe *pgconn.ParseConfigError
	if errors.As(err, &pe) && pe.Unwrap() != nil {
		return pe.Unwrap().Error()
	}
	if errors.As(err, &pe) {
		return pe.Error()
	}
	return err.Error()
}

// socketTimeouts takes Tradekit's timeout parameters out of dsn and
// returns what is left, with the bounds of a socket's reads and writes:
// the parameters' when given, else def.
func socketTimeouts(dsn string, def time.Duration) (rest string, read, write time.Duration, err error) {
	u, err := url.Parse(dsn)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the DSN, which may hold a password
		}
		return "", 0, 0, fmt.Errorf("database: invalid PostgreSQL DSN: %w", err)
	}
	q := u.Query()
	read, write = def, def
	for _, p := range []struct {
		name string
		to   []*time.Duration
	}{{paramTimeout, []*time.Duration{&read, &write}}, {paramReadTimeout, []*time.Duration{&read}}, {paramWriteTimeout, []*time.Duration{&write}}} {
		if !q.Has(p.name) {
			continue
		}
		d, err := time.ParseDuration(q.Get(p.name))
		if err != nil || d < 0 {
			return "", 0, 0, fmt.Errorf("database: invalid PostgreSQL DSN: %s must be a duration such as 30s, got %q", p.name, q.Get(p.name))
		}
		for _, to := range p.to {
			*to = d
		}
		q.Del(p.name)
	}
	u.RawQuery = q.Encode()
	return u.String(), read, write, nil
}

// timeoutConn bounds each read and each write on a connection, as
// [Options.Timeout] says, beside the deadline pgx sets on it to heed a
// context (which wins when sooner). A read that timed out is not given
// time again (pgx reads once more after a timeout) until the next write
// or the next deadline of pgx's.
type timeoutConn struct {
	net.Conn
	read, write time.Duration

	mu       sync.Mutex
	deadline time.Time // pgx's; zero for none
	expired  bool      // a read timed out
}

// SetDeadline records pgx's deadline, and sets it.
func (c *timeoutConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deadline, c.expired = t, false
	return c.Conn.SetDeadline(t)
}

// Read reads with the sooner of pgx's deadline and c.read from now.
func (c *timeoutConn) Read(b []byte) (int, error) {
	c.mu.Lock()
	err := c.arm(!c.expired, c.read, c.Conn.SetReadDeadline)
	c.mu.Unlock()
	if err != nil {
		return 0, err
	}
	n, err := c.Conn.Read(b)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		c.mu.Lock()
		c.expired = true
		c.mu.Unlock()
	}
	return n, err
}

// Write writes with the sooner of pgx's deadline and c.write from now.
func (c *timeoutConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	c.expired = false
	err := c.arm(true, c.write, c.Conn.SetWriteDeadline)
	c.mu.Unlock()
	if err != nil {
		return 0, err
	}
	return c.Conn.Write(b)
}

// arm sets, with set, the sooner of pgx's deadline and d from now (pgx's
// alone when d is zero), or leaves the deadline as it is unless renew.
// The caller holds c.mu, so that a deadline pgx sets at the same time (to
// interrupt the read, its context done) is not overwritten with a later
// one.
func (c *timeoutConn) arm(renew bool, d time.Duration, set func(time.Time) error) error {
	if !renew {
		return nil
	}
	t := c.deadline
	if d > 0 {
		if own := time.Now().Add(d); t.IsZero() || own.Before(t) {
			t = own
		}
	}
	return set(t)
}
