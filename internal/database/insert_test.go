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

// insertProbe is a row of the table TestInsertRows creates.
type insertProbe struct {
	bun.BaseModel `bun:"table:insert_probe"`

	ID     uuid.UUID        `bun:"id,pk"`
	Kind   probeKind        `bun:"kind"`
	Qty    decimal.Decimal  `bun:"qty"`
	Price  *decimal.Decimal `bun:"price"`
	At     time.Time        `bun:"at"`
	Until  *time.Time       `bun:"until"`
	Parent *uuid.UUID       `bun:"parent"`
	Seq    int64            `bun:"seq"`
	Done   bool             `bun:"done"`
}

// probeKind is a string type, as the models' statuses and sides are.
type probeKind string

// TestInsertRows checks that InsertRows writes what bun's insert of the
// same model writes, NULLs included, one row and several, alone and
// with a transaction's next statement, and with an ON CONFLICT suffix.
func TestInsertRows(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		if _, err := db.NewCreateTable().Model((*insertProbe)(nil)).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		at := time.Date(2026, 11, 29, 12, 30, 0, 123456000, time.UTC)
		later := at.Add(time.Hour)
		price := decimal.RequireFromString("57.25")
		parent := uuid.New()
		row := func(kind probeKind, qty string) insertProbe {
			return insertProbe{ID: uuid.New(), Kind: kind, Qty: decimal.RequireFromString(qty), At: at}
		}
		full := row("full", "1.5")
		full.Price, full.Until, full.Parent, full.Seq, full.Done = &price, &later, &parent, 7, true
		bare := row("bare", "2")
		two := []insertProbe{row("first", "3"), row("second", "0.000001")}
		inTx := row("in a transaction", "4")

		if _, err := database.InsertRows(db, &full, "").Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := database.InsertRows(db, &bare, "").Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := database.InsertRows(db, &two, "").Exec(ctx); err != nil {
			t.Fatal(err)
		}
		var seen int
		err := database.RunInTx(ctx, db, func(ctx context.Context, tx bun.IDB) error {
			if err := database.ExecWithNext(ctx, tx, database.InsertRows(tx, &inTx, "")); err != nil {
				return err
			}
			return tx.NewSelect().Model((*insertProbe)(nil)).ColumnExpr("count(*)").Where("id = ?", inTx.ID).Scan(ctx, &seen)
		})
		if err != nil || seen != 1 {
			t.Fatalf("the row inserted with the transaction's next statement: seen %d times, %v", seen, err)
		}
		// The same rows as bun's own insert writes them.
		theirs := []insertProbe{full, bare}
		for i := range theirs {
			theirs[i].ID = uuid.New()
		}
		if _, err := db.NewInsert().Model(&theirs).Exec(ctx); err != nil {
			t.Fatal(err)
		}

		read := func(id uuid.UUID) insertProbe {
			t.Helper()
			var got insertProbe
			if err := db.NewSelect().Model(&got).Where("id = ?", id).Scan(ctx); err != nil {
				t.Fatal(err)
			}
			return got
		}
		dec := cmp.Comparer(decimal.Decimal.Equal)
		for _, want := range append([]insertProbe{full, bare, inTx}, two...) {
			if d := cmp.Diff(want, read(want.ID), dec); d != "" {
				t.Errorf("row %s (-want +got):\n%s", want.Kind, d)
			}
		}
		for i, want := range []insertProbe{full, bare} {
			got := read(theirs[i].ID)
			got.ID = want.ID
			if d := cmp.Diff(read(want.ID), got, dec); d != "" {
				t.Errorf("row %s as InsertRows and as bun's insert wrote it (-InsertRows +bun):\n%s", want.Kind, d)
			}
		}

		// An upsert: the conflicting row takes the new values.
		again := full
		again.Qty, again.Price, again.Done = decimal.New(9, 0), nil, false
		if _, err := database.InsertRows(db, &again, "ON CONFLICT (id) DO UPDATE SET qty = EXCLUDED.qty, price = EXCLUDED.price, done = EXCLUDED.done").Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(again, read(full.ID), dec); d != "" {
			t.Errorf("the row after an upsert (-want +got):\n%s", d)
		}
	})
}
