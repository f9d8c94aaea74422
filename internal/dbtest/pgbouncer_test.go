package dbtest_test

import (
	"context"
	"net/url"
	"os"
	"testing"

	"github.com/tradekit/tradekit/internal/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// TestPgBouncer checks, under TRADEKIT_TEST_PGBOUNCER, that a test's DSN
// goes through PgBouncer: to another port than DirectDSN's, on which
// the server says it listens, and to the same database, which a table
// created through DirectDSN shows.
func TestPgBouncer(t *testing.T) {
	if os.Getenv(dbtest.EnvPgBouncer) == "" {
		t.Skipf("%s is not set", dbtest.EnvPgBouncer)
	}
	ctx := context.Background()
	dsn := dbtest.PostgresDSN(t)
	direct := dbtest.DirectDSN(dsn)
	pooled, server := mustParse(t, dsn), mustParse(t, direct)
	if pooled.Port() == server.Port() {
		t.Fatalf("DSN %s and DirectDSN %s have one port", dsn, direct)
	}
	if pooled.Path != server.Path {
		t.Fatalf("DSN %s and DirectDSN %s name different databases", dsn, direct)
	}

	db, ddb := dbtest.MustOpen(t, dsn), dbtest.MustOpen(t, direct)
	if _, err := ddb.ExecContext(ctx, "CREATE TABLE pooled_check (n int); INSERT INTO pooled_check VALUES (7)"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRowContext(ctx, "SELECT n FROM pooled_check").Scan(&n); err != nil || n != 7 {
		t.Fatalf("through PgBouncer: %d, %v; want 7, nil", n, err)
	}

	// The server reached through the DSN listens on DirectDSN's port,
	// not on the one dialled: something stands in between.
	var port string
	if err := db.QueryRowContext(ctx, "SELECT inet_server_port()::text").Scan(&port); err != nil {
		t.Fatal(err)
	}
	if port != server.Port() {
		t.Errorf("through %s the server's port is %s, want DirectDSN's %s", pooled.Host, port, server.Port())
	}
	t.Logf("PgBouncer at %s, PostgreSQL at %s", pooled.Host, server.Host)
}

func mustParse(tb testing.TB, dsn string) *url.URL {
	tb.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		tb.Fatal(err)
	}
	return u
}
