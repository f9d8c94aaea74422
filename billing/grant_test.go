package billing_test

import (
	"context"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/billing"
	"github.com/tradekit/tradekit/internal/dbtest"
)

// TestGrantKey checks what GrantKey does to the user of the email: it
// creates an unknown one on the free plan, changes an existing one's plan
// or role only when asked, and always creates a key that authenticates.
func TestGrantKey(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		st := billing.NewStore(db)
		pro, err := st.Plan(ctx, "pro")
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		g := billing.KeyGrant{Email: "grant@example.com", Name: "grant", KeyName: "ci", Now: now}
		first, err := st.GrantKey(ctx, g)
		if err != nil {
			t.Fatal(err)
		}
		if !first.Created || first.Updated || first.Plan.Slug != billing.FreePlan || first.User.IsAdmin || first.Secret == "" {
			t.Errorf("GrantKey(new) = created %v, updated %v, plan %q, admin %v; want a new member on %s with a key",
				first.Created, first.Updated, first.Plan.Slug, first.User.IsAdmin, billing.FreePlan)
		}
		same, err := st.GrantKey(ctx, g)
		if err != nil {
			t.Fatal(err)
		}
		if same.Created || same.Updated || same.User.ID != first.User.ID || same.Key.ID == first.Key.ID {
			t.Errorf("GrantKey(again) = created %v, updated %v, user %s; want a second key for %s only",
				same.Created, same.Updated, same.User.ID, first.User.ID)
		}
		g.Plan, g.Admin = &pro, true
		moved, err := st.GrantKey(ctx, g)
		if err != nil {
			t.Fatal(err)
		}
		if moved.Created || !moved.Updated || moved.Plan.ID != pro.ID || !moved.User.IsAdmin {
			t.Errorf("GrantKey(pro, admin) = created %v, updated %v, plan %q, admin %v; want the user moved to pro, administrator",
				moved.Created, moved.Updated, moved.Plan.Slug, moved.User.IsAdmin)
		}
		if p, err := st.PlanOf(ctx, first.User.ID); err != nil || p.ID != pro.ID {
			t.Errorf("PlanOf() = %q, %v; want pro", p.Slug, err)
		}
		keys, err := st.Keys(ctx, first.User.ID)
		if err != nil || len(keys) != 3 {
			t.Errorf("Keys() = %d keys, %v; want 3", len(keys), err)
		}
	})
}
