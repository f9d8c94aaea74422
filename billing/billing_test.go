package billing_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/billing"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/internal/testkit"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// mustUser creates a user on the given plan.
func mustUser(tb testing.TB, db bun.IDB, email, plan string) billing.User {
	tb.Helper()
	ctx := context.Background()
	st := billing.NewStore(db)
	p, err := st.Plan(ctx, plan)
	if err != nil {
		tb.Fatal(err)
	}
	u := billing.User{Email: email, Name: "Test", PlanID: p.ID}
	if err := st.CreateUser(ctx, &u, time.Now()); err != nil {
		tb.Fatal(err)
	}
	return u
}

func TestPlans(t *testing.T) {
	t.Parallel()
	type row struct {
		Slug, Currency, Interval string
		Price                    decimal.Decimal
		Features                 billing.Features
	}
	// The free and pro rows are section 8 of the API spec, plus the
	// backtest bounds (docs/security.md, docs/conventions.md "Limits").
	want := []row{
		{"free", "USD", "month", decimal.RequireFromString("0"), billing.Features{APIRequestsPerDay: 1000, APIRequestsPerMinute: 30, Watchlists: 1, Portfolios: 1, Alerts: 5,
			FormulaCost: 2000, Backtests: 10, BacktestRuns: 1}},
		{"pro", "USD", "month", decimal.RequireFromString("29"), billing.Features{APIRequestsPerDay: 10000, APIRequestsPerMinute: 120, Watchlists: 10, Portfolios: 5, Alerts: 50,
			FormulaCost: 50000, Backtests: 100, BacktestRuns: 2}},
		{"business", "USD", "month", decimal.RequireFromString("99"), billing.Features{APIRequestsPerDay: 100000, APIRequestsPerMinute: 600, Watchlists: 50, Portfolios: 25, Alerts: 500,
			FormulaCost: 200000, Backtests: 1000, BacktestRuns: 4}},
	}
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		plans, err := billing.NewStore(db).Plans(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var got []row
		for _, p := range plans {
			got = append(got, row{p.Slug, p.Currency, p.Interval, p.Price, p.Features})
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Plans() mismatch (-want +got):\n%s", diff)
		}
		if _, err := billing.NewStore(db).Plan(context.Background(), "gold"); !errors.Is(err, tradekit.ErrNotFound) {
			t.Errorf("Plan(gold) error = %v, want ErrNotFound", err)
		}
	})
}

func TestCreateUserConflict(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustUser(t, db, "Ann@Example.com", "free")
		st := billing.NewStore(db)
		u := billing.User{Email: " ann@example.COM", Name: "Again", PlanID: uuid.MustParse("5b0c3f4e-2f43-4d36-9a5c-000000000001")}
		if err := st.CreateUser(context.Background(), &u, time.Now()); !errors.Is(err, tradekit.ErrConflict) {
			t.Errorf("CreateUser with a taken email: error = %v, want ErrConflict", err)
		}
		got, err := st.UserByEmail(context.Background(), "ANN@example.com")
		if err != nil || got.Email != "ann@example.com" {
			t.Errorf("UserByEmail = %+v, %v", got, err)
		}
	})
}

func TestKeys(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		u := mustUser(t, db, "keys@example.com", "pro")
		st := billing.NewStore(db)
		k, full, err := st.CreateKey(ctx, u.ID, "ci", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(full, "tk_") || len(full) != 43 {
			t.Errorf("key %q: want tk_ and 40 characters", full)
		}
		if !strings.HasPrefix(full, k.Prefix) || strings.Contains(k.Hash, full[3:]) {
			t.Errorf("stored key %+v does not fit %q", k, full)
		}
		if k.Hash != billing.HashKey(full) {
			t.Error("stored hash is not the hash of the key")
		}

		auth := billing.NewAuthenticator(db, billing.AuthConfig{})
		p, err := auth.Authenticate(ctx, full, "")
		if err != nil {
			t.Fatal(err)
		}
		if p.UserID != u.ID || p.KeyID != k.ID || p.Plan.Slug != "pro" {
			t.Errorf("Authenticate = %+v", p)
		}
		for _, bad := range []string{"", "tk_", full[:len(full)-1], full[:len(full)-1] + "a", "Bearer " + full, strings.ToUpper(full)} {
			if bad == full {
				continue
			}
			if _, err := auth.Authenticate(ctx, bad, ""); !errors.Is(err, tradekit.ErrUnauthorized) {
				t.Errorf("Authenticate(%q) error = %v, want ErrUnauthorized", bad, err)
			}
		}

		if err := auth.Revoke(ctx, k.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := auth.Authenticate(ctx, full, ""); !errors.Is(err, tradekit.ErrUnauthorized) {
			t.Errorf("revoked key: error = %v, want ErrUnauthorized", err)
		}
		keys, err := st.Keys(ctx, u.ID)
		if err != nil || len(keys) != 1 || !keys[0].IsRevoked() {
			t.Errorf("Keys after revoke = %+v, %v; want the one key, revoked", keys, err)
		}
		if err := auth.Revoke(ctx, uuid.New()); !errors.Is(err, tradekit.ErrNotFound) {
			t.Errorf("Revoke(unknown) error = %v, want ErrNotFound", err)
		}
	})
}

// TestFailureBudgetIsPerAddress checks that failed authentications
// throttle only the address they come from: while one address is refused,
// a valid key that no one used yet works from another, and so it does
// after more addresses than the Authenticator counts apart (10,000) have
// failed, which once made every new address share one spent count.
func TestFailureBudgetIsPerAddress(t *testing.T) {
	t.Parallel()
	db := dbtest.SQLite(t)
	ctx := context.Background()
	u := mustUser(t, db, "budget@example.com", "pro")
	fresh := func() string { // a valid key not cached yet
		t.Helper()
		_, full, err := billing.NewStore(db).CreateKey(ctx, u.ID, "k", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return full
	}
	// The budget is per UTC minute: start well inside one.
	if left := time.Until(time.Now().Truncate(time.Minute).Add(time.Minute)); left < 5*time.Second {
		time.Sleep(left) // not a wait: the budget's minute is real time, so skip to the next one
	}
	auth := billing.NewAuthenticator(db, billing.AuthConfig{FailuresPerMinute: 3})
	const attacker, user = "203.0.113.7", "198.51.100.2"
	for range 3 {
		auth.Authenticate(ctx, "tk_malformed", attacker)
	}
	var te *billing.ThrottledError
	if _, err := auth.Authenticate(ctx, fresh(), attacker); !errors.As(err, &te) {
		t.Errorf("a valid key from the throttled address: %v, want a ThrottledError", err)
	}
	if _, err := auth.Authenticate(ctx, fresh(), user); err != nil {
		t.Errorf("a valid key from another address: %v", err)
	}
	for i := range 10_000 + 50 { // malformed keys: no lookups
		auth.Authenticate(ctx, "tk_malformed", fmt.Sprintf("10.%d.%d.%d", i>>16, i>>8&255, i&255))
	}
	if _, err := auth.Authenticate(ctx, fresh(), "192.0.2.1"); err != nil {
		t.Errorf("a valid key from a new address after a flood from 10,050 addresses: %v", err)
	}
}

// TestRevokeRevoked checks that revoking a revoked key is a conflict that
// changes nothing and tells since when the key is revoked.
func TestRevokeRevoked(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		u := mustUser(t, db, "twice@example.com", "free")
		st := billing.NewStore(db)
		created, revoked := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC), time.Date(2030, 2, 3, 4, 5, 6, 789000, time.UTC)
		k, _, err := st.CreateKey(ctx, u.ID, "x", created)
		if err != nil {
			t.Fatal(err)
		}
		first, err := st.RevokeKey(ctx, k.ID, revoked)
		if err != nil || first.RevokedAt == nil || !first.RevokedAt.Equal(revoked) {
			t.Fatalf("first RevokeKey = %+v, %v; want it revoked at the clock's %s", first, err, revoked)
		}
		if keys, _ := st.Keys(ctx, u.ID); len(keys) != 1 || !keys[0].CreatedAt.Equal(created) {
			t.Fatalf("keys %+v, want one created at the clock's %s", keys, created)
		}
		again, err := st.RevokeKey(ctx, k.ID, time.Now())
		if !errors.Is(err, tradekit.ErrConflict) {
			t.Errorf("second RevokeKey error = %v, want ErrConflict", err)
		}
		if again.ID != k.ID || again.RevokedAt == nil || !again.RevokedAt.Equal(*first.RevokedAt) {
			t.Errorf("second RevokeKey returned %+v, want the key revoked at %v", again, first.RevokedAt)
		}
		if err := billing.NewAuthenticator(db, billing.AuthConfig{}).Revoke(ctx, k.ID); !errors.Is(err, tradekit.ErrConflict) {
			t.Errorf("Authenticator.Revoke of a revoked key: error = %v, want ErrConflict", err)
		}
		keys, _ := st.Keys(ctx, u.ID)
		if len(keys) != 1 || keys[0].RevokedAt == nil || !keys[0].RevokedAt.Equal(*first.RevokedAt) {
			t.Errorf("after revoking twice: %+v, want the first revocation time kept", keys)
		}
	})
}

// flush writes the last-used times a holds, as its Run does on return.
func flush(a *billing.Authenticator) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	a.Run(ctx)
}

// TestLastUsed checks that a key's last-used time is that of its last
// accepted request, not that of the write that records it, and that an
// instance writing an older time does not move it back.
func TestLastUsed(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		u := mustUser(t, db, "used@example.com", "free")
		st := billing.NewStore(db)
		k, full, err := st.CreateKey(ctx, u.ID, "x", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		lastUsed := func() time.Time {
			t.Helper()
			keys, err := st.Keys(ctx, u.ID)
			if err != nil || len(keys) != 1 || keys[0].LastUsedAt == nil {
				t.Fatalf("Keys = %+v, %v; want the key with a last-used time", keys, err)
			}
			return *keys[0].LastUsedAt
		}
		t0 := time.Date(2026, 3, 2, 15, 0, 0, 0, time.UTC)
		clk := testkit.NewClock(t0)
		cfg := billing.AuthConfig{TouchInterval: time.Hour, Now: clk.Now}
		older, newer := billing.NewAuthenticator(db, cfg), billing.NewAuthenticator(db, cfg)

		if _, err := older.Authenticate(ctx, full, ""); err != nil { // a miss: read from the database
			t.Fatal(err)
		}
		for range 2 { // the second is a cache hit
			clk.Add(time.Minute)
			if _, err := newer.Authenticate(ctx, full, ""); err != nil {
				t.Fatal(err)
			}
		}
		clk.Add(time.Hour) // the writes come well after the requests
		flush(newer)
		if got, want := lastUsed(), t0.Add(2*time.Minute); !got.Equal(want) {
			t.Errorf("last used %v, want the time of the last request, %v", got.UTC(), want)
		}
		flush(older) // holds an earlier request
		if got, want := lastUsed(), t0.Add(2*time.Minute); !got.Equal(want) {
			t.Errorf("an instance with an older request moved last used from %v to %v", want, got.UTC())
		}
		if k.LastUsedAt != nil {
			t.Errorf("a new key has last used %v", k.LastUsedAt)
		}
	})
}

// TestRevocationReachesOtherInstances revokes a key through one
// Authenticator and checks that another, which had it cached, refuses it
// after its next poll.
func TestRevocationReachesOtherInstances(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		u := mustUser(t, db, "two@example.com", "free")
		k, full, err := billing.NewStore(db).CreateKey(ctx, u.ID, "x", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		a, b := billing.NewAuthenticator(db, billing.AuthConfig{}), billing.NewAuthenticator(db, billing.AuthConfig{})
		if _, err := b.Authenticate(ctx, full, ""); err != nil {
			t.Fatal(err)
		}
		if err := a.Revoke(ctx, k.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Authenticate(ctx, full, ""); err != nil {
			t.Fatalf("before its poll, b still trusts its cache: %v", err)
		}
		if err := b.Poll(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Authenticate(ctx, full, ""); !errors.Is(err, tradekit.ErrUnauthorized) {
			t.Errorf("after its poll, b: error = %v, want ErrUnauthorized", err)
		}
	})
}

// TestStaleCacheIsNotTrusted checks that an Authenticator that cannot poll
// stops trusting its cache after MaxStaleness.
func TestStaleCacheIsNotTrusted(t *testing.T) {
	t.Parallel()
	db := dbtest.SQLite(t)
	ctx := context.Background()
	u := mustUser(t, db, "stale@example.com", "free")
	k, full, err := billing.NewStore(db).CreateKey(ctx, u.ID, "x", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	a := billing.NewAuthenticator(db, billing.AuthConfig{MaxStaleness: 50 * time.Millisecond})
	if _, err := a.Authenticate(ctx, full, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := billing.NewStore(db).RevokeKey(ctx, k.ID, time.Now()); err != nil { // elsewhere
		t.Fatal(err)
	}
	// The cache's age is real time: a bounded sleep past MaxStaleness, in
	// which no poll runs.
	time.Sleep(60 * time.Millisecond)
	if _, err := a.Authenticate(ctx, full, ""); !errors.Is(err, tradekit.ErrUnauthorized) {
		t.Errorf("stale cache: error = %v, want ErrUnauthorized", err)
	}
}

func TestConsume(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		st := billing.NewStore(db)
		u := mustUser(t, db, "limits@example.com", "free")
		lim := billing.Limits{PerMinute: 30, PerDay: 1000}
		now := time.Date(2026, 11, 22, 10, 15, 20, 0, time.UTC)
		for i := 1; i <= 30; i++ {
			use, err := st.Consume(ctx, u.ID, lim, now)
			if err != nil {
				t.Fatal(err)
			}
			if !use.Allowed || use.Limit != 30 || use.Remaining != 30-i {
				t.Fatalf("request %d: %+v", i, use)
			}
		}
		use, err := st.Consume(ctx, u.ID, lim, now.Add(30*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		want := billing.Usage{Window: "minute", Limit: 30, Remaining: 0, Reset: now.Truncate(time.Minute).Add(time.Minute), RetryAfter: 10 * time.Second}
		if diff := cmp.Diff(want, use); diff != "" {
			t.Errorf("31st request (-want +got):\n%s", diff)
		}
		// The next minute is a new window; the refused request was not
		// counted against the day.
		use, err = st.Consume(ctx, u.ID, lim, now.Add(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if !use.Allowed || use.Remaining != 29 {
			t.Errorf("next minute: %+v", use)
		}
		// Day limit: the tighter window is reported.
		tight := billing.Limits{PerMinute: 30, PerDay: 32}
		use, _ = st.Consume(ctx, u.ID, tight, now.Add(time.Minute))
		if use.Limit != 32 || use.Remaining != 0 || !use.Allowed {
			t.Errorf("day nearly spent: %+v", use)
		}
		use, _ = st.Consume(ctx, u.ID, tight, now.Add(2*time.Minute))
		if use.Allowed || use.Window != "day" || use.Limit != 32 || use.RetryAfter != 13*time.Hour+42*time.Minute+40*time.Second {
			t.Errorf("day spent: %+v", use)
		}
		if err := st.PruneCounters(ctx, now.Add(48*time.Hour)); err != nil {
			t.Fatal(err)
		}
	})
}
