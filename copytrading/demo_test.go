package copytrading_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/billing"
	"github.com/tradekit/tradekit/copytrading"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/marketdata/calendar"
	"github.com/tradekit/tradekit/marketdata/demo"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// TestDemoLeaders loads the demo leaders over 18 months of demo prices:
// each is published, unverified, with a year of daily equity and its
// trades; loading again changes nothing; and the figures are the same on
// both databases (the simulation is deterministic).
func TestDemoLeaders(t *testing.T) {
	set, err := demo.Generate(demo.Config{Start: calendar.NewDate(2025, 5, 1)})
	if err != nil {
		t.Fatal(err)
	}
	var returns [][]float64
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		if err := demo.Load(ctx, marketdata.NewStore(db), set); err != nil {
			t.Fatal(err)
		}
		st := billing.NewStore(db)
		plan, err := st.Plan(ctx, "free")
		if err != nil {
			t.Fatal(err)
		}
		users := make([]uuid.UUID, len(copytrading.DemoLeaders))
		for i, l := range copytrading.DemoLeaders {
			u := billing.User{Email: l.Slug + "@demo.tradekit.example", Name: l.DisplayName, PlanID: plan.ID}
			if err := st.CreateUser(ctx, &u, time.Now()); err != nil {
				t.Fatal(err)
			}
			users[i] = u.ID
		}
		at := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
		for range 2 {
			if err := copytrading.LoadDemoLeaders(ctx, db, users, at); err != nil {
				t.Fatal(err)
			}
		}
		s := copytrading.New(db, copytrading.Config{})
		list, total, err := s.Leaders(ctx, copytrading.LeaderFilter{Page: 1, Limit: 20})
		if err != nil || total != 3 || len(list) != 3 {
			t.Fatalf("%d leaders (%v)", total, err)
		}
		var rs []float64
		for _, l := range list {
			d, err := s.LeaderBySlug(ctx, l.Slug)
			if err != nil {
				t.Fatal(err)
			}
			tx, err := s.Transactions(ctx, l.Slug)
			if err != nil {
				t.Fatal(err)
			}
			if l.Verified || len(tx) == 0 || tx[0].Verified || len(d.Monthly) < 12 || d.MaxDrawdown == nil || *d.MaxDrawdown >= 0 || l.SharpeRatio == nil {
				t.Errorf("%s: verified %v, %d trades, %d months, drawdown %v, Sharpe %v", l.Slug, l.Verified, len(tx), len(d.Monthly),
					d.MaxDrawdown, l.SharpeRatio)
			}
			rs = append(rs, l.TotalReturn)
		}
		n, err := db.NewSelect().Table("portfolio_equity").Count(ctx)
		if err != nil || n < 3*250 {
			t.Errorf("%d equity points (%v)", n, err)
		}
		returns = append(returns, rs)
	})
	if len(returns) == 2 && (returns[0][0] != returns[1][0] || returns[0][1] != returns[1][1] || returns[0][2] != returns[1][2]) {
		t.Errorf("the figures differ between the databases: %v", returns)
	}
}
