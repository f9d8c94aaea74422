package billing_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/billing"
	"github.com/tradekit/tradekit/internal/dbtest"
)

func TestUserByID(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		u := mustUser(t, db, "Byid@Example.com", "free")
		st := billing.NewStore(db)
		got, err := st.UserByID(ctx, u.ID)
		if err != nil || got.ID != u.ID || got.Email != "byid@example.com" {
			t.Errorf("UserByID = %+v, %v; want %s with its email", got, err, u.ID)
		}
		if _, err := st.UserByID(ctx, uuid.New()); !errors.Is(err, tradekit.ErrNotFound) {
			t.Errorf("UserByID of an unknown id: %v, want ErrNotFound", err)
		}
	})
}

func TestSetAdmin(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		u := mustUser(t, db, "role@example.com", "pro")
		st := billing.NewStore(db)
		for _, admin := range []bool{true, true, false} {
			got, err := st.SetAdmin(ctx, u.ID, admin)
			if err != nil || got.ID != u.ID || got.IsAdmin != admin || got.PlanID != u.PlanID || got.Email != u.Email {
				t.Fatalf("SetAdmin(%t) = %+v, %v; want the user, admin %t, plan and email unchanged", admin, got, err, admin)
			}
			if stored, _ := st.UserByID(ctx, u.ID); stored.IsAdmin != admin {
				t.Errorf("after SetAdmin(%t) the stored user has IsAdmin %t", admin, stored.IsAdmin)
			}
		}
		if _, err := st.SetAdmin(ctx, uuid.New(), true); !errors.Is(err, tradekit.ErrNotFound) {
			t.Errorf("SetAdmin of an unknown id: %v, want ErrNotFound", err)
		}
	})
}

// TestUserMessages checks that the errors users meet most carry a
// message written for them ([tradekit.Error]) under the package's prefix.
func TestUserMessages(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		st := billing.NewStore(db)
		u := mustUser(t, db, "taken@example.com", "free")
		k, _, err := st.CreateKey(ctx, u.ID, "k", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.RevokeKey(ctx, k.ID, time.Now()); err != nil {
			t.Fatal(err)
		}
		missing := uuid.New()
		_, errPlan := st.Plan(ctx, "gold")
		_, errUser := st.UserByEmail(ctx, "Nobody@Example.com")
		errTaken := st.CreateUser(ctx, &billing.User{Email: "TAKEN@example.com", PlanID: u.PlanID}, time.Now())
		_, errKey := st.RevokeKey(ctx, missing, time.Now())
		_, errRevoked := st.RevokeKey(ctx, k.ID, time.Now())
		for _, tt := range []struct {
			err       error
			kind      error
			full, msg string
		}{
			{errPlan, tradekit.ErrNotFound, `billing: plan "gold" not found`, `plan "gold" not found`},
			{errUser, tradekit.ErrNotFound, `billing: user "Nobody@Example.com" not found`, `user "Nobody@Example.com" not found`},
			{errTaken, tradekit.ErrConflict, `billing: user "taken@example.com" exists already`, `user "taken@example.com" exists already`},
			{errKey, tradekit.ErrNotFound, "billing: key " + missing.String() + " not found", "key " + missing.String() + " not found"},
			{errRevoked, tradekit.ErrConflict, "billing: key " + k.ID.String() + " is already revoked", "key " + k.ID.String() + " is already revoked"},
		} {
			var te *tradekit.Error
			if !errors.Is(tt.err, tt.kind) || !errors.As(tt.err, &te) || tt.err.Error() != tt.full || te.Msg != tt.msg {
				t.Errorf("error %q, want %q wrapping a *tradekit.Error %q of kind %v", tt.err, tt.full, tt.msg, tt.kind)
			}
		}
	})
}
