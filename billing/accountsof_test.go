package billing_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/billing"
	"github.com/tradekit/tradekit/internal/dbtest"
)

func TestAccountsOf(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		st := billing.NewStore(db)
		admin := mustUser(t, db, "admin@example.com", "pro")
		alone := mustUser(t, db, "alone@example.com", "free")
		admin.IsAdmin = true
		if err := st.UpdateUser(ctx, admin); err != nil {
			t.Fatal(err)
		}
		member := billing.User{Email: "member@example.com", Name: "M"}
		if _, err := st.Invite(ctx, admin, &member, time.Now(), time.Hour); err != nil {
			t.Fatal(err)
		}
		unknown := uuid.New()
		got, err := st.AccountsOf(ctx, []uuid.UUID{admin.ID, alone.ID, member.ID, unknown})
		if err != nil {
			t.Fatal(err)
		}
		want := map[uuid.UUID]uuid.UUID{admin.ID: admin.ID, alone.ID: alone.ID, member.ID: admin.ID}
		if len(got) != len(want) {
			t.Errorf("AccountsOf = %v, want %v", got, want)
		}
		for u, a := range want {
			if got[u] != a {
				t.Errorf("account of %s = %s, want %s", u, got[u], a)
			}
		}
	})
}
