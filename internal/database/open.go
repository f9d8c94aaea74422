package database

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	"github.com/uptrace/bun/driver/sqliteshim"
)

// DefaultDSN is the database used when neither a flag nor the environment
// names one: a SQLite file in the working directory.
const DefaultDSN = "tradekit.db"

// busyTimeout is how long a SQLite connection waits for the write lock
// before it gives up with SQLITE_BUSY.
const busyTimeout = 10 * time.Second

// IsPostgres reports whether dsn selects PostgreSQL rather than SQLite.
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// Options tunes [Open]. The zero value suits batch work: seeding,
// imports, profile builds.
type Options struct {
	// Timeout bounds how long a PostgreSQL connection waits on its socket:
	// to send a statement, and for each read of its reply, so a single
	// INSERT … SELECT that runs longer fails with an i/o timeout. The
	// context's deadline, if sooner, bounds the same waits.
	//
	// Zero means no bound but the context's. That is what long writes
	// need: on a loaded machine one statement of a seed or an import may
	// run for many seconds. A server sets a few seconds, so that a request
	// fails soon when the database hangs or the network drops, rather than
	// holding its connection.
	//
	// A timeout, read_timeout or write_timeout parameter of a PostgreSQL
	// DSN (e.g. ?read_timeout=30s) takes precedence. SQLite ignores
	// Timeout: its statements run in process, and a writer waits at most
	// 10 s for another's lock.
	Timeout time.Duration

	// ListenDSN names the PostgreSQL server that [Listen] connects to for
	// LISTEN, when it is not the DSN's: a direct connection to the
	// primary when the DSN reaches it through a transaction pooler, which
	// keeps no session from one transaction to the next. Empty means the
	// DSN's own server.
	ListenDSN string

	// Logger receives what the database layer reports once in a
	// process's life (a fallback it chose, say); nil is slog.Default().
	Logger *slog.Logger
}

// Open opens the database named by dsn, with the options of opts, and
// checks that it answers. It does not apply migrations; see [Migrate].
func Open(ctx context.Context, dsn string, opts Options) (*bun.DB, error) {
	var db *bun.DB
	if IsPostgres(dsn) {
		c, err := newPGConnector(ctx, dsn, opts)
		if err != nil {
			return nil, err
		}
		// database/sql keeps the connections it took from the pool idle
		// rather than handing each back after every statement: nothing
		// else takes connections from the pool.
		sqldb := sql.OpenDB(c)
		conns := int(c.pool.Config().MaxConns)
		sqldb.SetMaxOpenConns(conns)
		sqldb.SetMaxIdleConns(conns)
		sqldb.SetConnMaxIdleTime(5 * time.Minute)
		db = bun.NewDB(sqldb, pgdialect.New())
	} else {
		path := strings.TrimPrefix(dsn, "sqlite:")
		if path == "" {
			return nil, fmt.Errorf("database: empty SQLite path")
		}
		if err := createPrivate(path); err != nil {
			return nil, err
		}
		key := path
		if abs, err := filepath.Abs(path); err == nil && !strings.HasPrefix(path, ":") && !strings.HasPrefix(path, "file:") {
			key = abs
		}
		sqldb := sql.OpenDB(&gatedConnector{drv: sqliteshim.Driver(), dsn: sqliteDSN(path), gate: gateOf(key)})
		// WAL lets readers run beside the one writer, so several
		// connections serve concurrent reads; writers take turns on the
		// database lock, queueing at the file's writeGate in this process
		// and waiting up to busyTimeout. The database runs in process: a
		// few connections per core keep every core busy.
		conns := 4 * runtime.GOMAXPROCS(0)
		sqldb.SetMaxOpenConns(conns)
		sqldb.SetMaxIdleConns(conns)
		db = bun.NewDB(sqldb, sqlitedialect.New())
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("database: %s: %w", redact(dsn), err)
	}
	return db, nil
}

// createPrivate creates the SQLite file at path, empty and readable by its
// owner alone (0600, whatever the umask), unless it exists. SQLite opens an
// empty file as an empty database, and creates the -wal and -shm files
// with the database file's permissions, ignoring the umask; left to
// itself it would create the database 0644 less the umask. An in-memory
// database (":memory:") and a path the driver would decode as a URI (holding
// '?', '#' or '%', or starting with "file:") are left to the driver.
func createPrivate(path string) error {
	if strings.HasPrefix(path, ":") || strings.HasPrefix(path, "file:") || strings.ContainsAny(path, "?#%") {
		return nil
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("database: create %s: %w", path, err)
	}
	// The umask may have taken bits away, even the owner's.
	err = f.Chmod(0o600)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("database: create %s: %w", path, err)
	}
	return nil
}

// IsSQLite reports whether db is a SQLite database.
func IsSQLite(db *bun.DB) bool {
	return db.Dialect().Name() == dialect.SQLite
}

// sqliteDSN turns a file path into the driver's DSN with the connection
// settings Tradekit relies on. Both drivers sqliteshim may pick are covered.
func sqliteDSN(path string) string {
	ms := busyTimeout.Milliseconds()
	q := url.Values{}
	switch sqliteshim.DriverName() {
	case "sqlite3": // mattn/go-sqlite3, chosen with the cgosqlite build tag
		q.Set("_busy_timeout", fmt.Sprint(ms))
		q.Set("_journal_mode", "WAL")
		q.Set("_synchronous", "NORMAL")
		q.Set("_foreign_keys", "1")
		q.Set("_txlock", "immediate")
	default: // modernc.org/sqlite
		q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", ms))
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(NORMAL)")
		q.Add("_pragma", "foreign_keys(1)")
		q.Set("_txlock", "immediate")
	}
	return "file:" + path + "?" + q.Encode()
}

// redact removes the password from a PostgreSQL DSN for messages.
func redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.User == nil {
		return dsn
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}
