package studies_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/billing"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/studies"
)

// t0 is when the tests' custom indicators are created.
var t0 = time.Date(2026, 3, 2, 15, 0, 0, 0, time.UTC)

// mustUser stores a user on the free plan and returns their id.
func mustUser(tb testing.TB, db bun.IDB) uuid.UUID {
	tb.Helper()
	ctx := context.Background()
	st := billing.NewStore(db)
	p, err := st.Plan(ctx, billing.FreePlan)
	if err != nil {
		tb.Fatal(err)
	}
	u := billing.User{Email: uuid.NewString() + "@example.com", Name: "Test", PlanID: p.ID}
	if err := st.CreateUser(ctx, &u, t0); err != nil {
		tb.Fatal(err)
	}
	return u.ID
}

// mustCreate stores a custom indicator of the user's, named name, with
// formula f, at now.
func mustCreate(tb testing.TB, st *studies.Store, user uuid.UUID, name, f string, now time.Time) studies.CustomIndicator {
	tb.Helper()
	c := studies.CustomIndicator{UserID: user, Name: name, Formula: f, Description: "a test"}
	if err := st.CreateCustomIndicator(context.Background(), &c, now); err != nil {
		tb.Fatalf("CreateCustomIndicator(%s) = %v", name, err)
	}
	return c
}

// wantParam fails the test unless err is a *tradekit.ParamError naming
// param, which wraps tradekit.ErrInvalid.
func wantParam(tb testing.TB, what string, err error, param string) {
	tb.Helper()
	var pe *tradekit.ParamError
	if !errors.As(err, &pe) || pe.Param != param || !errors.Is(err, tradekit.ErrInvalid) {
		tb.Errorf("%s: error %v, want a ParamError naming %s", what, err, param)
	}
}

// names returns the names of list, in order.
func names(list []studies.CustomIndicator) []string {
	out := []string{}
	for _, c := range list {
		out = append(out, c.Name)
	}
	return out
}

// TestCustomIndicators saves, lists, updates and deletes custom
// indicators: each user sees only their own, oldest first; names are
// unique per user among those not deleted; a bad field is refused
// naming it, and nothing is stored.
func TestCustomIndicators(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		st := studies.NewStore(db)
		alice, bob := mustUser(t, db), mustUser(t, db)

		// b is stored first but stamped later: created_at orders the list.
		b := mustCreate(t, st, alice, "b", "ema(close, 5)", t0.Add(time.Minute))
		a := mustCreate(t, st, alice, "a", "sma(close, 3)", t0)
		if a.ID == uuid.Nil || !a.CreatedAt.Equal(t0) || !a.UpdatedAt.Equal(t0) {
			t.Errorf("created %+v, want a new id and created at %v", a, t0)
		}
		mustCreate(t, st, bob, "a", "close", t0) // another user's same name
		list, err := st.CustomIndicators(ctx, alice)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"a", "b"}, names(list)); diff != "" {
			t.Errorf("alice's list (-want +got):\n%s", diff)
		}
		if got := list[0]; got.ID != a.ID || got.Formula != a.Formula || got.Description != "a test" || !got.CreatedAt.Equal(t0) {
			t.Errorf("listed %+v, want %+v", got, a)
		}
		if got, err := st.CustomIndicator(ctx, alice, b.ID); err != nil || got.Formula != "ema(close, 5)" {
			t.Errorf("CustomIndicator(b) = %+v, %v", got, err)
		}
		if _, err := st.CustomIndicator(ctx, bob, a.ID); !errors.Is(err, tradekit.ErrNotFound) {
			t.Errorf("bob reading alice's indicator: %v, want not found", err)
		}

		// Refusals name the field, and store nothing.
		if err := st.CreateCustomIndicator(ctx, &studies.CustomIndicator{UserID: alice, Name: "a", Formula: "close"}, t0); !errors.Is(err, tradekit.ErrConflict) {
			t.Errorf("a second indicator named a: %v, want a conflict", err)
		}
		for _, tt := range []struct {
			name, formula, description, param string
		}{
			{"", "close", "", "name"},
			{"bad", "sma(close)", "", "formula"},
			{"bad", "", "", "formula"},
			{"bad", "close", "bell \a", "description"},
			{"tab\tname", "close", "", "name"},
		} {
			c := studies.CustomIndicator{UserID: alice, Name: tt.name, Formula: tt.formula, Description: tt.description}
			wantParam(t, fmt.Sprintf("creating %+v", tt), st.CreateCustomIndicator(ctx, &c, t0), tt.param)
		}
		if list, _ := st.CustomIndicators(ctx, alice); len(list) != 2 {
			t.Errorf("alice has %d indicators after the refusals, want 2", len(list))
		}

		// Updates: a taken name and a bad formula are refused; a good
		// change is stored with its time.
		taken := "a"
		if _, err := st.UpdateCustomIndicator(ctx, alice, b.ID, studies.CustomPatch{Name: &taken}, t0); !errors.Is(err, tradekit.ErrConflict) {
			t.Errorf("renaming b to a: %v, want a conflict", err)
		}
		bad := "sma(close, )"
		_, err = st.UpdateCustomIndicator(ctx, alice, b.ID, studies.CustomPatch{Formula: &bad}, t0)
		wantParam(t, "updating to a bad formula", err, "formula")
		good, t1 := "rsi(close, 14)", t0.Add(time.Hour)
		if _, err := st.UpdateCustomIndicator(ctx, bob, b.ID, studies.CustomPatch{Formula: &good}, t1); !errors.Is(err, tradekit.ErrNotFound) {
			t.Errorf("bob updating alice's indicator: %v, want not found", err)
		}
		if _, err := st.UpdateCustomIndicator(ctx, alice, b.ID, studies.CustomPatch{Formula: &good}, t1); err != nil {
			t.Fatal(err)
		}
		if got, err := st.CustomIndicator(ctx, alice, b.ID); err != nil || got.Formula != good || got.Name != "b" ||
			!got.UpdatedAt.Equal(t1) || !got.CreatedAt.Equal(t0.Add(time.Minute)) {
			t.Errorf("after the update: %+v, %v; want formula %s updated at %v", got, err, good, t1)
		}

		// Deletion: the owner's only; afterwards the name is free again.
		if err := st.DeleteCustomIndicator(ctx, bob, a.ID, t1); !errors.Is(err, tradekit.ErrNotFound) {
			t.Errorf("bob deleting alice's indicator: %v, want not found", err)
		}
		if err := st.DeleteCustomIndicator(ctx, alice, a.ID, t1); err != nil {
			t.Fatal(err)
		}
		if err := st.DeleteCustomIndicator(ctx, alice, a.ID, t1); !errors.Is(err, tradekit.ErrNotFound) {
			t.Errorf("deleting it again: %v, want not found", err)
		}
		if _, err := st.CustomIndicator(ctx, alice, a.ID); !errors.Is(err, tradekit.ErrNotFound) {
			t.Errorf("reading a deleted indicator: %v, want not found", err)
		}
		mustCreate(t, st, alice, "a", "close", t1)
		if list, _ := st.CustomIndicators(ctx, alice); len(list) != 2 || list[0].Name != "b" || list[1].ID == a.ID {
			t.Errorf("alice's list after deleting a and creating it again: %+v", list)
		}
		if list, _ := st.CustomIndicators(ctx, bob); len(list) != 1 {
			t.Errorf("bob's list: %d indicators, want his one", len(list))
		}
	})
}

// TestCustomIndicatorLimit checks that a user holds at most MaxCustom
// custom indicators, deleted ones not counted.
func TestCustomIndicatorLimit(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		st := studies.NewStore(db)
		user := mustUser(t, db)
		var first studies.CustomIndicator
		for i := range studies.MaxCustom {
			c := mustCreate(t, st, user, fmt.Sprintf("c%d", i), "close", t0)
			if i == 0 {
				first = c
			}
		}
		over := studies.CustomIndicator{UserID: user, Name: "over", Formula: "close"}
		if err := st.CreateCustomIndicator(ctx, &over, t0); !errors.Is(err, tradekit.ErrConflict) {
			t.Errorf("indicator %d: %v, want a conflict", studies.MaxCustom+1, err)
		}
		if err := st.DeleteCustomIndicator(ctx, user, first.ID, t0); err != nil {
			t.Fatal(err)
		}
		if err := st.CreateCustomIndicator(ctx, &over, t0); err != nil {
			t.Errorf("after deleting one: %v, want room for one", err)
		}
	})
}
