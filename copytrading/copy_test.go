package copytrading_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/brokers/connect"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/copytrading"
	"github.com/tradekit/tradekit/internal/testkit"
	"github.com/tradekit/tradekit/marketdata"
)

// account is a user with an active connection and its portfolio.
type account struct{ user, conn, portfolio uuid.UUID }

// fixture is a leader who published their portfolio and a follower who
// follows it.
type fixture struct {
	leader, follower account
	slug, name       string // the leader profile's
	profile          uuid.UUID
	follow           copytrading.Follow
}

// trade returns how the copy engine names the leader's fill in its
// notifications.
func (f fixture) trade(bought bool, qty, symbol, price string) string {
	verb := "sold"
	if bought {
		verb = "bought"
	}
	return fmt.Sprintf("%s (%s) %s %s %s at %s", f.name, f.slug, verb, qty, symbol, price)
}

// mustFixture stores a leader with leaderEquity who publishes their
// portfolio, and a follower with followerEquity who follows it through s
// with in, whose LeaderProfileID it sets. Names are unique, so that any
// number of fixtures share a database.
func mustFixture(tb testing.TB, db *bun.DB, s *copytrading.Service, leaderEquity, followerEquity string, in copytrading.FollowInput) fixture {
	tb.Helper()
	ctx := context.Background()
	id := uuid.NewString()[:8]
	f := fixture{slug: "leader-" + id, name: "Leader " + id}
	f.leader.user, f.leader.conn, f.leader.portfolio = mustAccount(tb, db, f.slug+"@example.com", leaderEquity)
	f.follower.user, f.follower.conn, f.follower.portfolio = mustAccount(tb, db, "follower-"+id+"@example.com", followerEquity)
	p, err := s.Publish(ctx, f.leader.user, copytrading.PublishInput{PortfolioID: f.leader.portfolio, DisplayName: f.name, Slug: f.slug})
	if err != nil {
		tb.Fatal(err)
	}
	f.profile = p.ID
	in.LeaderProfileID = p.ID
	if f.follow, err = s.Follow(ctx, f.follower.user, in); err != nil {
		tb.Fatal(err)
	}
	return f
}

// mustAsset stores the stock symbol with a close of price today, and
// returns it as stored.
func mustAsset(tb testing.TB, db bun.IDB, symbol, price string) marketdata.Asset {
	tb.Helper()
	ctx := context.Background()
	md := marketdata.NewStore(db)
	a := marketdata.Asset{Symbol: symbol, Name: symbol, Type: marketdata.Stock, ExchangeID: marketdata.ExchangeID("NYSE"), Currency: "USD", IsActive: true}
	if err := md.SaveAsset(ctx, &a); err != nil {
		tb.Fatal(err)
	}
	c := decimal.RequireFromString(price)
	if err := md.SavePrices(ctx, []marketdata.Price{{AssetID: a.ID, Date: calendar.DateOf(time.Now().UTC()), Open: c, High: c, Low: c, Close: c, Volume: 1}}); err != nil {
		tb.Fatal(err)
	}
	a, err := md.AssetBySymbol(ctx, symbol)
	if err != nil {
		tb.Fatal(err)
	}
	return a
}

// leaderFill is a fill of a leader's portfolio, at a price of 50.
type leaderFill struct {
	Seq    int64 // its broker id is "f" and Seq
	Side   string
	Qty    string
	Symbol string // "ACME" when ""
	After  string // the leader's position after it; "" when unknown
	At     time.Time
}

// fillPrice is the price of every leaderFill.
const fillPrice = "50"

// mustFill stores the fill f of the portfolio and returns its id.
func mustFill(tb testing.TB, db bun.IDB, portfolio uuid.UUID, f leaderFill) string {
	tb.Helper()
	if f.Symbol == "" {
		f.Symbol = "ACME"
	}
	row := connect.Fill{PortfolioID: portfolio, BrokerID: fmt.Sprintf("f%d", f.Seq), Symbol: f.Symbol, Side: f.Side,
		Quantity: decimal.RequireFromString(f.Qty), Price: decimal.RequireFromString(fillPrice), FilledAt: f.At, Seq: f.Seq}
	if f.After != "" {
		after := decimal.RequireFromString(f.After)
		row.PositionAfter = &after
	}
	if _, err := db.NewInsert().Model(&row).Exec(context.Background()); err != nil {
		tb.Fatal(err)
	}
	return row.BrokerID
}

// mustPosition sets the portfolio's position in the asset to qty.
func mustPosition(tb testing.TB, db bun.IDB, portfolio uuid.UUID, a marketdata.Asset, qty string) {
	tb.Helper()
	ctx := context.Background()
	p := connect.Position{PortfolioID: portfolio, Symbol: a.Symbol, AssetID: &a.ID, Quantity: decimal.RequireFromString(qty), AverageCost: decimal.RequireFromString(fillPrice)}
	if _, err := db.NewDelete().Model(&p).WherePK().Exec(ctx); err != nil {
		tb.Fatal(err)
	}
	if _, err := db.NewInsert().Model(&p).Exec(ctx); err != nil {
		tb.Fatal(err)
	}
}

// orderIDOf is the id the fake placers give the order with the client
// order id, so that tests know it in advance.
func orderIDOf(clientOrderID string) uuid.UUID {
	return uuid.NewSHA1(uuid.NameSpaceOID, []byte(clientOrderID))
}

// storing returns a PlaceOrderFn that stores each order as the broker
// order orderIDOf(its client order id), with the status: a filled order
// filled in full at 50.
func storing(db bun.IDB, status brokers.OrderStatus) func(context.Context, uuid.UUID, connect.OrderInput) (connect.Placement, error) {
	return func(ctx context.Context, userID uuid.UUID, in connect.OrderInput) (connect.Placement, error) {
		now := time.Now().UTC()
		a, err := marketdata.NewStore(db).Asset(ctx, in.AssetID)
		if err != nil {
			return connect.Placement{}, err
		}
		o := connect.Order{ID: orderIDOf(in.ClientOrderID), UserID: userID, ConnectionID: in.ConnectionID, AssetID: a.ID,
			Symbol: a.Symbol, AssetType: string(a.Type), Side: in.Order.Side, Type: in.Order.Type, Quantity: in.Order.Quantity,
			Status: status, ClientOrderID: &in.ClientOrderID, ParamsHash: "test", CreatedAt: now, UpdatedAt: now}
		if status == brokers.Filled {
			price := decimal.RequireFromString(fillPrice)
			o.FilledQuantity, o.FilledPrice, o.FilledAt = &in.Order.Quantity, &price, &now
		}
		if _, err := db.NewInsert().Model(&o).Exec(ctx); err != nil {
			return connect.Placement{}, err
		}
		return connect.Placement{Order: o}, nil
	}
}

// event is a row of copy_events as the tests read it.
type event struct {
	FillID  string     `bun:"fill_id"`
	Status  string     `bun:"status"`
	Reason  string     `bun:"reason"`
	OrderID *uuid.UUID `bun:"order_id"`
}

// mustEvents returns the copy events of the follow, by fill id.
func mustEvents(tb testing.TB, db bun.IDB, follow uuid.UUID) []event {
	tb.Helper()
	out := []event{}
	err := db.NewSelect().Table("copy_events").Column("fill_id", "status", "reason", "order_id").
		Where("follow_id = ?", follow).Order("fill_id").Scan(context.Background(), &out)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// mustCopiedSeq returns the follow's watermark.
func mustCopiedSeq(tb testing.TB, db bun.IDB, follow uuid.UUID) int64 {
	tb.Helper()
	var seq int64
	if err := db.NewSelect().Table("follows").Column("copied_seq").Where("id = ?", follow).Scan(context.Background(), &seq); err != nil {
		tb.Fatal(err)
	}
	return seq
}

// note is a notification as the tests compare it.
type note struct{ Kind, Message string }

// mustNotes returns the user's notifications, newest first.
func mustNotes(tb testing.TB, s *copytrading.Service, user uuid.UUID) []note {
	tb.Helper()
	list, _, err := s.Notifications(context.Background(), user, false, 1, 100)
	if err != nil {
		tb.Fatal(err)
	}
	out := []note{}
	for _, n := range list {
		out = append(out, note{n.Kind, n.Message})
	}
	return out
}

// mustNoteData returns the data of the user's notifications, newest
// first, numbers as json.Number.
func mustNoteData(tb testing.TB, s *copytrading.Service, user uuid.UUID) []map[string]any {
	tb.Helper()
	list, _, err := s.Notifications(context.Background(), user, false, 1, 100)
	if err != nil {
		tb.Fatal(err)
	}
	out := []map[string]any{}
	for _, n := range list {
		var data map[string]any
		dec := json.NewDecoder(strings.NewReader(n.Data))
		dec.UseNumber()
		if err := dec.Decode(&data); err != nil {
			tb.Fatal(err)
		}
		out = append(out, data)
	}
	return out
}

// mustFollowRow returns the follow id as stored.
func mustFollowRow(tb testing.TB, db bun.IDB, id uuid.UUID) copytrading.Follow {
	tb.Helper()
	var f copytrading.Follow
	if err := db.NewSelect().Model(&f).Where("id = ?", id).Scan(context.Background()); err != nil {
		tb.Fatal(err)
	}
	return f
}

// pct returns a percentage control.
func pct(s string) *decimal.Decimal {
	d := decimal.RequireFromString(s)
	return &d
}

// testCopy runs the copy engine's passes with a fake OrderPlacer on a
// real database: what it places, records, notifies, and where it leaves
// the follow's watermark. Unless a case says otherwise, the leader's
// equity is 200,000, the follower's 40,000 with 25 % allocated (10,000),
// and ACME trades at 50.
func testCopy(t *testing.T, db *bun.DB) {
	ctx := context.Background()
	acme := mustAsset(t, db, "ACME", fillPrice)
	autoSync := copytrading.FollowInput{AutoSync: true, Controls: copytrading.ControlsPatch{AllocationPct: pct("25")}}

	t.Run("buys", func(t *testing.T) {
		p := &placer{}
		s := copytrading.New(db, copytrading.Config{Orders: p})
		in := autoSync
		in.Notifications = true
		f := mustFixture(t, db, s, "200000", "40000", in)
		at := time.Now().UTC().Add(time.Second)
		f1 := mustFill(t, db, f.leader.portfolio, leaderFill{Seq: 1, Side: "buy", Qty: "40", After: "40", At: at})
		f2 := mustFill(t, db, f.leader.portfolio, leaderFill{Seq: 2, Side: "buy", Qty: "20", After: "60", At: at.Add(time.Second)})
		if _, err := copyAll(ctx, s); err != nil {
			t.Fatal(err)
		}
		// 40 × 50 / 200,000 × 10,000 / 50 = 2, and 20 … = 1.
		id1, id2 := copytrading.CopyOrderID(f.follow.ID, f1), copytrading.CopyOrderID(f.follow.ID, f2)
		wantOrders := []connect.OrderInput{
			{ConnectionID: f.follower.conn, AssetID: acme.ID, Order: brokers.Order{Side: brokers.Buy, Type: brokers.Market, Quantity: decimal.New(2, 0)}, ClientOrderID: id1},
			{ConnectionID: f.follower.conn, AssetID: acme.ID, Order: brokers.Order{Side: brokers.Buy, Type: brokers.Market, Quantity: decimal.New(1, 0)}, ClientOrderID: id2},
		}
		if diff := cmp.Diff(wantOrders, p.orders); diff != "" {
			t.Errorf("orders mismatch (-want +got):\n%s", diff)
		}
		o1, o2 := orderIDOf(id1), orderIDOf(id2)
		wantEvents := []event{{FillID: f1, Status: "placed", OrderID: &o1}, {FillID: f2, Status: "placed", OrderID: &o2}}
		if diff := cmp.Diff(wantEvents, mustEvents(t, db, f.follow.ID)); diff != "" {
			t.Errorf("events mismatch (-want +got):\n%s", diff)
		}
		// Each notification tells the copy: its quantity and its order.
		wantNotes := []note{
			{copytrading.KindLeaderTrade, f.trade(true, "20", "ACME", "50") + "; copied: a market buy of 1 ACME, order " + o2.String()},
			{copytrading.KindLeaderTrade, f.trade(true, "40", "ACME", "50") + "; copied: a market buy of 2 ACME, order " + o1.String()},
		}
		if diff := cmp.Diff(wantNotes, mustNotes(t, s, f.follower.user)); diff != "" {
			t.Errorf("notifications mismatch (-want +got):\n%s", diff)
		}
		wantData := map[string]any{"followId": f.follow.ID.String(), "leaderProfileId": f.profile.String(), "fillId": f2,
			"copyStatus": "placed", "copySide": "buy", "copyQuantity": json.Number("1"), "orderId": o2.String()}
		if diff := cmp.Diff(wantData, mustNoteData(t, s, f.follower.user)[0]); diff != "" {
			t.Errorf("notification data mismatch (-want +got):\n%s", diff)
		}
		if got := mustCopiedSeq(t, db, f.follow.ID); got != 2 {
			t.Errorf("copied_seq = %d, want 2", got)
		}
		if n, err := s.Copy(ctx); err != nil || n != 0 {
			t.Errorf("second pass: Copy() = %d, %v; want 0, nil", n, err)
		}
		if len(p.orders) != 2 {
			t.Errorf("the second pass placed %v", p.placed()[2:])
		}
	})

	t.Run("sells sized from the copied position", func(t *testing.T) {
		p := &placer{PlaceOrderFn: storing(db, brokers.Filled)}
		s := copytrading.New(db, copytrading.Config{Orders: p})
		f := mustFixture(t, db, s, "200000", "40000", autoSync)
		at := time.Now().UTC().Add(time.Second)
		steps := []struct {
			fill     leaderFill
			leader   string // the leader's position as a sync left it, if not ""
			follower string // the follower's position before the fill
			want     string
		}{
			{fill: leaderFill{Seq: 1, Side: "buy", Qty: "40", After: "40"}, follower: "0", want: "buy 2 ACME"},
			// A quarter of the leader's 40: a quarter of the 2 copied.
			{fill: leaderFill{Seq: 2, Side: "sell", Qty: "10", After: "30"}, follower: "2", want: "sell 0.5 ACME"},
			// Without PositionAfter, the leader's position before is
			// what it holds (15) plus the 15 sold: half of 1.5 copied.
			{fill: leaderFill{Seq: 3, Side: "sell", Qty: "15"}, leader: "15", follower: "1.5", want: "sell 0.75 ACME"},
			// All the rest: what is left of the copies.
			{fill: leaderFill{Seq: 4, Side: "sell", Qty: "15", After: "0"}, follower: "0.75", want: "sell 0.75 ACME"},
		}
		for i, st := range steps {
			st.fill.At = at.Add(time.Duration(i) * time.Second)
			mustFill(t, db, f.leader.portfolio, st.fill)
			if st.leader != "" {
				mustPosition(t, db, f.leader.portfolio, acme, st.leader)
			}
			mustPosition(t, db, f.follower.portfolio, acme, st.follower)
			if _, err := copyAll(ctx, s); err != nil {
				t.Fatal(err)
			}
			if got := p.placed(); len(got) != i+1 || got[i] != st.want {
				t.Fatalf("after fill %d: copies %v, want the last %q", st.fill.Seq, got, st.want)
			}
		}
		if got := mustCopiedSeq(t, db, f.follow.ID); got != 4 {
			t.Errorf("copied_seq = %d, want 4", got)
		}
	})

	t.Run("a sell waits for the copies still open", func(t *testing.T) {
		t0 := time.Now().UTC().Truncate(time.Second)
		clk := testkit.NewClock(t0)
		p := &placer{PlaceOrderFn: storing(db, brokers.Pending)}
		s := copytrading.New(db, copytrading.Config{Orders: p, Now: clk.Now})
		f := mustFixture(t, db, s, "200000", "40000", autoSync)
		f1 := mustFill(t, db, f.leader.portfolio, leaderFill{Seq: 1, Side: "buy", Qty: "40", After: "40", At: t0.Add(time.Second)})
		clk.Set(t0.Add(2 * time.Second))
		if _, err := copyAll(ctx, s); err != nil {
			t.Fatal(err)
		}
		// The leader sells it all, then buys again, while the buy's
		// copy is pending: the sell waits, and so does the buy after
		// it.
		mustFill(t, db, f.leader.portfolio, leaderFill{Seq: 2, Side: "sell", Qty: "40", After: "0", At: t0.Add(3 * time.Second)})
		mustFill(t, db, f.leader.portfolio, leaderFill{Seq: 3, Side: "buy", Qty: "20", After: "20", At: t0.Add(4 * time.Second)})
		clk.Set(t0.Add(5 * time.Second))
		if _, err := copyAll(ctx, s); err != nil {
			t.Fatal(err)
		}
		o1 := orderIDOf(copytrading.CopyOrderID(f.follow.ID, f1))
		wantEvents := []event{{FillID: f1, Status: "placed", OrderID: &o1}}
		if diff := cmp.Diff(wantEvents, mustEvents(t, db, f.follow.ID)); diff != "" {
			t.Errorf("events while waiting mismatch (-want +got):\n%s", diff)
		}
		if got := mustCopiedSeq(t, db, f.follow.ID); got != 1 {
			t.Errorf("copied_seq while waiting = %d, want 1", got)
		}
		// The copy fills: the sell sells it, then the buy is copied.
		_, err := db.NewUpdate().Model((*connect.Order)(nil)).Set("status = ?, filled_quantity = ?, filled_price = ?", brokers.Filled, "2", fillPrice).
			Where("id = ?", o1).Exec(ctx)
		if err != nil {
			t.Fatal(err)
		}
		mustPosition(t, db, f.follower.portfolio, acme, "2")
		clk.Set(t0.Add(6 * time.Second))
		if _, err := copyAll(ctx, s); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"buy 2 ACME", "sell 2 ACME", "buy 1 ACME"}, p.placed()); diff != "" {
			t.Errorf("copies mismatch (-want +got):\n%s", diff)
		}
		if got := mustCopiedSeq(t, db, f.follow.ID); got != 3 {
			t.Errorf("copied_seq = %d, want 3", got)
		}
	})

	t.Run("a sell waits at most 30 seconds", func(t *testing.T) {
		t0 := time.Now().UTC().Truncate(time.Second)
		clk := testkit.NewClock(t0)
		p := &placer{PlaceOrderFn: storing(db, brokers.Pending)}
		s := copytrading.New(db, copytrading.Config{Orders: p, Now: clk.Now})
		f := mustFixture(t, db, s, "200000", "40000", autoSync)
		f1 := mustFill(t, db, f.leader.portfolio, leaderFill{Seq: 1, Side: "buy", Qty: "40", After: "40", At: t0.Add(time.Second)})
		clk.Set(t0.Add(2 * time.Second))
		if _, err := copyAll(ctx, s); err != nil {
			t.Fatal(err)
		}
		// The copy of 2 fills only 1, and stays open.
		_, err := db.NewUpdate().Model((*connect.Order)(nil)).Set("filled_quantity = ?", "1").
			Where("id = ?", orderIDOf(copytrading.CopyOrderID(f.follow.ID, f1))).Exec(ctx)
		if err != nil {
			t.Fatal(err)
		}
		mustPosition(t, db, f.follower.portfolio, acme, "1")
		sold := t0.Add(3 * time.Second)
		mustFill(t, db, f.leader.portfolio, leaderFill{Seq: 2, Side: "sell", Qty: "40", After: "0", At: sold})
		for _, wait := range []time.Duration{29 * time.Second, 31 * time.Second} {
			clk.Set(sold.Add(wait))
			if _, err := copyAll(ctx, s); err != nil {
				t.Fatal(err)
			}
		}
		// The sell, 31 s after the fill, sells what the copy filled.
		if diff := cmp.Diff([]string{"buy 2 ACME", "sell 1 ACME"}, p.placed()); diff != "" {
			t.Errorf("copies mismatch (-want +got):\n%s", diff)
		}
	})

	t.Run("fills before the follow only move the watermark", func(t *testing.T) {
		p := &placer{}
		s := copytrading.New(db, copytrading.Config{Orders: p})
		in := autoSync
		in.Notifications = true
		f := mustFixture(t, db, s, "200000", "40000", in)
		before := f.follow.CopySince.Add(-time.Hour)
		mustFill(t, db, f.leader.portfolio, leaderFill{Seq: 1, Side: "buy", Qty: "40", After: "40", At: before})
		mustFill(t, db, f.leader.portfolio, leaderFill{Seq: 2, Side: "sell", Qty: "40", After: "0", At: before.Add(time.Minute)})
		if _, err := copyAll(ctx, s); err != nil {
			t.Fatal(err)
		}
		if got := mustCopiedSeq(t, db, f.follow.ID); got != 2 {
			t.Errorf("copied_seq = %d, want 2", got)
		}
		if got := p.placed(); len(got) != 0 {
			t.Errorf("copies %v, want none", got)
		}
		if got := mustEvents(t, db, f.follow.ID); len(got) != 0 {
			t.Errorf("events %v, want none", got)
		}
		if got := mustNotes(t, s, f.follower.user); len(got) != 0 {
			t.Errorf("notifications %v, want none", got)
		}
	})

	t.Run("notifications only", func(t *testing.T) {
		p := &placer{}
		s := copytrading.New(db, copytrading.Config{Orders: p})
		f := mustFixture(t, db, s, "200000", "40000", copytrading.FollowInput{Notifications: true})
		f1 := mustFill(t, db, f.leader.portfolio, leaderFill{Seq: 1, Side: "sell", Qty: "12.5", After: "0", At: time.Now().UTC().Add(time.Second)})
		if _, err := copyAll(ctx, s); err != nil {
			t.Fatal(err)
		}
		if got := p.placed(); len(got) != 0 {
			t.Errorf("copies %v, want none", got)
		}
		if diff := cmp.Diff([]event{{FillID: f1, Status: "notified"}}, mustEvents(t, db, f.follow.ID)); diff != "" {
			t.Errorf("events mismatch (-want +got):\n%s", diff)
		}
		list, total, err := s.Notifications(ctx, f.follower.user, true, 1, 10)
		if err != nil || total != 1 {
			t.Fatalf("Notifications() = %d, %v; want 1", total, err)
		}
		if got, want := (note{list[0].Kind, list[0].Message}), (note{copytrading.KindLeaderTrade, f.trade(false, "12.5", "ACME", "50")}); got != want {
			t.Errorf("notification %+v, want %+v", got, want)
		}
		var data map[string]string
		if err := json.Unmarshal([]byte(list[0].Data), &data); err != nil {
			t.Fatal(err)
		}
		wantData := map[string]string{"followId": f.follow.ID.String(), "leaderProfileId": f.profile.String(), "fillId": f1}
		if diff := cmp.Diff(wantData, data); diff != "" {
			t.Errorf("notification data mismatch (-want +got):\n%s", diff)
		}
		if got := mustCopiedSeq(t, db, f.follow.ID); got != 1 {
			t.Errorf("copied_seq = %d, want 1", got)
		}
	})

	t.Run("follows with neither auto-sync nor notifications are not read", func(t *testing.T) {
		s := copytrading.New(db, copytrading.Config{Orders: &placer{}})
		f := mustFixture(t, db, s, "200000", "40000", copytrading.FollowInput{})
		mustFill(t, db, f.leader.portfolio, leaderFill{Seq: 1, Side: "buy", Qty: "40", At: time.Now().UTC().Add(time.Second)})
		if _, err := copyAll(ctx, s); err != nil {
			t.Fatal(err)
		}
		if got := mustCopiedSeq(t, db, f.follow.ID); got != 0 {
			t.Errorf("copied_seq = %d, want 0", got)
		}
	})

	t.Run("nothing after the leader unpublished", func(t *testing.T) {
		// A fill the leader's broker reports after they unpublished is
		// neither copied nor notified: the follow has stopped.
		p := &placer{}
		s := copytrading.New(db, copytrading.Config{Orders: p})
		in := autoSync
		in.Notifications = true
		f := mustFixture(t, db, s, "200000", "40000", in)
		if _, err := s.Unpublish(ctx, f.leader.user); err != nil {
			t.Fatal(err)
		}
		mustFill(t, db, f.leader.portfolio, leaderFill{Seq: 1, Side: "buy", Qty: "40", After: "40", At: time.Now().UTC().Add(time.Second)})
		if _, err := copyAll(ctx, s); err != nil {
			t.Fatal(err)
		}
		if got := p.placed(); len(got) != 0 {
			t.Errorf("copies %v, want none", got)
		}
		if got := mustNotes(t, s, f.follower.user); len(got) != 1 || got[0].Kind != copytrading.KindLeaderUnpublished {
			t.Errorf("notifications %v, want the unpublishing only", got)
		}
		if got := mustFollowRow(t, db, f.follow.ID); got.AutoSync || got.StoppedReason != copytrading.StoppedUnpublished {
			t.Errorf("follow: auto-sync %v, reason %q; want off, %q", got.AutoSync, got.StoppedReason, copytrading.StoppedUnpublished)
		}
	})

	rejections := []struct {
		name       string
		placement  connect.Placement
		err        error
		wantReason string
		withOrder  bool // the event and the notification name the rejected order
	}{
		{name: "placement rejected", placement: connect.Placement{Order: connect.Order{Status: brokers.Rejected, RejectRule: "max_position",
			RejectReason: "the position would exceed 5,000"}}, wantReason: "the position would exceed 5,000", withOrder: true},
		{name: "tradekit error", err: fmt.Errorf("connect: %w", tradekit.Errorf(tradekit.ErrConflict, "connection %s is disconnected", "c1")),
			wantReason: "connection c1 is disconnected"},
		{name: "param error", err: &tradekit.ParamError{Param: "quantity", Msg: "must be a whole number"}, wantReason: "quantity: must be a whole number"},
		{name: "unavailable", err: fmt.Errorf("paper: %w", tradekit.ErrUnavailable), wantReason: connect.UnavailableReason},
		{name: "unauthorized", err: fmt.Errorf("alpaca: token revoked: %w", tradekit.ErrUnauthorized), wantReason: connect.UnauthorizedReason},
	}
	for _, tt := range rejections {
		t.Run(tt.name, func(t *testing.T) {
			p := &placer{PlaceOrderFn: func(_ context.Context, userID uuid.UUID, in connect.OrderInput) (connect.Placement, error) {
				pl := tt.placement
				pl.Order.ID, pl.Order.UserID = orderIDOf(in.ClientOrderID), userID
				return pl, tt.err
			}}
			s := copytrading.New(db, copytrading.Config{Orders: p})
			f := mustFixture(t, db, s, "200000", "40000", autoSync)
			f1 := mustFill(t, db, f.leader.portfolio, leaderFill{Seq: 1, Side: "buy", Qty: "40", After: "40", At: time.Now().UTC().Add(time.Second)})
			if _, err := copyAll(ctx, s); err != nil {
				t.Fatalf("Copy() = %v, want the rejection recorded", err)
			}
			want := event{FillID: f1, Status: "rejected", Reason: tt.wantReason}
			if tt.withOrder {
				id := orderIDOf(copytrading.CopyOrderID(f.follow.ID, f1))
				want.OrderID = &id
			}
			if diff := cmp.Diff([]event{want}, mustEvents(t, db, f.follow.ID)); diff != "" {
				t.Errorf("events mismatch (-want +got):\n%s", diff)
			}
			// The follow has notifications off: only the rejection
			// is notified, with the copy's quantity (and its order, if
			// the broker had it).
			wantNotes := []note{{copytrading.KindCopyRejected, "copying " + f.trade(true, "40", "ACME", "50") +
				" (a market buy of 2 ACME) was rejected: " + tt.wantReason}}
			if diff := cmp.Diff(wantNotes, mustNotes(t, s, f.follower.user)); diff != "" {
				t.Errorf("notifications mismatch (-want +got):\n%s", diff)
			}
			wantData := map[string]any{"followId": f.follow.ID.String(), "leaderProfileId": f.profile.String(), "fillId": f1,
				"copyStatus": "rejected", "copySide": "buy", "copyQuantity": json.Number("2"), "reason": tt.wantReason}
			if want.OrderID != nil {
				wantData["orderId"] = want.OrderID.String()
			}
			if diff := cmp.Diff(wantData, mustNoteData(t, s, f.follower.user)[0]); diff != "" {
				t.Errorf("notification data mismatch (-want +got):\n%s", diff)
			}
			if got := mustCopiedSeq(t, db, f.follow.ID); got != 1 {
				t.Errorf("copied_seq = %d, want 1", got)
			}
		})
	}

	t.Run("rejection notified after the trade", func(t *testing.T) {
		p := &placer{PlaceOrderFn: func(context.Context, uuid.UUID, connect.OrderInput) (connect.Placement, error) {
			return connect.Placement{}, &tradekit.ParamError{Param: "quantity", Msg: "too small"}
		}}
		s := copytrading.New(db, copytrading.Config{Orders: p})
		in := autoSync
		in.Notifications = true
		f := mustFixture(t, db, s, "200000", "40000", in)
		mustFill(t, db, f.leader.portfolio, leaderFill{Seq: 1, Side: "buy", Qty: "40", After: "40", At: time.Now().UTC().Add(time.Second)})
		if _, err := copyAll(ctx, s); err != nil {
			t.Fatal(err)
		}
		wantNotes := []note{
			{copytrading.KindCopyRejected, "copying " + f.trade(true, "40", "ACME", "50") + " (a market buy of 2 ACME) was rejected: quantity: too small"},
			{copytrading.KindLeaderTrade, f.trade(true, "40", "ACME", "50") + "; the copy, a market buy of 2 ACME, was rejected: quantity: too small"},
		}
		if diff := cmp.Diff(wantNotes, mustNotes(t, s, f.follower.user)); diff != "" {
			t.Errorf("notifications mismatch (-want +got):\n%s", diff)
		}
	})

	t.Run("an unexpected error is returned", func(t *testing.T) {
		boom := errors.New("boom")
		p := &placer{PlaceOrderFn: func(context.Context, uuid.UUID, connect.OrderInput) (connect.Placement, error) {
			return connect.Placement{}, boom
		}}
		s := copytrading.New(db, copytrading.Config{Orders: p})
		f := mustFixture(t, db, s, "200000", "40000", autoSync)
		f1 := mustFill(t, db, f.leader.portfolio, leaderFill{Seq: 1, Side: "buy", Qty: "40", After: "40", At: time.Now().UTC().Add(time.Second)})
		if _, err := copyAll(ctx, s); !errors.Is(err, boom) {
			t.Fatalf("Copy() = %v, want %v", err, boom)
		}
		// The claim stays, to be taken up again once its lease lapses.
		if diff := cmp.Diff([]event{{FillID: f1, Status: "claimed"}}, mustEvents(t, db, f.follow.ID)); diff != "" {
			t.Errorf("events mismatch (-want +got):\n%s", diff)
		}
		if got := mustCopiedSeq(t, db, f.follow.ID); got != 0 {
			t.Errorf("copied_seq = %d, want 0", got)
		}
		if got := mustNotes(t, s, f.follower.user); len(got) != 0 {
			t.Errorf("notifications %v, want none", got)
		}
		// Leave the claim to no later pass of the database's tests.
		if _, err := s.Unfollow(ctx, f.follower.user, f.follow.ID); err != nil {
			t.Fatal(err)
		}
	})

	skips := []struct {
		name       string
		setup      func(t *testing.T, s *copytrading.Service, f fixture)
		fill       leaderFill
		wantReason string
		wantNotes  func(f fixture) []note
	}{
		{name: "not a Tradekit asset", fill: leaderFill{Side: "buy", Qty: "40", Symbol: "NOPE"}, wantReason: `NOPE is not a Tradekit asset`},
		{name: "nothing held to sell", fill: leaderFill{Side: "sell", Qty: "10", After: "30"}, wantReason: "you hold no ACME to sell"},
		{name: "no connection", fill: leaderFill{Side: "buy", Qty: "40"}, wantReason: "the follow has no connection to trade through",
			setup: func(t *testing.T, _ *copytrading.Service, f fixture) {
				if _, err := db.NewUpdate().Table("follows").Set("connection_id = NULL").Where("id = ?", f.follow.ID).Exec(ctx); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "connection not synced", fill: leaderFill{Side: "buy", Qty: "40"}, wantReason: "your connection has not synced yet",
			setup: func(t *testing.T, s *copytrading.Service, f fixture) {
				now := time.Now().UTC()
				c := connect.Connection{ID: uuid.New(), UserID: f.follower.user, Provider: "paper", Status: connect.Active, RedirectURL: "https://x.example/", CreatedAt: now, UpdatedAt: now}
				if _, err := db.NewInsert().Model(&c).Exec(ctx); err != nil {
					t.Fatal(err)
				}
				if _, err := s.UpdateFollow(ctx, f.follower.user, f.follow.ID, copytrading.FollowPatch{Controls: copytrading.ControlsPatch{ConnectionID: &c.ID}}); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "stopped by the copy stop-loss", fill: leaderFill{Side: "buy", Qty: "40"}, wantReason: "auto-sync stopped by the copy stop-loss",
			// An earlier copy bought 10 ACME at 1,000, now 50: 95 % of
			// the allocation lost.
			setup: func(t *testing.T, _ *copytrading.Service, f fixture) {
				mustCopyOrder(t, db, f, acme, copyOrder{side: brokers.Buy, qty: "10", price: "1000"})
			},
			wantNotes: func(f fixture) []note {
				return []note{{copytrading.KindCopyStopped,
					"auto-sync stopped: the copies lost 95.00% of the allocation, at or over the copy stop-loss of 20%"}}
			}},
	}
	for _, tt := range skips {
		t.Run("skipped/"+tt.name, func(t *testing.T) {
			p := &placer{}
			s := copytrading.New(db, copytrading.Config{Orders: p})
			in := autoSync
			in.Notifications = true
			f := mustFixture(t, db, s, "200000", "40000", in)
			if tt.setup != nil {
				tt.setup(t, s, f)
			}
			tt.fill.Seq, tt.fill.At = 1, time.Now().UTC().Add(time.Second)
			f1 := mustFill(t, db, f.leader.portfolio, tt.fill)
			if _, err := copyAll(ctx, s); err != nil {
				t.Fatal(err)
			}
			if got := p.placed(); len(got) != 0 {
				t.Errorf("copies %v, want none", got)
			}
			var got []event
			for _, e := range mustEvents(t, db, f.follow.ID) {
				if e.FillID == f1 {
					got = append(got, e)
				}
			}
			if diff := cmp.Diff([]event{{FillID: f1, Status: "skipped", Reason: tt.wantReason}}, got); diff != "" {
				t.Errorf("events mismatch (-want +got):\n%s", diff)
			}
			// The leader's trade is notified with why it was not
			// copied.
			symbol := tt.fill.Symbol
			if symbol == "" {
				symbol = "ACME"
			}
			trade := f.trade(tt.fill.Side == "buy", tt.fill.Qty, symbol, "50")
			wantNotes := []note{{copytrading.KindLeaderTrade, trade + "; not copied: " + tt.wantReason}}
			if tt.wantNotes != nil {
				wantNotes = append(wantNotes, tt.wantNotes(f)...)
			}
			byKind := cmpopts.SortSlices(func(a, b note) bool { return a.Kind < b.Kind })
			if diff := cmp.Diff(wantNotes, mustNotes(t, s, f.follower.user), byKind); diff != "" {
				t.Errorf("notifications mismatch (-want +got):\n%s", diff)
			}
			for _, data := range mustNoteData(t, s, f.follower.user) {
				if data["copyStatus"] != nil && (data["copyStatus"] != "skipped" || data["reason"] != tt.wantReason || data["copyQuantity"] != nil) {
					t.Errorf("notification data %v, want skipped with the reason and no quantity", data)
				}
			}
			if got := mustCopiedSeq(t, db, f.follow.ID); got != 1 {
				t.Errorf("copied_seq = %d, want 1", got)
			}
		})
	}
}
