package dbtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/internal/database"
)

// tempDir is the directory for temporary files as the test binary
// started with it: a test may point TMPDIR at a directory of its own (to
// see what a server leaves there), which the servers dbtest starts in
// the background meanwhile must not use.
var tempDir = os.TempDir()

// EnvPostgres names the environment variable holding the DSN of an existing
// PostgreSQL server to test on instead of a throwaway one.
const EnvPostgres = "TRADEKIT_TEST_POSTGRES"

var (
	mainCalled bool

	sharedOnce sync.Once
	shared     *Server // the throwaway server, if one was started
	sharedDSN  string  // admin DSN of the server the tests use
	sharedErr  error
	// bouncer pools the tests' connections under TRADEKIT_TEST_PGBOUNCER
	// (atomic: DirectDSN reads it while startShared may be running);
	// bouncerErr is why it could not be started.
	bouncer    atomic.Pointer[PgBouncer]
	bouncerErr error
)

// Main runs the tests of m with [Run] and calls os.Exit with their exit
// code.
func Main(m *testing.M) { os.Exit(Run(m)) }

// Run runs the tests of m, then stops the throwaway PostgreSQL server and
// PgBouncer if they were started, and returns the tests' exit code: for a TestMain with
// cleaning of its own to do before os.Exit.
//
// Unless -parallel is given, Run runs up to [Parallel] parallel tests at
// once rather than GOMAXPROCS: see there.
func Run(m *testing.M) int {
	mainCalled = true
	flag.Parse()
	given := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if !given["test.parallel"] {
		if err := flag.Set("test.parallel", strconv.Itoa(Parallel())); err != nil {
			panic(err)
		}
	}
	// A whole run starts the PostgreSQL server at once, beside the first
	// tests, rather than when the first PostgreSQL test asks for it: its
	// start takes seconds (initdb), which every PostgreSQL test of the
	// package waited through. A run of chosen tests (-run, as benchmarks
	// use it) starts it only if one needs it.
	if !given["test.run"] && !given["test.list"] {
		go sharedOnce.Do(startShared)
	}
	code := m.Run()
	sharedOnce.Do(func() {}) // a start under way ends before the server is stopped
	removeTemplates()
	if b := bouncer.Load(); b != nil {
		b.Close()
	}
	if shared != nil {
		shared.Close()
	}
	return code
}

// Parallel is how many parallel tests a package that calls [Run] runs at
// once by default: 4 × GOMAXPROCS. Its tests spend most of their time
// waiting, on PostgreSQL (another process), on loopback HTTP, fills and
// syncs, so GOMAXPROCS of them at a time (go test's default) leave the
// cores idle much of the run; each works on its own database, so more of
// them at once only queue on the cores. A test that needs the machine to
// itself does not call t.Parallel.
func Parallel() int { return 4 * runtime.GOMAXPROCS(0) }

// Runner is *testing.T or *testing.B: what can run named subtests or
// sub-benchmarks of its own kind.
type Runner[T testing.TB] interface {
	testing.TB
	Run(name string, f func(T)) bool
}

// Each runs fn twice, as the subtests (or sub-benchmarks) "sqlite" and
// "postgres", each on a fresh migrated database.
func Each[T Runner[T]](t T, fn func(t T, db *bun.DB)) {
	t.Helper()
	t.Run("sqlite", func(t T) { fn(t, SQLite(t)) })
	t.Run("postgres", func(t T) { fn(t, Postgres(t)) })
}

// EachDSN is like [Each] but hands fn the DSN of the fresh database, for
// tests that open their own connections (several server instances, the
// CLI). The database is migrated.
func EachDSN[T Runner[T]](t T, fn func(t T, dsn string)) {
	t.Helper()
	t.Run("sqlite", func(t T) { fn(t, SQLiteDSN(t)) })
	t.Run("postgres", func(t T) { fn(t, PostgresDSN(t)) })
}

// EachParallel is like [Each] but runs the two subtests in parallel, for
// a long test whose runs share nothing that either changes: the SQLite
// run works in the test process and the PostgreSQL run mostly in the
// server's, so together they take little more than the longer one.
func EachParallel(t *testing.T, fn func(t *testing.T, db *bun.DB)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { t.Parallel(); fn(t, SQLite(t)) })
	t.Run("postgres", func(t *testing.T) { t.Parallel(); fn(t, Postgres(t)) })
}

// EachDSNParallel is like [EachDSN] but runs the two subtests in
// parallel; see [EachParallel].
func EachDSNParallel(t *testing.T, fn func(t *testing.T, dsn string)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { t.Parallel(); fn(t, SQLiteDSN(t)) })
	t.Run("postgres", func(t *testing.T) { t.Parallel(); fn(t, PostgresDSN(t)) })
}

// SQLiteDSN returns the path of a fresh migrated SQLite database in the
// test's temporary directory.
func SQLiteDSN(tb testing.TB) string {
	tb.Helper()
	dsn := filepath.Join(tb.TempDir(), "tradekit.db")
	sqliteCopy(tb, dsn)
	MustOpen(tb, dsn)
	return dsn
}

// SQLite returns a fresh migrated SQLite database, closed when the test ends.
func SQLite(tb testing.TB) *bun.DB {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "tradekit.db")
	sqliteCopy(tb, path)
	return MustOpen(tb, path)
}

// Postgres returns a fresh migrated PostgreSQL database, closed and dropped
// when the test ends.
func Postgres(tb testing.TB) *bun.DB {
	tb.Helper()
	return MustOpen(tb, PostgresDSN(tb))
}

// PostgresDSN creates a fresh migrated PostgreSQL database and returns its
// DSN; the database is dropped when the test ends. Under
// TRADEKIT_TEST_PGBOUNCER the DSN goes through PgBouncer; [DirectDSN]
// returns the server's own DSN of the same database.
func PostgresDSN(tb testing.TB) string {
	tb.Helper()
	if !mainCalled {
		tb.Fatal("dbtest: call dbtest.Main(m) (or Run) from TestMain, so the PostgreSQL server is stopped at the end")
	}
	sharedOnce.Do(startShared)
	if sharedErr != nil {
		Unavailable(tb, sharedErr)
	}
	if bouncerErr != nil {
		tb.Fatalf("%v (%s is set)", bouncerErr, EnvPgBouncer)
	}
	dsn := createDatabase(tb, sharedDSN)
	if b := bouncer.Load(); b != nil {
		return b.DSN(dsn)
	}
	return dsn
}

// DirectDSN returns the DSN that reaches the database of dsn on the
// PostgreSQL server itself: dsn as it is unless it goes through the
// tests' PgBouncer (under TRADEKIT_TEST_PGBOUNCER). A connection that
// holds session state (LISTEN, session advisory locks) needs it.
func DirectDSN(dsn string) string {
	if b := bouncer.Load(); b != nil {
		return b.Direct(dsn)
	}
	return dsn
}

// startShared sets the server the tests use: TRADEKIT_TEST_POSTGRES's,
// or a throwaway one it starts; and, under TRADEKIT_TEST_PGBOUNCER, the
// PgBouncer in front of it. It runs once, under sharedOnce.
func startShared() {
	if dsn := os.Getenv(EnvPostgres); dsn != "" {
		sharedDSN = dsn
	} else {
		shared, sharedErr = StartServer()
		if sharedErr != nil {
			return
		}
		sharedDSN = shared.DSN("postgres")
	}
	bin := os.Getenv(EnvPgBouncer)
	switch bin {
	case "", "0", "false":
		return
	case "1", "true":
		bin = "" // found on PATH
	}
	b, err := StartPgBouncer(bin, sharedDSN)
	if err != nil {
		bouncerErr = err
		return
	}
	bouncer.Store(b)
}

// MustOpen opens dsn, applies the migrations and closes the database when
// the test ends. Through a PgBouncer, LISTEN goes to [DirectDSN] of dsn,
// as serve --db-listen has it.
func MustOpen(tb testing.TB, dsn string) *bun.DB {
	tb.Helper()
	ctx := context.Background()
	var opts database.Options
	if direct := DirectDSN(dsn); direct != dsn {
		opts.ListenDSN = direct // as serve --db-listen behind a pooler
	}
	db, err := database.Open(ctx, dsn, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	if _, err := database.Migrate(ctx, db); err != nil {
		tb.Fatal(err)
	}
	return db
}

// Unavailable skips the test, or fails it under CI=true, because err
// kept it from having a PostgreSQL server.
func Unavailable(tb testing.TB, err error) {
	tb.Helper()
	if os.Getenv("CI") == "true" {
		tb.Fatalf("dbtest: PostgreSQL is required under CI=true: %v", err)
	}
	tb.Skipf("dbtest: no PostgreSQL (set %s or install PostgreSQL): %v", EnvPostgres, err)
}

// createDatabase creates a database with a random name on the server of
// adminDSN, a copy of the process's migrated template, and returns its
// DSN.
func createDatabase(tb testing.TB, adminDSN string) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin, err := database.Open(ctx, adminDSN, database.Options{})
	if err != nil {
		Unavailable(tb, err)
	}
	defer admin.Close()
	template, err := pgTemplateName(adminDSN, func(name string) error {
		if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
			return err
		}
		db, err := database.Open(ctx, withDatabase(adminDSN, name), database.Options{})
		if err != nil {
			return err
		}
		defer db.Close()
		_, err = database.Migrate(ctx, db)
		return err
	})
	if err != nil {
		tb.Fatalf("dbtest: the PostgreSQL template: %v", err)
	}
	name := "tk_test_" + randomHex(6)
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name+" TEMPLATE "+template); err != nil {
		tb.Fatalf("dbtest: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		admin, err := database.Open(ctx, adminDSN, database.Options{})
		if err != nil {
			return // the server is gone; nothing to clean
		}
		defer admin.Close()
		admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	dsn := withDatabase(adminDSN, name)
	MustOpen(tb, dsn)
	return dsn
}

// randomHex returns n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// withDatabase replaces the database name in a PostgreSQL DSN.
func withDatabase(dsn, name string) string {
	scheme, rest, _ := strings.Cut(dsn, "://")
	host, query, hasQuery := strings.Cut(rest, "?")
	if i := strings.IndexByte(host, '/'); i >= 0 {
		host = host[:i]
	}
	out := fmt.Sprintf("%s://%s/%s", scheme, host, name)
	if hasQuery {
		out += "?" + query
	}
	return out
}
