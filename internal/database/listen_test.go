package database_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/tradekit/tradekit/internal/database"
	"github.com/tradekit/tradekit/internal/dbtest"
)

// TestListen checks that Listen hands over the payloads of notifications
// sent through the pool, after the "" of its start, on the server
// Options.ListenDSN names and on the DSN's own, and never another
// instance's delivery probe.
func TestListen(t *testing.T) {
	t.Parallel()
	dsn := dbtest.PostgresDSN(t)
	direct := dbtest.DirectDSN(dsn) // dsn itself, unless through a PgBouncer
	for _, opts := range []database.Options{{ListenDSN: direct}, {ListenDSN: ""}} {
		if opts.ListenDSN == "" && direct != dsn {
			continue // see TestThroughPgBouncer
		}
		t.Run("ListenDSN="+opts.ListenDSN, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			db, err := database.Open(ctx, dsn, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			got := make(chan string, 16)
			done := make(chan struct{})
			go func() {
				defer close(done)
				database.Listen(ctx, db, "listen_probe", time.Second, slog.Default(), func(p string) { got <- p })
			}()
			if p := <-got; p != "" {
				t.Fatalf("first call: %q, want the start's \"\"", p)
			}
			for _, p := range []string{"tradekit-probe:another instance's", "a", "b"} {
				if _, err := db.ExecContext(ctx, "SELECT pg_notify('listen_probe', ?)", p); err != nil {
					t.Fatal(err)
				}
			}
			for _, want := range []string{"a", "b"} {
				select {
				case p := <-got:
					if p != want {
						t.Fatalf("payload %q, want %q", p, want)
					}
				case <-ctx.Done():
					t.Fatalf("no notification %q", want)
				}
			}
			cancel()
			<-done // Listen returns when its context ends
		})
	}
}

// TestListenerNeedsPostgres: NewListener refuses SQLite with an error that
// says why.
func TestListenerNeedsPostgres(t *testing.T) {
	t.Parallel()
	db := dbtest.SQLite(t)
	if _, err := database.NewListener(context.Background(), db, "x"); err == nil || !strings.Contains(err.Error(), "PostgreSQL") {
		t.Fatalf("NewListener on SQLite: %v, want an error naming PostgreSQL", err)
	}
}
