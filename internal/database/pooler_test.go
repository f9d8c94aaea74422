package database_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"

	"github.com/tradekit/tradekit/internal/database"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/internal/testkit"
)

// TestThroughPgBouncer runs what relies on a server's session through a
// PgBouncer in transaction mode with none of the settings a pooler asks
// for (no default_query_exec_mode in the DSN, no ListenDSN):
//
//   - a Prepared statement whose server connection the pooler gave to
//     another client meanwhile runs anyway (unnamed, from then on), and
//     the log says so once;
//   - LISTEN hears nothing through the pooler: NewListener says so with
//     ErrNoNotifications, and the log says so once; with a direct
//     ListenDSN, notifications arrive;
//   - Migrate's lock is a transaction's: two at once through the pooler
//     end;
//   - with cache_describe, a statement runs as the call of a function
//     made for it (a read, a write, a write with RETURNING, alone and in
//     a transaction), and as it is when that function is gone; an insert
//     of whole rows runs as text.
func TestThroughPgBouncer(t *testing.T) {
	t.Parallel()
	direct := dbtest.DirectDSN(dbtest.PostgresDSN(t))
	b, err := dbtest.StartPgBouncer("", direct)
	if err != nil {
		dbtest.Unavailable(t, err)
	}
	defer b.Close()
	pooled := b.DSN(direct)
	if b.HasPrepared() {
		t.Skipf("PgBouncer %s keeps prepared statements: nothing is lost", b.Version())
	}
	pooled = strings.Replace(pooled, "default_query_exec_mode=cache_describe", "default_query_exec_mode=cache_statement", 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var log lockedBuffer
	db, err := database.Open(ctx, pooled, database.Options{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // one client connection, which pgx prepares on

	t.Run("prepared statements", func(t *testing.T) {
		if _, err := db.ExecContext(ctx, "CREATE TABLE pooled_probe (id INTEGER PRIMARY KEY, v TEXT NOT NULL); INSERT INTO pooled_probe VALUES (1, 'a'), (2, 'b')"); err != nil {
			t.Fatal(err)
		}
		read := func() (int, error) {
			var n int
			err := pooledCount.Scan(ctx, db, &n, "a")
			return n, err
		}
		if n, err := read(); err != nil || n != 1 {
			t.Fatalf("first read: %d, %v", n, err)
		}
		// Another client holds the server connection the statement was
		// prepared on (PgBouncer hands out the one last released): the
		// next read goes to another, which does not have it.
		other, err := pgx.Connect(ctx, pooled)
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close(ctx)
		if _, err := other.Exec(ctx, "BEGIN; SELECT 1"); err != nil {
			t.Fatal(err)
		}
		for i := range 5 {
			if n, err := read(); err != nil || n != 1 {
				t.Fatalf("read %d with the connection held: %d, %v", i, n, err)
			}
		}
		if _, err := other.Exec(ctx, "COMMIT"); err != nil {
			t.Fatal(err)
		}
		// In a transaction too.
		err = database.RunInTx(ctx, db, func(ctx context.Context, tx bun.IDB) error {
			var n int
			return pooledCount.Scan(ctx, tx, &n, "b")
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Count(log.String(), "lost a prepared statement"); got != 1 {
			t.Errorf("the log told the fallback %d times, want once:\n%s", got, log.String())
		}
	})

	t.Run("statements as functions", func(t *testing.T) {
		// cache_describe, as docs/production.md says to set behind such a pooler:
		// the read's plan is kept by the function made for it.
		fdb, err := database.Open(ctx, b.DSN(direct), database.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer fdb.Close()
		var n int
		if err := pooledCount.Scan(ctx, fdb, &n, "b"); err != nil || n != 1 {
			t.Fatalf("first read: %d, %v", n, err)
		}
		testkit.Eventually(t, 10*time.Second, func() bool {
			var made bool
			if err := fdb.NewRaw("SELECT EXISTS (SELECT FROM pg_proc WHERE proname LIKE 'tradekit_q_%')").Scan(ctx, &made); err != nil {
				t.Fatal(err)
			}
			return made
		}, "a function made for the read")
		for _, v := range []string{"a", "b", "c"} {
			want := map[string]int{"a": 1, "b": 1}[v]
			if err := pooledCount.Scan(ctx, fdb, &n, v); err != nil || n != want {
				t.Fatalf("read of %q through its function: %d, %v, want %d", v, n, err, want)
			}
			err := database.RunInTx(ctx, fdb, func(ctx context.Context, tx bun.IDB) error { return pooledCount.Scan(ctx, tx, &n, v) })
			if err != nil || n != want {
				t.Fatalf("read of %q through its function in a transaction: %d, %v, want %d", v, n, err, want)
			}
		}

		// Writes: the function of one without RETURNING returns how many
		// rows it changed, as the statement's result; one with RETURNING
		// returns its rows; in a transaction, one sent with the next
		// statement runs before it.
		write := func(v string, id int) int64 {
			t.Helper()
			res, err := pooledSet.Exec(ctx, fdb, v, id)
			if err != nil {
				t.Fatalf("set %d to %q: %v", id, v, err)
			}
			n, err := res.RowsAffected()
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		write("a", 1)
		var old string
		if err := pooledSwap.Scan(ctx, fdb, &old, "a", 2); err != nil {
			t.Fatal(err)
		}
		testkit.Eventually(t, 10*time.Second, func() bool {
			var made int
			if err := fdb.NewRaw("SELECT count(*) FROM pg_proc WHERE proname LIKE 'tradekit_q_%'").Scan(ctx, &made); err != nil {
				t.Fatal(err)
			}
			return made == 3
		}, "a function made for each write")
		if got := write("c", 1); got != 1 {
			t.Errorf("set 1 to c through its function: %d rows, want 1", got)
		}
		if got := write("c", 99); got != 0 {
			t.Errorf("set 99 to c through its function: %d rows, want 0", got)
		}
		if err := pooledSwap.Scan(ctx, fdb, &old, "c", 2); err != nil || old != "a" {
			t.Errorf("swap of 2 through its function: %q, %v, want a", old, err)
		}
		err = database.RunInTx(ctx, fdb, func(ctx context.Context, tx bun.IDB) error {
			if err := pooledSet.ExecWithNext(ctx, tx, "d", 1); err != nil {
				return err
			}
			return pooledCount.Scan(ctx, tx, &n, "d")
		})
		if err != nil || n != 1 {
			t.Fatalf("a write sent with the next read, through their functions: %d, %v, want 1", n, err)
		}

		// Inserts of whole rows run as text, their values in it.
		var inserts queryLog
		fdb.AddQueryHook(&inserts)
		if _, err := database.InsertRows(fdb, &pooledRow{ID: 3, V: "e"}, "").Exec(ctx); err != nil {
			t.Fatal(err)
		}
		err = database.RunInTx(ctx, fdb, func(ctx context.Context, tx bun.IDB) error {
			if err := database.ExecWithNext(ctx, tx, database.InsertRows(tx, &pooledRow{ID: 4, V: "e"}, "")); err != nil {
				return err
			}
			return pooledCount.Scan(ctx, tx, &n, "e")
		})
		if err != nil || n != 2 {
			t.Fatalf("rows inserted as text: %d, %v, want 2", n, err)
		}
		if got := inserts.matching("INSERT INTO"); len(got) != 1 || !strings.Contains(got[0], "(3, 'e')") {
			t.Errorf("the insert run alone: %q, want one, with its values in its text", got)
		}

		// A function dropped under the pool: the statements run as they
		// are.
		if _, err := fdb.ExecContext(ctx, "DO $$DECLARE f text; BEGIN FOR f IN SELECT oid::regprocedure::text FROM pg_proc WHERE proname LIKE 'tradekit_q_%' LOOP EXECUTE 'DROP FUNCTION ' || f; END LOOP; END$$"); err != nil {
			t.Fatal(err)
		}
		if err := pooledCount.Scan(ctx, fdb, &n, "c"); err != nil || n != 1 {
			t.Fatalf("read after its function was dropped: %d, %v", n, err)
		}
		if got := write("a", 1); got != 1 {
			t.Errorf("set 1 to a after its function was dropped: %d rows, want 1", got)
		}
		if err := pooledSwap.Scan(ctx, fdb, &old, "b", 2); err != nil || old != "c" {
			t.Errorf("swap of 2 after its function was dropped: %q, %v, want c", old, err)
		}
	})

	t.Run("LISTEN", func(t *testing.T) {
		for range 2 {
			if _, err := database.NewListener(ctx, db, "pooled_probe"); !errors.Is(err, database.ErrNoNotifications) {
				t.Fatalf("NewListener through the pooler: %v, want ErrNoNotifications", err)
			}
		}
		if got := strings.Count(log.String(), "notifications do not reach this process"); got != 1 {
			t.Errorf("the log told the polling %d times, want once:\n%s", got, log.String())
		}
		withListen, err := database.Open(ctx, pooled, database.Options{ListenDSN: direct})
		if err != nil {
			t.Fatal(err)
		}
		defer withListen.Close()
		l, err := database.NewListener(ctx, withListen, "pooled_probe")
		if err != nil {
			t.Fatalf("NewListener on ListenDSN: %v", err)
		}
		defer l.Close()
		if _, err := withListen.ExecContext(ctx, "NOTIFY pooled_probe, 'x'"); err != nil {
			t.Fatal(err)
		}
		if p, err := l.Receive(ctx); err != nil || p != "x" {
			t.Fatalf("Receive: %q, %v", p, err)
		}
	})

	t.Run("Migrate", func(t *testing.T) {
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range errs {
			wg.Go(func() {
				mdb, err := database.Open(ctx, pooled, database.Options{})
				if err != nil {
					errs[i] = err
					return
				}
				defer mdb.Close()
				_, errs[i] = database.Migrate(ctx, mdb)
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
	})
}

// pooledCount counts pooled_probe's rows of a value.
var pooledCount = database.NewPrepared("pooled_count", func(db bun.IDB, params ...any) schema.QueryAppender {
	return db.NewSelect().Table("pooled_probe").ColumnExpr("count(*)").Where("v = ?", params[0])
})

// pooledRow is a row of pooled_probe.
type pooledRow struct {
	bun.BaseModel `bun:"table:pooled_probe"`

	ID int    `bun:"id,pk"`
	V  string `bun:"v"`
}

// pooledSet sets the value of a pooled_probe row.
var pooledSet = database.NewPrepared("pooled_set", func(db bun.IDB, params ...any) schema.QueryAppender {
	return db.NewUpdate().Table("pooled_probe").Set("v = ?", params[0]).Where("id = ?", params[1])
})

// pooledSwap sets the value of a pooled_probe row and returns the one it
// had.
var pooledSwap = database.NewPrepared("pooled_swap", func(db bun.IDB, params ...any) schema.QueryAppender {
	return db.NewUpdate().TableExpr("pooled_probe AS p").Set("v = ?", params[0]).
		TableExpr("(SELECT id, v FROM pooled_probe) AS old").Where("p.id = ?", params[1]).Where("old.id = p.id").
		Returning("old.v")
})

// queryLog is a bun query hook that keeps the text of every query.
type queryLog struct {
	mu      sync.Mutex
	queries []string
}

// BeforeQuery implements bun.QueryHook.
func (l *queryLog) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context { return ctx }

// AfterQuery implements bun.QueryHook.
func (l *queryLog) AfterQuery(_ context.Context, e *bun.QueryEvent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.queries = append(l.queries, e.Query)
}

// matching returns the queries that begin with prefix.
func (l *queryLog) matching(prefix string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, q := range l.queries {
		if strings.HasPrefix(q, prefix) {
			out = append(out, q)
		}
	}
	return out
}

// lockedBuffer is a bytes.Buffer for concurrent writers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
