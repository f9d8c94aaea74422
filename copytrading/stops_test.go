package copytrading_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/brokers/connect"
	"github.com/tradekit/tradekit/copytrading"
	"github.com/tradekit/tradekit/marketdata"
)

// copyEventRow is a row of copy_events, for the tests to store.
type copyEventRow struct {
	bun.BaseModel `bun:"table:copy_events"`

	FollowID   uuid.UUID  `bun:"follow_id,pk"`
	FillID     string     `bun:"fill_id,pk"`
	Status     string     `bun:"status"`
	OrderID    *uuid.UUID `bun:"order_id"`
	Reason     string     `bun:"reason"`
	CreatedAt  time.Time  `bun:"created_at"`
	UpdatedAt  time.Time  `bun:"updated_at"`
	LeaseUntil *time.Time `bun:"lease_until"`
}

// copyOrder is a copy the follower's broker filled (or, with pending,
// has yet to fill).
type copyOrder struct {
	side       brokers.Side
	qty, price string
	commission string // "" for none
	pending    bool
}

// mustCopyOrder stores o as a copy made for f's follow: a broker order of
// the follower, and the copy event that placed it.
func mustCopyOrder(tb testing.TB, db bun.IDB, f fixture, a marketdata.Asset, o copyOrder) uuid.UUID {
	tb.Helper()
	ctx := context.Background()
	now := time.Now().UTC()
	qty := decimal.RequireFromString(o.qty)
	row := connect.Order{ID: uuid.New(), UserID: f.follower.user, ConnectionID: f.follower.conn, AssetID: a.ID, Symbol: a.Symbol,
		AssetType: string(a.Type), Side: o.side, Type: brokers.Market, Quantity: qty, Status: brokers.Pending, ParamsHash: "test",
		CreatedAt: now, UpdatedAt: now}
	if !o.pending {
		price := decimal.RequireFromString(o.price)
		row.Status, row.FilledQuantity, row.FilledPrice, row.FilledAt = brokers.Filled, &qty, &price, &now
	}
	if o.commission != "" {
		c := decimal.RequireFromString(o.commission)
		row.Commission = &c
	}
	e := copyEventRow{FollowID: f.follow.ID, FillID: "copy-" + row.ID.String(), Status: "placed", OrderID: &row.ID, CreatedAt: now, UpdatedAt: now}
	for _, m := range []any{&row, &e} {
		if _, err := db.NewInsert().Model(m).Exec(ctx); err != nil {
			tb.Fatal(err)
		}
	}
	return row.ID
}

// testCheckStops has a follower with 10,000 of equity, 10 % of it (1,000)
// allocated to a leader, whose copies in ACME (now at 50) made or lost
// money: the copy stop-loss (20 % unless a case says otherwise) turns
// auto-sync off, and notifies the follower, once.
func testCheckStops(t *testing.T, db *bun.DB) {
	ctx := context.Background()
	acme := mustAsset(t, db, "ACME", "50")
	tests := []struct {
		name           string
		followerEquity string // "10000" when ""
		stopLoss       string // the control, "20" when ""
		copies         []copyOrder
		wantReason     string // "" when auto-sync stays on
	}{
		// −10 × 70 + 10 × 50 = −200: 20 % of 1,000.
		{name: "loss at the stop", copies: []copyOrder{{side: brokers.Buy, qty: "10", price: "70"}},
			wantReason: "the copies lost 20.00% of the allocation, at or over the copy stop-loss of 20%"},
		{name: "loss under the stop", copies: []copyOrder{{side: brokers.Buy, qty: "10", price: "69.9"}}},
		{name: "commissions count", copies: []copyOrder{{side: brokers.Buy, qty: "10", price: "69.9", commission: "1"}},
			wantReason: "the copies lost 20.00% of the allocation, at or over the copy stop-loss of 20%"},
		// −700 + 500 on the sell, and nothing left to value.
		{name: "closed round trip", copies: []copyOrder{{side: brokers.Buy, qty: "10", price: "70"}, {side: brokers.Sell, qty: "10", price: "50"}},
			wantReason: "the copies lost 20.00% of the allocation, at or over the copy stop-loss of 20%"},
		{name: "gain", copies: []copyOrder{{side: brokers.Buy, qty: "10", price: "40"}}},
		{name: "open copies do not count", copies: []copyOrder{{side: brokers.Buy, qty: "10", pending: true}}},
		{name: "no copies"},
		{name: "loss under a higher stop", stopLoss: "50", copies: []copyOrder{{side: brokers.Buy, qty: "10", price: "99.9"}}},
		// −1,100 + 500 = −600.
		{name: "loss over a higher stop", stopLoss: "50", copies: []copyOrder{{side: brokers.Buy, qty: "10", price: "110"}},
			wantReason: "the copies lost 60.00% of the allocation, at or over the copy stop-loss of 50%"},
		{name: "no allocation", followerEquity: "0", copies: []copyOrder{{side: brokers.Buy, qty: "10", price: "1000"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := copytrading.New(db, copytrading.Config{})
			equity, stopLoss := "10000", "20"
			if tt.followerEquity != "" {
				equity = tt.followerEquity
			}
			if tt.stopLoss != "" {
				stopLoss = tt.stopLoss
			}
			f := mustFixture(t, db, s, "100000", equity, copytrading.FollowInput{AutoSync: true,
				Controls: copytrading.ControlsPatch{CopyStopLossPct: pct(stopLoss)}})
			for _, o := range tt.copies {
				mustCopyOrder(t, db, f, acme, o)
			}
			for range 2 { // the second check changes nothing
				if err := s.CheckStops(ctx); err != nil {
					t.Fatal(err)
				}
			}
			got := mustFollowRow(t, db, f.follow.ID)
			if got.AutoSync != (tt.wantReason == "") || got.StoppedReason != tt.wantReason {
				t.Errorf("auto-sync %v, stopped reason %q; want %v, %q", got.AutoSync, got.StoppedReason, tt.wantReason == "", tt.wantReason)
			}
			wantNotes := []note{}
			if tt.wantReason != "" {
				wantNotes = append(wantNotes, note{copytrading.KindCopyStopped, "auto-sync stopped: " + tt.wantReason})
			}
			if diff := cmp.Diff(wantNotes, mustNotes(t, s, f.follower.user)); diff != "" {
				t.Errorf("notifications mismatch (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("no connection", func(t *testing.T) {
		s := copytrading.New(db, copytrading.Config{})
		f := mustFixture(t, db, s, "100000", "10000", copytrading.FollowInput{AutoSync: true})
		mustCopyOrder(t, db, f, acme, copyOrder{side: brokers.Buy, qty: "10", price: "1000"})
		if _, err := db.NewUpdate().Table("follows").Set("connection_id = NULL").Where("id = ?", f.follow.ID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if err := s.CheckStops(ctx); err != nil {
			t.Fatal(err)
		}
		if got := mustFollowRow(t, db, f.follow.ID); !got.AutoSync {
			t.Errorf("auto-sync stopped (%q), want it on: the copies have no connection to value", got.StoppedReason)
		}
	})

	t.Run("two instances stop once", func(t *testing.T) {
		services := []*copytrading.Service{copytrading.New(db, copytrading.Config{}), copytrading.New(db, copytrading.Config{})}
		f := mustFixture(t, db, services[0], "100000", "10000", copytrading.FollowInput{AutoSync: true})
		mustCopyOrder(t, db, f, acme, copyOrder{side: brokers.Buy, qty: "10", price: "1000"})
		var wg sync.WaitGroup
		for _, s := range services {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := s.CheckStops(ctx); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		// −10,000 + 500 over 1,000.
		want := []note{{copytrading.KindCopyStopped, "auto-sync stopped: the copies lost 950.00% of the allocation, at or over the copy stop-loss of 20%"}}
		if diff := cmp.Diff(want, mustNotes(t, services[0], f.follower.user)); diff != "" {
			t.Errorf("notifications mismatch (-want +got):\n%s", diff)
		}
	})
}
