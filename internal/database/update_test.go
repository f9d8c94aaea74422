package database_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/internal/database"
	"github.com/tradekit/tradekit/internal/dbtest"
)

// updateProbe is a row of the table TestUpdateColumns creates.
type updateProbe struct {
	bun.BaseModel `bun:"table:update_probe"`

	ID     uuid.UUID        `bun:"id,pk"`
	Status string           `bun:"status"`
	Qty    decimal.Decimal  `bun:"qty"`
	Price  *decimal.Decimal `bun:"price"`
	At     *time.Time       `bun:"at"`
	Note   string           `bun:"note"`
}

// TestUpdateColumns checks that UpdateColumns and ColumnsUpdate write
// what bun's update of the same columns writes, NULLs included, change
// only the row whose condition holds, and that ColumnsUpdate's statement
// goes with a transaction's next statement.
func TestUpdateColumns(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		if _, err := db.NewCreateTable().Model((*updateProbe)(nil)).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		at := time.Date(2026, 11, 29, 12, 30, 0, 123456000, time.UTC)
		price := decimal.RequireFromString("57.25")
		rows := []updateProbe{
			{ID: uuid.New(), Status: "new", Qty: decimal.New(1, 0), Price: &price, At: &at, Note: "a"},
			{ID: uuid.New(), Status: "new", Qty: decimal.New(2, 0), Note: "b"},
		}
		if _, err := db.NewInsert().Model(&rows).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		read := func(id uuid.UUID) updateProbe {
			t.Helper()
			var got updateProbe
			if err := db.NewSelect().Model(&got).Where("id = ?", id).Scan(ctx); err != nil {
				t.Fatal(err)
			}
			return got
		}

		// A row whose condition holds: its columns change, NULL too; the
		// column not named keeps its value.
		later := at.Add(time.Hour)
		want := rows[0]
		want.Status, want.Qty, want.Price, want.At, want.Note = "filled", decimal.RequireFromString("1.5"), nil, &later, "not written"
		n, err := database.UpdateColumns(ctx, db, &want, []string{"status", "qty", "price", "at"}, "status", "new")
		if err != nil || n != 1 {
			t.Fatalf("UpdateColumns: %d rows, %v, want 1", n, err)
		}
		want.Note = "a"
		if d := cmp.Diff(want, read(want.ID), cmp.Comparer(decimal.Decimal.Equal)); d != "" {
			t.Errorf("the row after UpdateColumns (-want +got):\n%s", d)
		}
		// Again: its condition no longer holds.
		if n, err := database.UpdateColumns(ctx, db, &want, []string{"status"}, "status", "new"); err != nil || n != 0 {
			t.Fatalf("UpdateColumns of a row whose condition fails: %d rows, %v, want 0", n, err)
		}
		if _, err := database.UpdateColumns(ctx, db, &want, []string{"nope"}, "status", "new"); err == nil {
			t.Error("UpdateColumns of a column the model lacks gave no error")
		}

		// With RETURNING: the changed row's values come back, once.
		var back struct {
			Qty decimal.Decimal `bun:"qty"`
		}
		done := rows[1]
		done.Status = "filled"
		for i, want := range []bool{true, false} {
			changed, err := database.UpdateColumnsReturning(ctx, db, &done, []string{"status"}, "status", "new", "qty", &back)
			if err != nil || changed != want || want && !back.Qty.Equal(rows[1].Qty) {
				t.Fatalf("UpdateColumnsReturning, call %d: %v, %v, qty %s; want %v and qty %s", i+1, changed, err, back.Qty, want, rows[1].Qty)
			}
		}

		// With a transaction's next statement: the read after it sees it.
		other := done
		other.Qty, other.Price = decimal.New(3, 0), &price
		var got updateProbe
		err = database.RunInTx(ctx, db, func(ctx context.Context, tx bun.IDB) error {
			if err := database.ExecWithNext(ctx, tx, database.ColumnsUpdate(tx, &other, "qty", "price")); err != nil {
				return err
			}
			return tx.NewSelect().Model(&got).Where("id = ?", other.ID).Scan(ctx)
		})
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(other, got, cmp.Comparer(decimal.Decimal.Equal)); d != "" {
			t.Errorf("the row read after ColumnsUpdate in its transaction (-want +got):\n%s", d)
		}
	})
}
