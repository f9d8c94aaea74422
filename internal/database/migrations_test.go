package database_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/tradekit/tradekit/internal/dbtest"
)

// TestCustomIndicatorNamesMigration checks that the migration making
// custom indicator names unique per user keeps every indicator: of names
// an older version let repeat, the oldest keeps its name and the others
// get their id's first 8 characters appended.
func TestCustomIndicatorNamesMigration(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		dir := "sqlite"
		if db.Dialect().Name() == dialect.PG {
			dir = "postgres"
		}
		src, err := os.ReadFile("migrations/" + dir + "/20261123000001_custom_indicator_names.tx.up.sql")
		if err != nil {
			t.Fatal(err)
		}
		mustExec := func(query string, args ...any) {
			t.Helper()
			if _, err := db.ExecContext(ctx, query, args...); err != nil {
				t.Fatalf("%s: %v", query, err)
			}
		}
		// The database as an older version left it: no unique index.
		mustExec("DROP INDEX custom_indicators_name_idx")
		var planID uuid.UUID
		if err := db.NewRaw("SELECT id FROM plans WHERE slug = 'free'").Scan(ctx, &planID); err != nil {
			t.Fatal(err)
		}
		alice, bob := uuid.New(), uuid.New()
		for _, u := range []uuid.UUID{alice, bob} {
			mustExec("INSERT INTO users (id, account_id, email, name, plan_id, created_at) VALUES (?, ?, ?, 'x', ?, ?)", u, u, u.String()+"@example.com", planID, time.Now())
		}
		t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		ids := []uuid.UUID{
			uuid.MustParse("a0000000-0000-4000-8000-000000000001"), // alice's first Trend: keeps its name
			uuid.MustParse("b0000000-0000-4000-8000-000000000002"), // alice's second Trend
			uuid.MustParse("c0000000-0000-4000-8000-000000000003"), // alice's deleted Trend: untouched
			uuid.MustParse("d0000000-0000-4000-8000-000000000004"), // bob's Trend: another user's
		}
		for i, row := range []struct {
			user    uuid.UUID
			deleted bool
		}{{alice, false}, {alice, false}, {alice, true}, {bob, false}} {
			var deleted *time.Time
			if row.deleted {
				deleted = &t0
			}
			mustExec("INSERT INTO custom_indicators (id, user_id, name, formula, created_at, updated_at, deleted_at) VALUES (?, ?, 'Trend', 'close', ?, ?, ?)",
				ids[i], row.user, t0.Add(time.Duration(i)*time.Hour), t0, deleted)
		}
		for _, stmt := range strings.Split(string(src), "--bun:split") {
			mustExec(stmt)
		}
		var names []string
		if err := db.NewRaw("SELECT name FROM custom_indicators ORDER BY id").Scan(ctx, &names); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"Trend", "Trend (b0000000)", "Trend", "Trend"}, names); diff != "" {
			t.Errorf("names after the migration (-want +got):\n%s", diff)
		}
		if _, err := db.ExecContext(ctx, "INSERT INTO custom_indicators (id, user_id, name, formula, created_at, updated_at) VALUES (?, ?, 'Trend', 'close', ?, ?)",
			uuid.New(), alice, t0, t0); err == nil {
			t.Error("a second Trend for alice was stored after the migration")
		}
	})
}
