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

// mustMigration runs the statements of the migration file name of db's
// dialect again, outside a transaction, as the tests of a migration that
// must keep rows do.
func mustMigration(t *testing.T, db *bun.DB, name string) {
	t.Helper()
	dir := "sqlite"
	if db.Dialect().Name() == dialect.PG {
		dir = "postgres"
	}
	src, err := os.ReadFile("migrations/" + dir + "/" + name)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range strings.Split(string(src), "--bun:split") {
		if _, err := db.ExecContext(context.Background(), stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
}

// copyRows stores a user with a connection and a portfolio, and returns
// a function that stores a leader profile of it (published or not) and
// one that stores a follow of a profile.
func copyRows(t *testing.T, db *bun.DB) (profile func(published bool) uuid.UUID, follow func(profile uuid.UUID, autoSync bool, reason string, unfollowed bool) uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	mustExec := func(query string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(ctx, query, args...); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
	}
	var planID uuid.UUID
	if err := db.NewRaw("SELECT id FROM plans WHERE slug = 'free'").Scan(ctx, &planID); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	user, conn, portfolio := uuid.New(), uuid.New(), uuid.New()
	mustExec("INSERT INTO users (id, account_id, email, name, plan_id, created_at) VALUES (?, ?, ?, 'x', ?, ?)", user, user, user.String()+"@example.com", planID, t0)
	mustExec("INSERT INTO broker_connections (id, user_id, provider, status, redirect_url, created_at, updated_at) VALUES (?, ?, 'paper', 'active', 'https://x.example/', ?, ?)",
		conn, user, t0, t0)
	mustExec("INSERT INTO portfolios (id, user_id, connection_id, currency, cash, equity, updated_at) VALUES (?, ?, ?, 'USD', '0', '0', ?)", portfolio, user, conn, t0)
	n := 0
	profile = func(published bool) uuid.UUID {
		t.Helper()
		n++
		id := uuid.New()
		var unpublished *time.Time
		if !published {
			unpublished = &t0
		}
		mustExec(`INSERT INTO leader_profiles (id, user_id, portfolio_id, slug, display_name, published_at, unpublished_at,
			total_return, sharpe_ratio, max_drawdown, stats_at) VALUES (?, ?, ?, ?, 'L', ?, ?, 0.1, 1.5, -0.2, ?)`,
			id, user, portfolio, "slug-"+id.String()[:8], t0, unpublished, t0)
		return id
	}
	follow = func(profile uuid.UUID, autoSync bool, reason string, unfollowed bool) uuid.UUID {
		t.Helper()
		id, follower := uuid.New(), uuid.New()
		mustExec("INSERT INTO users (id, account_id, email, name, plan_id, created_at) VALUES (?, ?, ?, 'x', ?, ?)",
			follower, follower, follower.String()+"@example.com", planID, t0)
		var ended *time.Time
		if unfollowed {
			ended = &t0
		}
		mustExec(`INSERT INTO follows (id, user_id, leader_profile_id, auto_sync, notifications, allocation_pct, scaling_pct,
			max_position_pct, copy_stop_loss_pct, followed_at, copy_since, updated_at, unfollowed_at, stopped_reason)
			VALUES (?, ?, ?, ?, TRUE, '10', '100', '25', '20', ?, ?, ?, ?, ?)`, id, follower, profile, autoSync, t0, t0, t0, ended, reason)
		return id
	}
	return profile, follow
}

// TestLeaderFiguresMigration checks that the migration making a leader's
// Sharpe ratio and drawdown nullable keeps the profiles and the follows
// that refer to them, accepts NULL, and has every profile's figures
// computed again.
func TestLeaderFiguresMigration(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		profile, follow := copyRows(t, db)
		p := profile(true)
		f := follow(p, true, "", false)
		mustMigration(t, db, "20261127200000_leader_figures.tx.up.sql")
		var row struct {
			TotalReturn float64    `bun:"total_return"`
			SharpeRatio *float64   `bun:"sharpe_ratio"`
			MaxDrawdown *float64   `bun:"max_drawdown"`
			StatsAt     *time.Time `bun:"stats_at"`
		}
		if err := db.NewRaw("SELECT total_return, sharpe_ratio, max_drawdown, stats_at FROM leader_profiles WHERE id = ?", p).Scan(ctx, &row); err != nil {
			t.Fatal(err)
		}
		if row.TotalReturn != 0.1 || row.StatsAt != nil {
			t.Errorf("profile after the migration: %+v, want its total return kept and no stats_at", row)
		}
		if _, err := db.ExecContext(ctx, "UPDATE leader_profiles SET sharpe_ratio = NULL, max_drawdown = NULL WHERE id = ?", p); err != nil {
			t.Errorf("NULL figures refused: %v", err)
		}
		var leader uuid.UUID
		if err := db.NewRaw("SELECT leader_profile_id FROM follows WHERE id = ?", f).Scan(ctx, &leader); err != nil || leader != p {
			t.Errorf("the follow's leader after the migration: %v, %v", leader, err)
		}
		if db.Dialect().Name() == dialect.SQLite {
			var broken []map[string]any
			if err := db.NewRaw("PRAGMA foreign_key_check").Scan(ctx, &broken); err != nil || len(broken) != 0 {
				t.Errorf("foreign key check: %v, %v", broken, err)
			}
		}
	})
}

// TestUnpublishedFollowsMigration checks that the live follows of
// unpublished leaders stop with the reason, whatever their auto-sync or
// earlier reason, and that no other follow changes.
func TestUnpublishedFollowsMigration(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		profile, follow := copyRows(t, db)
		live, gone := profile(true), profile(false)
		ids := []uuid.UUID{
			follow(live, true, "", false),                     // a published leader's: untouched
			follow(gone, false, "", false),                    // notifications only, no reason
			follow(gone, true, "", false),                     // auto-sync left on
			follow(gone, false, "the copies lost 25%", false), // stopped by the stop-loss before
			follow(gone, false, "", true),                     // unfollowed: untouched
		}
		mustMigration(t, db, "20261127200100_unpublished_follows.tx.up.sql")
		type state struct {
			AutoSync bool   `bun:"auto_sync"`
			Reason   string `bun:"stopped_reason"`
		}
		const stopped = "the leader unpublished the profile"
		want := []state{{true, ""}, {false, stopped}, {false, stopped}, {false, stopped}, {false, ""}}
		var got []state
		for _, id := range ids {
			var s state
			if err := db.NewRaw("SELECT auto_sync, stopped_reason FROM follows WHERE id = ?", id).Scan(ctx, &s); err != nil {
				t.Fatal(err)
			}
			got = append(got, s)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("follows after the migration (-want +got):\n%s", diff)
		}
	})
}
