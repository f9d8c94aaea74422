package billing_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/billing"
	"github.com/tradekit/tradekit/internal/dbtest"
)

func TestUserByID(t *testing.T) {
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
