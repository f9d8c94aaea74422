package database_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
	"github.com/uptrace/bun/schema"

	"github.com/tradekit/tradekit/internal/database"
	"github.com/tradekit/tradekit/internal/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

func TestMigrateIsIdempotent(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		applied, err := database.Migrate(context.Background(), db)
		if err != nil {
			t.Fatal(err)
		}
		if len(applied) != 0 {
			t.Errorf("second Migrate applied %v, want nothing", applied)
		}
	})
}

// TestDecimalRoundTrip stores decimals at the edges of NUMERIC(38,18) and
// reads them back unchanged; SQLite keeps them as TEXT.
func TestDecimalRoundTrip(t *testing.T) {
	t.Parallel()
	values := []string{
		"0", "29", "-0.000000000000000001", "0.1", "12345678901234567890.123456789012345678",
		"-99999999999999999999.999999999999999999", "1e-18", "3.14159265358979323846",
	}
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		for i, v := range values {
			want := decimal.RequireFromString(v)
			if i == len(values)-1 {
				want = want.Round(18) // NUMERIC(38,18) keeps 18 decimals
			}
			_, err := db.NewRaw(`INSERT INTO plans (id, slug, name, price, currency, interval,
				api_requests_per_day, api_requests_per_minute, watchlists, portfolios, alerts, sort_order)
				VALUES (?, ?, 'Test', ?, 'USD', 'month', 1, 1, 1, 1, 1, 99)`,
				fmt.Sprintf("00000000-0000-0000-0000-%012d", i+1), fmt.Sprint("test-", i), want).Exec(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var got decimal.Decimal
			if err := db.NewRaw("SELECT price FROM plans WHERE slug = ?", fmt.Sprint("test-", i)).Scan(ctx, &got); err != nil {
				t.Fatal(err)
			}
			if !got.Equal(want) {
				t.Errorf("price %s came back as %s", want, got)
			}
			// As a prepared statement's parameter (on PostgreSQL,
			// encoded in binary; see params.go), and rounded there.
			id := uuid.MustParse(fmt.Sprintf("00000000-0000-0000-0000-%012d", i+1))
			raw := decimal.RequireFromString(v)
			if _, err := setPrice.Exec(ctx, db, raw, id); err != nil {
				t.Fatal(err)
			}
			var back decimal.Decimal
			if err := priceOf.Scan(ctx, db, &back, id); err != nil {
				t.Fatal(err)
			}
			if db.Dialect().Name() != dialect.PG {
				want = raw // SQLite keeps the decimals it is given
			}
			if !back.Equal(want) {
				t.Errorf("price %s as a parameter came back as %s, want %s", raw, back, want)
			}
		}
	})
}

// setPrice sets a plan's price, by id: both parameters.
var setPrice = database.NewPrepared("set_price", func(db bun.IDB, params ...any) schema.QueryAppender {
	return db.NewUpdate().Table("plans").Set("price = ?", params[0]).Where("id = ?", params[1])
})

// priceOf reads a plan's price, by id.
var priceOf = database.NewPrepared("price_of", func(db bun.IDB, params ...any) schema.QueryAppender {
	return db.NewSelect().Table("plans").Column("price").Where("id = ?", params[0])
})

// TestConcurrentWriters runs many writers at once: on SQLite they queue for
// the write lock (WAL, busy timeout, BEGIN IMMEDIATE) instead of failing
// with "database is locked".
func TestConcurrentWriters(t *testing.T) {
	t.Parallel()
	const writers, each = 16, 25
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		if _, err := db.ExecContext(ctx, "CREATE TABLE counter (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)"); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, "INSERT INTO counter VALUES (1, 0)"); err != nil {
			t.Fatal(err)
		}
		read := "SELECT n FROM counter WHERE id = 1"
		if !database.IsSQLite(db) {
			read += " FOR UPDATE" // PostgreSQL runs READ COMMITTED: lock the row
		}
		var wg sync.WaitGroup
		errs := make(chan error, writers*each)
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < each; i++ {
					// A read then a write in one transaction: the pattern
					// that fails under SQLite's default deferred BEGIN.
					errs <- db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
						var n int
						if err := tx.NewRaw(read).Scan(ctx, &n); err != nil {
							return err
						}
						_, err := tx.ExecContext(ctx, "UPDATE counter SET n = ? WHERE id = 1", n+1)
						return err
					})
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		var n int
		if err := db.NewRaw("SELECT n FROM counter WHERE id = 1").Scan(ctx, &n); err != nil {
			t.Fatal(err)
		}
		if n != writers*each {
			t.Errorf("counter = %d, want %d (lost updates)", n, writers*each)
		}
	})
}

// TestOpenTimeout: Options.Timeout bounds a PostgreSQL statement's wait
// for its reply; the zero Options set no bound but the context's; a
// DSN's read_timeout takes precedence; SQLite ignores the option.
func TestOpenTimeout(t *testing.T) {
	t.Parallel()
	const slow = "SELECT pg_sleep(0.6)"
	dsn := dbtest.PostgresDSN(t)
	tests := []struct {
		name        string
		dsn         string
		opts        database.Options
		ctxTimeout  time.Duration
		wantTimeout bool
	}{
		{"bounded", dsn, database.Options{Timeout: 200 * time.Millisecond}, 0, true},
		{"bound longer than the statement", dsn, database.Options{Timeout: 5 * time.Second}, 0, false},
		{"no bound", dsn, database.Options{}, 0, false},
		{"no bound but the context's", dsn, database.Options{}, 200 * time.Millisecond, true},
		{"the DSN's read_timeout wins", withParam(dsn, "read_timeout=200ms"), database.Options{}, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, err := database.Open(context.Background(), tt.dsn, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			ctx := context.Background()
			if tt.ctxTimeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.ctxTimeout)
				defer cancel()
			}
			_, err = db.ExecContext(ctx, slow)
			var ne net.Error
			isTimeout := errors.As(err, &ne) && ne.Timeout()
			if isTimeout != tt.wantTimeout || (err != nil && !isTimeout) {
				t.Errorf("%s: error %v, want a timeout: %t", slow, err, tt.wantTimeout)
			}
		})
	}
	t.Run("SQLite ignores it", func(t *testing.T) {
		db, err := database.Open(context.Background(), filepath.Join(t.TempDir(), "x.db"), database.Options{Timeout: time.Nanosecond})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var n int
		if err := db.QueryRowContext(context.Background(), "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 100000) SELECT COUNT(*) FROM c").Scan(&n); err != nil || n != 100000 {
			t.Errorf("count = %d, %v", n, err)
		}
	})
}

// withParam adds the query parameter kv to dsn.
func withParam(dsn, kv string) string {
	if strings.Contains(dsn, "?") {
		return dsn + "&" + kv
	}
	return dsn + "?" + kv
}

// TestOpenBadPostgresDSN: a DSN pgx cannot parse is an error, not a
// panic, and the error does not show the password.
func TestOpenBadPostgresDSN(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, dsn, want string }{
		{"unknown sslmode", "postgres://u:secret@localhost/x?sslmode=bogus", "sslmode is invalid"},
		{"bad host", "postgres://u:secret@local host:5432/x", `invalid character " " in host name`},
		{"bad port", "postgresql://u:secret@localhost:99x/x", `invalid port`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, err := database.Open(context.Background(), tt.dsn, database.Options{})
			if err == nil {
				db.Close()
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "secret") {
				t.Errorf("error %q, want one containing %q, without the password", err, tt.want)
			}
		})
	}
}
