package backtestdb

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/backtest"
	"github.com/tradekit/tradekit/billing"
	"github.com/tradekit/tradekit/internal/dbtest"
)

// mustUser stores a user on the free plan, alone in their account, and
// returns their id.
func mustUser(tb testing.TB, db bun.IDB) uuid.UUID {
	tb.Helper()
	ctx := context.Background()
	st := billing.NewStore(db)
	p, err := st.Plan(ctx, billing.FreePlan)
	if err != nil {
		tb.Fatal(err)
	}
	u := billing.User{Email: uuid.NewString() + "@example.com", Name: "Test", PlanID: p.ID}
	if err := st.CreateUser(ctx, &u, time.Now()); err != nil {
		tb.Fatal(err)
	}
	return u.ID
}

// TestStore checks that a user keeps one result per strategy hash, which
// a rerun replaces, and that only its owner reads and deletes it.
func TestStore(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		st := NewStore(db)
		owner, other := mustUser(t, db), mustUser(t, db)
		t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
		first := Record{UserID: owner, StrategyHash: "h1", Document: `{"run":1}`, CreatedAt: t0}
		rerun := Record{UserID: owner, StrategyHash: "h1", Document: `{"run":2}`, CreatedAt: t0.Add(time.Minute)}
		for _, r := range []*Record{&first, &rerun, {UserID: other, StrategyHash: "h1", Document: `{"other":1}`, CreatedAt: t0}} {
			if err := st.Save(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		if n, err := db.NewSelect().Model((*Record)(nil)).Where("user_id = ? AND strategy_hash = ?", owner, "h1").Count(ctx); err != nil || n != 1 {
			t.Errorf("rows of the owner's hash after a rerun: %d (%v), want 1", n, err)
		}
		got, err := st.Result(ctx, owner, "h1")
		if err != nil || got.ID != rerun.ID || got.Document != rerun.Document || !got.CreatedAt.Equal(rerun.CreatedAt) {
			t.Errorf("Result() = %+v, %v; want the rerun %+v", got, err, rerun)
		}
		if n, err := st.count(ctx, []uuid.UUID{owner, other}); err != nil || n != 2 {
			t.Errorf("count() = %d, %v; want 2", n, err)
		}

		if err := st.Delete(ctx, other, "h2"); !errors.Is(err, tradekit.ErrNotFound) {
			t.Errorf("Delete() of an unknown hash = %v, want not found", err)
		}
		if err := st.Delete(ctx, owner, "h1"); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Result(ctx, owner, "h1"); !errors.Is(err, tradekit.ErrNotFound) {
			t.Errorf("Result() after Delete() = %v, want not found", err)
		}
		if got, err := st.Result(ctx, other, "h1"); err != nil || got.Document != `{"other":1}` {
			t.Errorf("another user's result after the owner's Delete(): %+v, %v", got, err)
		}
	})
}

// TestServiceLimits checks the plan's bounds: a new strategy past the
// account's kept results is forbidden and a kept one's rerun is not; the
// account's running backtests are counted on every instance (two
// Services on one database), and a lease that lapsed frees its slot.
func TestServiceLimits(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
		clock := func() time.Time { return now }
		a := New(db, ServiceConfig{Now: clock, LeaseTTL: time.Minute})
		b := New(db, ServiceConfig{Now: clock, LeaseTTL: time.Minute, RetryAfter: 7 * time.Second})
		user, member := mustUser(t, db), mustUser(t, db)
		o := Owner{UserID: user, AccountID: user, Members: []uuid.UUID{user, member}, MaxStored: 2, MaxRunning: 1}

		t.Run("kept", func(t *testing.T) {
			for _, r := range []Record{{UserID: user, StrategyHash: "kept"}, {UserID: member, StrategyHash: "member's"}} {
				if err := a.store.Save(ctx, &r); err != nil {
					t.Fatal(err)
				}
			}
			err := a.checkStored(ctx, a.store, o, "new")
			var te *tradekit.Error
			if !errors.Is(err, tradekit.ErrForbidden) || !errors.As(err, &te) || te.Details["limit"] != "backtests" || te.Details["max"] != 2 {
				t.Errorf("a new strategy past the limit: %v, want forbidden with details.limit backtests", err)
			}
			if err := a.checkStored(ctx, a.store, o, "kept"); err != nil {
				t.Errorf("a rerun at the limit: %v, want allowed", err)
			}
			mo := o
			mo.UserID = member
			if err := a.checkStored(ctx, a.store, mo, "kept"); !errors.Is(err, tradekit.ErrForbidden) {
				t.Errorf("the member's first run of a strategy another member keeps: %v, want forbidden", err)
			}
			c, err := backtest.Strategy{Entry: "1", Exit: "0"}.Compile()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := b.Run(ctx, o, Request{Strategy: c, Universe: Universe{Symbols: []string{"X"}}}); !errors.Is(err, tradekit.ErrForbidden) {
				t.Errorf("Run() of a new strategy past the limit = %v, want forbidden", err)
			}
		})

		t.Run("running", func(t *testing.T) {
			lease, err := a.acquire(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			// Another instance sees the run: the account's one slot is taken.
			_, err = b.acquire(ctx, o)
			var busy *BusyError
			if !errors.As(err, &busy) || !errors.Is(err, tradekit.ErrRateLimited) || busy.RetryAfter != 7*time.Second || busy.Max != 1 {
				t.Fatalf("a second run = %v, want a *BusyError of 7s", err)
			}
			// Another account is not concerned.
			other := mustUser(t, db)
			if _, err := b.acquire(ctx, Owner{UserID: other, AccountID: other, MaxRunning: 1}); err != nil {
				t.Errorf("another account's run = %v", err)
			}
			a.release(ctx, lease)
			second, err := b.acquire(ctx, o)
			if err != nil {
				t.Fatalf("a run after the first was released = %v", err)
			}
			// A lease its instance stopped renewing lapses.
			now = now.Add(time.Minute)
			if _, err := a.acquire(ctx, o); err != nil {
				t.Errorf("a run after the lease lapsed = %v", err)
			}
			if n, err := db.NewSelect().Model((*runLease)(nil)).Where("id = ?", second).Count(ctx); err != nil || n != 0 {
				t.Errorf("the lapsed lease: %d rows (%v), want deleted", n, err)
			}
		})
	})
}

// TestStoreFigures checks that Figures answers each strategy with its
// user's stored result only, never another user's result of the same
// hash, and leaves out strategies without one.
func TestStoreFigures(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		st := NewStore(db)
		a, b := mustUser(t, db), mustUser(t, db)
		ret, sharpe, other := 0.25, 1.5, -0.5
		for _, r := range []*Record{
			{UserID: a, StrategyHash: "h1", Document: "{}", TotalReturn: &ret, SharpeRatio: &sharpe, CreatedAt: time.Now()},
			{UserID: b, StrategyHash: "h2", Document: "{}", TotalReturn: &other, CreatedAt: time.Now()},
		} {
			if err := st.Save(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		keys := []StrategyKey{{a, "h1"}, {a, "h2"}, {b, "h1"}, {b, "h2"}, {a, "h1"}}
		got, err := st.Figures(ctx, keys)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 {
			t.Errorf("Figures() = %v, want 2 strategies", got)
		}
		if f, ok := got[StrategyKey{a, "h1"}]; !ok || f.TotalReturn == nil || *f.TotalReturn != ret || f.SharpeRatio == nil || *f.SharpeRatio != sharpe {
			t.Errorf("Figures()[a, h1] = %+v, %v; want %v, %v", f, ok, ret, sharpe)
		}
		if f, ok := got[StrategyKey{b, "h2"}]; !ok || f.TotalReturn == nil || *f.TotalReturn != other || f.SharpeRatio != nil {
			t.Errorf("Figures()[b, h2] = %+v, %v; want %v, nil", f, ok, other)
		}
		if got, err := st.Figures(ctx, nil); err != nil || len(got) != 0 {
			t.Errorf("Figures(nil) = %v, %v; want none", got, err)
		}
	})
}
