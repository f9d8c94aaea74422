package dbcopy

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/alerts"
	"github.com/tradekit/tradekit/billing"
	"github.com/tradekit/tradekit/brokers/connect"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/copytrading"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/internal/seal"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/marketdata/demo"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// testKey is the key the test data's secrets are sealed with.
var testKey = []byte("0123456789abcdef0123456789abcdef")

// mustSeed loads a short demo data set into db: a few months of prices
// for every demo asset, with the demo leaders and their trades.
func mustSeed(tb testing.TB, db *bun.DB, start calendar.Date) {
	tb.Helper()
	ctx := context.Background()
	set, err := demo.Generate(demo.Config{Start: start})
	if err != nil {
		tb.Fatal(err)
	}
	if err := marketdata.InConnTx(ctx, db, func(ctx context.Context, st *marketdata.Store) error {
		return demo.Load(ctx, st, set)
	}); err != nil {
		tb.Fatal(err)
	}
	st := billing.NewStore(db)
	plan, err := st.Plan(ctx, "free")
	if err != nil {
		tb.Fatal(err)
	}
	var users []uuid.UUID
	for _, l := range copytrading.DemoLeaders {
		u := billing.User{Email: l.Slug + "@demo.tradekit.example", Name: l.DisplayName, PlanID: plan.ID}
		if err := st.CreateUser(ctx, &u, time.Now()); err != nil {
			tb.Fatal(err)
		}
		users = append(users, u.ID)
	}
	if err := copytrading.LoadDemoLeaders(ctx, db, users, time.Now()); err != nil {
		tb.Fatal(err)
	}
}

// mustFill adds a row to every table of db that holds none, in an order
// that satisfies the foreign keys: each reference names a row of the
// referenced table, each other column holds a value made to trip a copy
// (quotes, backslashes, a '?', a NUL-free multi-byte text; the extremes
// of NUMERIC(38, 18), of the integers and of float64; bytes of every
// kind; microseconds). The sealed columns hold values sealed with
// testKey, and one demo broker connection gets sealed tokens. The kind of
// each column (a UUID, a decimal or a date in a SQLite TEXT) is read from
// the catalog of pg, a PostgreSQL database of the same schema.
func mustFill(tb testing.TB, db, pg *bun.DB) {
	tb.Helper()
	ctx := context.Background()
	cat, err := inspect(ctx, db)
	if err != nil {
		tb.Fatal(err)
	}
	pgCat, err := inspect(ctx, pg)
	if err != nil {
		tb.Fatal(err)
	}
	tables, err := plan(cat, pgCat, db.Dialect().Name(), pg.Dialect().Name())
	if err != nil {
		tb.Fatal(err)
	}
	sealer, err := seal.New(testKey)
	if err != nil {
		tb.Fatal(err)
	}
	for _, t := range tables {
		var n int
		if err := db.NewRaw("SELECT count(*) FROM ?", bun.Ident(t.name)).Scan(ctx, &n); err != nil {
			tb.Fatal(err)
		}
		if n > 0 {
			continue
		}
		row := map[string]any{}
		for _, c := range t.cols {
			row[c.name] = testValue(c)
		}
		for _, fk := range t.fks {
			for i, col := range fk.cols {
				var v any
				if err := db.NewRaw("SELECT ? FROM ? LIMIT 1", bun.Ident(fk.refs[i]), bun.Ident(fk.ref)).Scan(ctx, &v); err != nil {
					tb.Fatalf("%s.%s: a row of %s: %v", t.name, col, fk.ref, err)
				}
				row[col] = v
			}
		}
		switch t.name { // the CHECK constraints of the tables
		case "paper_tokens":
			row["kind"] = "refresh"
		case "index_constituents":
			row["valid_to"] = nil
		case "corporate_actions":
			row["kind"] = "split"
		case "industries":
			row["level"] = "sector"
		}
		for _, sc := range sealedColumns() {
			if sc.Table == t.name {
				row[sc.Column] = sealer.Seal("the secret of "+t.name, sc.Prefix+fmt.Sprint(row[sc.ContextColumn]))
			}
		}
		if _, err := db.NewInsert().Model(&row).ModelTableExpr("?", bun.Ident(t.name)).Exec(ctx); err != nil {
			tb.Fatalf("fill %s: %v", t.name, err)
		}
	}
	var id string
	if err := db.NewRaw("SELECT id FROM broker_connections LIMIT 1").Scan(ctx, &id); err != nil {
		tb.Fatal(err)
	}
	if _, err := db.NewRaw("UPDATE broker_connections SET access_token = ?, refresh_token = ? WHERE id = ?",
		sealer.Seal("access token", "access:"+id), sealer.Seal("refresh token", "refresh:"+id), id).Exec(ctx); err != nil {
		tb.Fatal(err)
	}
}

// sealedColumns are the sealed columns of the schema, as the packages
// that own them declare.
func sealedColumns() []seal.Column {
	return append(connect.SealedColumns(), alerts.SealedColumns()...)
}

// testValue returns a value for the column c, by its kind and type.
func testValue(c column) any {
	switch c.kind {
	case kindUUID:
		return uuid.NewString()
	case kindDate:
		return "2024-02-29"
	case kindDecimal:
		return "-12345678901234567890.123456789012345678" // NUMERIC(38, 18) at its widest
	case kindInt:
		if c.dstType == "bigint" {
			return int64(math.MinInt64 + 1)
		}
		return int64(math.MaxInt32)
	case kindFloat:
		return -1.0 / 3 * 1e-300
	case kindBool:
		return true
	case kindTime:
		return time.Date(2026, 3, 4, 5, 6, 7, 123456000, time.UTC)
	case kindBytes:
		return []byte{0, 1, '\'', '\\', 0xff, 'x'}
	}
	return "it's a \"test\" \\ ? ✓ \n" + c.name // quoting, and bun's placeholder
}

// dump returns every row of every table of the SQLite database db, but
// bun's bookkeeping, each as the SQL literals of its values (quote()),
// which tell the storage classes apart: the rows of each table sorted.
func dump(tb testing.TB, db *bun.DB) map[string][]string {
	tb.Helper()
	ctx := context.Background()
	cat, err := inspectSQLite(ctx, db)
	if err != nil {
		tb.Fatal(err)
	}
	out := map[string][]string{}
	for name, t := range cat {
		var exprs []string
		for _, c := range t.cols {
			exprs = append(exprs, fmt.Sprintf("quote(%q)", c.name))
		}
		var rows []string
		if err := db.NewRaw(fmt.Sprintf("SELECT %s FROM %q", strings.Join(exprs, " || '|' || "), name)).Scan(ctx, &rows); err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
		slices.Sort(rows)
		out[name] = rows
	}
	return out
}

// TestCopyRoundTrip copies a SQLite database holding a row in every
// table to PostgreSQL and from there to a new SQLite database, which
// must hold exactly the rows of the first, value for value and storage
// class for class.
func TestCopyRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src, pg := dbtest.SQLite(t), dbtest.Postgres(t)
	mustSeed(t, src, calendar.NewDate(2026, 6, 1))
	mustFill(t, src, pg)
	want := dump(t, src)
	for name, rows := range want {
		if len(rows) == 0 {
			t.Errorf("the source's table %s is empty: the round trip would not check it", name)
		}
	}

	res, err := Copy(ctx, src, pg, Options{BatchBytes: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tables) != len(want) {
		t.Errorf("copied %d tables, want %d", len(res.Tables), len(want))
	}
	back := dbtest.SQLite(t)
	res2, err := Copy(ctx, pg, back, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(res, res2); diff != "" {
		t.Errorf("the two copies' results differ (-to PostgreSQL +back):\n%s", diff)
	}
	if diff := cmp.Diff(want, dump(t, back)); diff != "" {
		t.Errorf("the round trip changed rows (-source +round trip):\n%s", diff)
	}

	// Sealed values travel as they are, and still open.
	s, found, err := FindSealed(ctx, back, sealedColumns())
	if err != nil || !found || !s.Opens(testKey) {
		t.Errorf("FindSealed after the round trip = %+v, %v, %v; want a value testKey opens", s, found, err)
	}

	// The target now holds rows: a second copy is refused, naming a table.
	_, err = Copy(ctx, src, pg, Options{})
	if !errors.Is(err, ErrNotEmpty) || !errors.Is(err, tradekit.ErrConflict) || !strings.Contains(tradekit.Message(err), "the table ") {
		t.Errorf("a copy into a full target: %v, want ErrNotEmpty naming a table", err)
	}
}

// TestCopyInterrupted cancels a copy after its first statement: the
// target must be left as it was, holding only what its migrations
// inserted.
func TestCopyInterrupted(t *testing.T) {
	t.Parallel()
	src := dbtest.SQLite(t)
	mustSeed(t, src, calendar.NewDate(2026, 9, 1))
	dbtest.Each(t, func(t *testing.T, dst *bun.DB) {
		before := counts(t, dst)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		calls := 0
		_, err := Copy(ctx, src, dst, Options{BatchBytes: 4 << 10, Progress: func(Progress) {
			calls++
			cancel()
		}})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Copy cancelled = %v, want context.Canceled", err)
		}
		if calls == 0 {
			t.Fatal("no statement ran before the cancel")
		}
		if diff := cmp.Diff(before, counts(t, dst)); diff != "" {
			t.Errorf("an interrupted copy changed the target's row counts (-before +after):\n%s", diff)
		}
	})
}

// counts returns the number of rows of each table of db, bun's
// bookkeeping aside.
func counts(tb testing.TB, db *bun.DB) map[string]int {
	tb.Helper()
	ctx := context.Background()
	cat, err := inspect(ctx, db)
	if err != nil {
		tb.Fatal(err)
	}
	out := map[string]int{}
	for name := range cat {
		var n int
		if err := db.NewRaw("SELECT count(*) FROM ?", bun.Ident(name)).Scan(ctx, &n); err != nil {
			tb.Fatal(err)
		}
		out[name] = n
	}
	return out
}

// TestCopySchemaMismatch checks that a column in one database only, and a
// source with migrations missing, are refused before anything is written,
// naming the column.
func TestCopySchemaMismatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbtest.EachDSN(t, func(t *testing.T, dsn string) {
		src := dbtest.SQLite(t)
		dst := dbtest.MustOpen(t, dsn)
		if _, err := dst.ExecContext(ctx, "ALTER TABLE users ADD COLUMN nickname TEXT"); err != nil {
			t.Fatal(err)
		}
		_, err := Copy(ctx, src, dst, Options{})
		if !errors.Is(err, ErrSchema) || !strings.Contains(err.Error(), "users.nickname is in the target only") {
			t.Errorf("Copy with an extra column = %v, want ErrSchema naming users.nickname", err)
		}
		if _, err := src.ExecContext(ctx, "DELETE FROM bun_migrations WHERE id = (SELECT max(id) FROM bun_migrations)"); err != nil {
			t.Fatal(err)
		}
		_, err = Copy(ctx, src, dst, Options{})
		if !errors.Is(err, ErrSchema) || !strings.Contains(err.Error(), "the source lacks 1 migrations") {
			t.Errorf("Copy from a source a migration behind = %v, want ErrSchema", err)
		}
	})
}

// TestPlainDecimal checks plainDecimal against decimal.Decimal's String.
func TestPlainDecimal(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"0", "-0", "0.0", "-0.000", "1", "10", "100.00", "1.50", "-1.500", "0.000000000000000001",
		"12345678901234567890.123456789012345678", "-12345678901234567890.123456789012345678", "24.900000000000000000"} {
		got, ok := plainDecimal(s)
		if want := decimal.RequireFromString(s).String(); !ok || got != want {
			t.Errorf("plainDecimal(%q) = %q, %v; want %q, true", s, got, ok, want)
		}
	}
	for _, s := range []string{"", "-", "01", "1.", ".5", "1e5", "+1", "1.2.3", " 1", "1,5"} {
		if got, ok := plainDecimal(s); ok {
			t.Errorf("plainDecimal(%q) = %q, true; want false (not plain)", s, got)
		}
	}
}
