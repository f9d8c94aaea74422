package paper_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/brokers/paper"
	"github.com/tradekit/tradekit/internal/dbtest"
)

// TestOpenAccount opens accounts without a client: named by the caller or
// at random, opened at a given time that fills may not precede, and once
// per id.
func TestOpenAccount(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		b := paper.New(db, paper.Config{Now: func() time.Time { return t0 }})
		want := uuid.MustParse("0b1c2d3e-4f50-4a6b-8c7d-8e9fa0b1c2d3")
		opened := t0.AddDate(-1, 0, 0)
		id, number, err := b.OpenAccount(ctx, want, opened)
		if err != nil || id != want || !strings.HasPrefix(number, "PA") || len(number) != 12 {
			t.Fatalf("OpenAccount() = %s, %q, %v; want %s and a number", id, number, err, want)
		}
		if _, err := b.Fill(ctx, id.String(), "ACME", brokers.Buy, d("10"), d("50"), opened.Add(-time.Second)); !errors.Is(err, tradekit.ErrInvalid) {
			t.Errorf("Fill() before the opening = %v, want invalid", err)
		}
		o, err := b.Fill(ctx, id.String(), "ACME", brokers.Buy, d("10"), d("50"), opened.Add(time.Hour))
		if err != nil || o.Status != "filled" || !o.FilledQty.Equal(d("10")) {
			t.Errorf("Fill() after the opening = %+v, %v", o, err)
		}
		if _, _, err := b.OpenAccount(ctx, want, opened); !errors.Is(err, tradekit.ErrConflict) {
			t.Errorf("OpenAccount() again = %v, want a conflict", err)
		}
		other, otherNumber, err := b.OpenAccount(ctx, uuid.Nil, time.Time{})
		if err != nil || other == uuid.Nil || other == want || otherNumber == number {
			t.Errorf("OpenAccount(nil id) = %s, %q, %v; want a new account", other, otherNumber, err)
		}
		// Opened now: a fill now is accepted.
		if _, err := b.Fill(ctx, other.String(), "ACME", brokers.Buy, d("1"), d("50"), t0); err != nil {
			t.Errorf("Fill() in the account opened now: %v", err)
		}
	})
}
