package dashboard_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/billing"
	"github.com/tradekit/tradekit/copytrading"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/marketdata/demo"
)

// loadDemo loads the demo data set and its copy-trading leaders, as
// `tradekit seed` does.
func loadDemo(t *testing.T, db *bun.DB) {
	t.Helper()
	ctx := context.Background()
	set, err := demo.Generate(demo.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := marketdata.InConnTx(ctx, db, func(ctx context.Context, st *marketdata.Store) error {
		return demo.Load(ctx, st, set)
	}); err != nil {
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
	if err := copytrading.LoadDemoLeaders(ctx, db, users, time.Now()); err != nil {
		t.Fatal(err)
	}
}
