package connect

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/marketdata"
)

// TestExternal checks what other packages use of connect's tables in
// their own statements and transactions: an account's history stored
// whole, the owner of a connection, the next fill after a watermark, and
// the orders a subquery selects.
func TestExternal(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		e := newEnv(t, db)
		user := e.mustUser(t)
		acme, other := e.mustAsset(t, "ACME", "100", 0), e.mustAsset(t, "OTHR", "10", 0)
		now := start.Truncate(time.Microsecond)
		h := AccountHistory{
			Connection: Connection{ID: uuid.New(), UserID: user, Provider: "paper", Status: Disconnected,
				RedirectURL: "https://app.example/", AccountID: "acct-h", AccountName: "PA-H", CreatedAt: now, UpdatedAt: now},
			Portfolio: Portfolio{ID: uuid.New(), Currency: "USD", Cash: dec("800"), Equity: dec("1000"), UpdatedAt: now,
				Positions: []Position{{Symbol: "ACME", AssetID: &acme.ID, Quantity: dec("2"), AverageCost: dec("100")}}},
			Fills: []Fill{
				{BrokerID: "b-1", Symbol: "ACME", Side: "buy", Quantity: dec("3"), Price: dec("100"), FilledAt: now.Add(-2 * time.Hour)},
				{BrokerID: "b-2", Symbol: "ACME", Side: "sell", Quantity: dec("1"), Price: dec("100"), FilledAt: now.Add(-time.Hour)},
			},
			Equity: []EquityPoint{
				{Date: marketdata.SQLDate(calendar.DateOf(now).AddDays(-1)), Equity: dec("990")},
				{Date: marketdata.SQLDate(calendar.DateOf(now)), Equity: dec("1000")},
			},
		}
		err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			return NewStore(tx).InsertAccountHistory(ctx, &h)
		})
		if err != nil {
			t.Fatal(err)
		}
		st := NewStore(db)

		t.Run("InsertAccountHistory", func(t *testing.T) {
			p, err := st.PortfolioOf(ctx, h.Connection.ID)
			if err != nil {
				t.Fatal(err)
			}
			if p.ID != h.Portfolio.ID || p.UserID != user || p.FillSeq != 2 || len(p.Positions) != 1 ||
				p.Positions[0].PortfolioID != p.ID || !p.Positions[0].Quantity.Equal(dec("2")) {
				t.Errorf("PortfolioOf = %+v, want the portfolio stored, of the user, with fill seq 2 and its position", p)
			}
			fills, err := st.Fills(ctx, p.ID)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range fills {
				got = append(got, fmt.Sprintf("%s#%d", f.BrokerID, f.Seq))
			}
			if diff := cmp.Diff([]string{"b-2#2", "b-1#1"}, got); diff != "" {
				t.Errorf("Fills (newest first) mismatch (-want +got):\n%s", diff)
			}
			points, err := st.HistoryByID(ctx, p.ID)
			if err != nil || len(points) != 2 || !points[1].Equity.Equal(dec("1000")) {
				t.Errorf("HistoryByID = %+v, %v; want the two days", points, err)
			}
			again := h
			again.Portfolio.ID, again.Fills, again.Equity = uuid.New(), nil, nil
			if err := st.InsertAccountHistory(ctx, &again); err == nil {
				t.Error("InsertAccountHistory of a stored connection succeeded")
			}
		})

		t.Run("ConnectionOwner", func(t *testing.T) {
			if got, err := st.ConnectionOwner(ctx, h.Connection.ID); err != nil || got != user {
				t.Errorf("ConnectionOwner = %v, %v; want %v", got, err, user)
			}
			if _, err := st.ConnectionOwner(ctx, uuid.New()); !errors.Is(err, tradekit.ErrNotFound) {
				t.Errorf("ConnectionOwner(unknown) = %v, want ErrNotFound", err)
			}
		})

		t.Run("NextFill", func(t *testing.T) {
			for _, tt := range []struct {
				after string // the watermark, as SQL
				want  []string
			}{{"0", []string{"b-1"}}, {"1", []string{"b-2"}}, {"2", nil}} {
				// A reader's row, with the fill's columns under a prefix.
				type row struct {
					Fill Fill `bun:"embed:next_"`
				}
				var rows []row
				err := db.NewSelect().TableExpr("portfolios AS p").
					Apply(NextFill("f", "p.id", tt.after, "next_")).Where("p.id = ?", h.Portfolio.ID).
					OrderExpr("?", FillTime("f")).Scan(ctx, &rows)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, r := range rows {
					got = append(got, r.Fill.BrokerID)
					if r.Fill.PortfolioID != h.Portfolio.ID || r.Fill.Seq <= 0 || r.Fill.Symbol == "" || r.Fill.FilledAt.IsZero() {
						t.Errorf("the fill after seq %s = %+v, want every column of the portfolio's fill", tt.after, r.Fill)
					}
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("the fill after seq %s mismatch (-want +got):\n%s", tt.after, diff)
				}
			}
		})

		t.Run("Orders", func(t *testing.T) {
			order := func(a marketdata.Asset, side brokers.Side, status brokers.OrderStatus, qty string) uuid.UUID {
				q := dec(qty)
				o := Order{ID: uuid.New(), UserID: user, ConnectionID: h.Connection.ID, AssetID: a.ID, Symbol: a.Symbol,
					AssetType: string(a.Type), Side: side, Type: brokers.Market, Quantity: q, Status: status, ParamsHash: "test",
					CreatedAt: now, UpdatedAt: now}
				if status == brokers.Filled {
					o.FilledQuantity, o.FilledPrice = &q, decp("100")
				}
				if _, err := db.NewInsert().Model(&o).Exec(ctx); err != nil {
					t.Fatal(err)
				}
				return o.ID
			}
			bought := order(acme, brokers.Buy, brokers.Filled, "3")
			open := order(acme, brokers.Sell, brokers.Pending, "1")
			elsewhere := order(other, brokers.Buy, brokers.Filled, "5")
			order(acme, brokers.Buy, brokers.Filled, "7") // not selected
			ids := db.NewSelect().TableExpr("broker_orders").ColumnExpr("id").
				Where("id IN (?)", bun.In([]uuid.UUID{bought, open, elsewhere}))

			list, err := st.AssetOrders(ctx, ids, acme.ID)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, o := range list {
				got = append(got, string(o.Side)+" "+string(o.Status))
				if o.ID != uuid.Nil || !o.Quantity.IsZero() {
					t.Errorf("AssetOrders read %+v, want only side, status and filled quantity", o)
				}
			}
			if diff := cmp.Diff([]string{"buy filled", "sell pending"}, got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
				t.Errorf("AssetOrders mismatch (-want +got):\n%s", diff)
			}
			filled, err := st.FilledOrders(ctx, ids)
			if err != nil {
				t.Fatal(err)
			}
			var gotIDs []uuid.UUID
			for _, o := range filled {
				gotIDs = append(gotIDs, o.ID)
			}
			if diff := cmp.Diff([]uuid.UUID{bought, elsewhere}, gotIDs, cmpopts.SortSlices(func(a, b uuid.UUID) bool { return a.String() < b.String() })); diff != "" {
				t.Errorf("FilledOrders mismatch (-want +got):\n%s", diff)
			}
		})
	})
}
