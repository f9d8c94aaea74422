package connect

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/internal/dbtest"
)

// ledgerState is what a test expects of a connection's ledger.
type ledgerState struct {
	Cash, Equity string
	Version      int64
	FillSeq      int64
	Positions    []positionState
}

// positionState is what a test expects of a position.
type positionState struct {
	Symbol, Quantity, AverageCost, Stop string // Stop "" for none
}

// ledgerOf returns the connection's ledger as a ledgerState.
func (e *env) ledgerOf(t *testing.T, connectionID uuid.UUID) ledgerState {
	t.Helper()
	pf := e.mustPortfolio(t, connectionID)
	got := ledgerState{Cash: pf.Cash.String(), Equity: pf.Equity.String(), Version: pf.Version, FillSeq: pf.FillSeq}
	for _, p := range pf.Positions {
		stop := ""
		if p.StopLossPrice != nil {
			stop = p.StopLossPrice.String()
		}
		got.Positions = append(got.Positions, positionState{p.Symbol, p.Quantity.String(), p.AverageCost.String(), stop})
	}
	return got
}

// fillState is what a test expects of a recorded fill.
type fillState struct {
	Seq                                       int64
	BrokerID, Side, Quantity, Price, PosAfter string // PosAfter "" when nil
}

// fillsOf returns the portfolio's fills as fillStates, in seq order.
func (e *env) fillsOf(t *testing.T, portfolioID uuid.UUID) []fillState {
	t.Helper()
	var out []fillState
	for _, f := range e.mustFills(t, portfolioID) {
		after := ""
		if f.PositionAfter != nil {
			after = f.PositionAfter.String()
		}
		out = append(out, fillState{f.Seq, f.BrokerID, f.Side, f.Quantity.String(), f.Price.String(), after})
	}
	return out
}

func TestFills(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()

		t.Run("TrackerRecordsAFillOnce", func(t *testing.T) {
			f := newFixture(t, db)
			pf := f.mustLedger(t, f.s, f.conn)
			p := mustPlace(t, f.s, f.user, withStop(limitOrder(f.conn, f.acme, brokers.Buy, "10", "101"), "90"))
			id := brokerID(t, p.Order)
			f.broker.fill(id, dec("10"), dec("100.5"), dec("1"))
			if n := mustTrack(t, f.env, f.s); n != 1 {
				t.Fatalf("TrackOrders read %d orders, want 1", n)
			}
			o := f.mustOrder(t, p.Order.ID)
			if o.Status != brokers.Filled || !o.FilledQuantity.Equal(dec("10")) || !o.FilledPrice.Equal(dec("100.5")) ||
				!o.Commission.Equal(dec("1")) || o.FilledAt == nil || !o.FilledAt.Equal(start) || o.NextCheckAt != nil || o.BrokerStatus != "filled" {
				t.Errorf("order: %s %s at %s, commission %s, filled at %v, next check %v, broker %q", o.Status, decimalString(o.FilledQuantity),
					decimalString(o.FilledPrice), decimalString(o.Commission), o.FilledAt, o.NextCheckAt, o.BrokerStatus)
			}
			// 10 × 100.5 + 1 left the cash; equity lost the commission.
			want := ledgerState{Cash: "98994", Equity: "99999", Version: 1, FillSeq: 1,
				Positions: []positionState{{"ACME", "10", "100.5", "90"}}}
			if diff := cmp.Diff(want, f.ledgerOf(t, f.conn.ID)); diff != "" {
				t.Errorf("ledger (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]fillState{{1, id, "buy", "10", "100.5", "10"}}, f.fillsOf(t, pf.ID)); diff != "" {
				t.Errorf("fills (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]uuid.UUID{pf.ID}, f.onFills()); diff != "" {
				t.Errorf("OnFill calls (-want +got):\n%s", diff)
			}
			if !o.LedgerQty.Equal(dec("10")) || !o.LedgerCash.Equal(dec("-1006")) {
				t.Errorf("the order's share of the ledger: %s, %s; want 10, -1006", o.LedgerQty, o.LedgerCash)
			}
			// Another instance that sees the same state changes nothing.
			two := f.service(t)
			stale := p.Order
			now := f.clock.Now()
			final, err := two.record(ctx, &stale, f.broker.state(id), now, now)
			if err != nil || final {
				t.Errorf("second record = %v, %v; want false, nil", final, err)
			}
			if diff := cmp.Diff(want, f.ledgerOf(t, f.conn.ID)); diff != "" {
				t.Errorf("ledger after a second record (-want +got):\n%s", diff)
			}
			if n := len(f.onFills()); n != 1 {
				t.Errorf("OnFill called %d times, want 1", n)
			}
			if n := mustTrack(t, f.env, f.s); n != 0 {
				t.Errorf("TrackOrders read %d orders after the fill, want 0", n)
			}
		})

		t.Run("WatchRecordsAMarketFill", func(t *testing.T) {
			f := newFixture(t, db)
			pf := f.mustLedger(t, f.s, f.conn)
			f.broker.set(func(b *fakeBroker) { b.fillOnRead = true })
			p := mustPlace(t, f.s, f.user, marketOrder(f.conn, f.acme, brokers.Buy, "10"))
			if p.Order.Status != brokers.Pending {
				t.Fatalf("status on placement %s, want pending", p.Order.Status)
			}
			f.s.Wait() // the watch reads the order, filled at its first read
			if o := f.mustOrder(t, p.Order.ID); o.Status != brokers.Filled || !o.FilledPrice.Equal(dec("100")) {
				t.Errorf("order after the watch: %s at %s", o.Status, decimalString(o.FilledPrice))
			}
			want := ledgerState{Cash: "99000", Equity: "100000", Version: 1, FillSeq: 1, Positions: []positionState{{"ACME", "10", "100", ""}}}
			if diff := cmp.Diff(want, f.ledgerOf(t, f.conn.ID)); diff != "" {
				t.Errorf("ledger (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]uuid.UUID{pf.ID}, f.onFills()); diff != "" {
				t.Errorf("OnFill calls (-want +got):\n%s", diff)
			}
			if n := f.broker.count("Order"); n != 1 {
				t.Errorf("the watch read the order %d times, want once", n)
			}
		})

		t.Run("FilledOnPlacement", func(t *testing.T) {
			f := newFixture(t, db)
			pf := f.mustLedger(t, f.s, f.conn)
			f.broker.set(func(b *fakeBroker) { b.autoFill = true })
			p := mustPlace(t, f.s, f.user, withStop(marketOrder(f.conn, f.acme, brokers.Buy, "10"), "95"))
			if p.Order.Status != brokers.Filled {
				t.Fatalf("status %s, want filled", p.Order.Status)
			}
			// The stop-loss travels to the broker with the order.
			if rs := f.broker.orderRequests(); len(rs) != 1 || rs[0].StopLossPrice == nil || !rs[0].StopLossPrice.Equal(dec("95")) {
				t.Errorf("the broker got %+v, want the stop-loss 95", rs)
			}
			want := ledgerState{Cash: "99000", Equity: "100000", Version: 1, FillSeq: 1, Positions: []positionState{{"ACME", "10", "100", "95"}}}
			if diff := cmp.Diff(want, f.ledgerOf(t, f.conn.ID)); diff != "" {
				t.Errorf("ledger (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]fillState{{1, "b-1", "buy", "10", "100", "10"}}, f.fillsOf(t, pf.ID)); diff != "" {
				t.Errorf("fills (-want +got):\n%s", diff)
			}
			if n := f.broker.count("Order"); n != 0 {
				t.Errorf("a filled order was watched: %d reads", n)
			}
		})

		t.Run("ConcurrentRecordsApplyOnce", func(t *testing.T) {
			f := newFixture(t, db)
			pf := f.mustLedger(t, f.s, f.conn)
			two := f.service(t)
			p := mustPlace(t, f.s, f.user, limitOrder(f.conn, f.acme, brokers.Buy, "10", "100"))
			id := brokerID(t, p.Order)
			f.broker.fill(id, dec("10"), dec("100"), dec("0"))
			st := f.broker.state(id)
			var wg sync.WaitGroup
			var mu sync.Mutex
			finals := 0
			for i := range 6 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					o := p.Order
					now := f.clock.Now()
					final, err := []*Service{f.s, two}[i%2].record(ctx, &o, st, now, now)
					if err != nil {
						t.Error(err)
					}
					if final {
						mu.Lock()
						finals++
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			if finals != 1 {
				t.Errorf("%d records made the order final, want 1", finals)
			}
			want := ledgerState{Cash: "99000", Equity: "100000", Version: 1, FillSeq: 1, Positions: []positionState{{"ACME", "10", "100", ""}}}
			if diff := cmp.Diff(want, f.ledgerOf(t, f.conn.ID)); diff != "" {
				t.Errorf("ledger (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]uuid.UUID{pf.ID}, f.onFills()); diff != "" {
				t.Errorf("OnFill calls (-want +got):\n%s", diff)
			}
		})

		t.Run("PartialThenFullAppliesTheDelta", func(t *testing.T) {
			f := newFixture(t, db)
			pf := f.mustLedger(t, f.s, f.conn)
			p := mustPlace(t, f.s, f.user, limitOrder(f.conn, f.acme, brokers.Buy, "10", "100"))
			id := brokerID(t, p.Order)
			f.broker.fill(id, dec("4"), dec("100"), dec("0"))
			mustTrack(t, f.env, f.s)
			o := f.mustOrder(t, p.Order.ID)
			if o.Status != brokers.Pending || !o.FilledQuantity.Equal(dec("4")) || !o.LedgerQty.Equal(dec("4")) ||
				!o.LedgerCash.Equal(dec("-400")) || o.BrokerStatus != "partially_filled" || o.NextCheckAt == nil {
				t.Errorf("partly filled order: %s, filled %s, ledger %s / %s, broker %q", o.Status, decimalString(o.FilledQuantity),
					o.LedgerQty, o.LedgerCash, o.BrokerStatus)
			}
			want := ledgerState{Cash: "99600", Equity: "100000", Version: 1, FillSeq: 0, Positions: []positionState{{"ACME", "4", "100", ""}}}
			if diff := cmp.Diff(want, f.ledgerOf(t, f.conn.ID)); diff != "" {
				t.Errorf("ledger after 4 of 10 (-want +got):\n%s", diff)
			}
			// The rest of the order still holds exposure in reserve.
			open, err := NewStore(db).OpenQuantity(ctx, f.conn.ID, "ACME", brokers.Buy)
			if err != nil || !open.Equal(dec("6")) {
				t.Errorf("OpenQuantity = %s, %v; want 6", open, err)
			}
			if n := len(f.onFills()); n != 0 {
				t.Errorf("OnFill called %d times for a partial fill", n)
			}
			// Reading the same partial state again changes nothing.
			mustTrack(t, f.env, f.s)
			if diff := cmp.Diff(want, f.ledgerOf(t, f.conn.ID)); diff != "" {
				t.Errorf("ledger after reading 4 of 10 again (-want +got):\n%s", diff)
			}
			f.broker.fill(id, dec("6"), dec("100"), dec("0"))
			mustTrack(t, f.env, f.s)
			want = ledgerState{Cash: "99000", Equity: "100000", Version: 2, FillSeq: 1, Positions: []positionState{{"ACME", "10", "100", ""}}}
			if diff := cmp.Diff(want, f.ledgerOf(t, f.conn.ID)); diff != "" {
				t.Errorf("ledger after 10 of 10 (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]fillState{{1, id, "buy", "10", "100", "10"}}, f.fillsOf(t, pf.ID)); diff != "" {
				t.Errorf("fills (-want +got):\n%s", diff)
			}
			open, err = NewStore(db).OpenQuantity(ctx, f.conn.ID, "ACME", brokers.Buy)
			if err != nil || !open.IsZero() {
				t.Errorf("OpenQuantity after the fill = %s, %v; want 0", open, err)
			}
		})

		t.Run("SellsReduceThenClose", func(t *testing.T) {
			f := newFixture(t, db)
			pf := f.mustLedger(t, f.s, f.conn)
			f.broker.set(func(b *fakeBroker) { b.autoFill = true })
			mustPlace(t, f.s, f.user, withStop(marketOrder(f.conn, f.acme, brokers.Buy, "10"), "90"))
			f.broker.set(func(b *fakeBroker) { b.marks["ACME"] = dec("110") })
			mustPlace(t, f.s, f.user, marketOrder(f.conn, f.acme, brokers.Sell, "4"))
			want := ledgerState{Cash: "99440", Equity: "100000", Version: 2, FillSeq: 2, Positions: []positionState{{"ACME", "6", "100", "90"}}}
			if diff := cmp.Diff(want, f.ledgerOf(t, f.conn.ID)); diff != "" {
				t.Errorf("ledger after selling 4 (-want +got):\n%s", diff)
			}
			mustPlace(t, f.s, f.user, marketOrder(f.conn, f.acme, brokers.Sell, "6"))
			want = ledgerState{Cash: "100100", Equity: "100000", Version: 3, FillSeq: 3}
			if diff := cmp.Diff(want, f.ledgerOf(t, f.conn.ID)); diff != "" {
				t.Errorf("ledger after selling the rest (-want +got):\n%s", diff)
			}
			wantFills := []fillState{{1, "b-1", "buy", "10", "100", "10"}, {2, "b-2", "sell", "4", "110", "6"}, {3, "b-3", "sell", "6", "110", "0"}}
			if diff := cmp.Diff(wantFills, f.fillsOf(t, pf.ID)); diff != "" {
				t.Errorf("fills (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]uuid.UUID{pf.ID, pf.ID, pf.ID}, f.onFills()); diff != "" {
				t.Errorf("OnFill calls (-want +got):\n%s", diff)
			}
		})

		t.Run("LaterBuyKeepsTheStop", func(t *testing.T) {
			f := newFixture(t, db)
			f.mustLedger(t, f.s, f.conn)
			f.broker.set(func(b *fakeBroker) { b.autoFill = true })
			mustPlace(t, f.s, f.user, withStop(marketOrder(f.conn, f.acme, brokers.Buy, "10"), "90"))
			f.broker.set(func(b *fakeBroker) { b.marks["ACME"] = dec("103") })
			mustPlace(t, f.s, f.user, marketOrder(f.conn, f.acme, brokers.Buy, "5"))
			// (10 × 100 + 5 × 103) / 15 = 101
			want := ledgerState{Cash: "98485", Equity: "100000", Version: 2, FillSeq: 2, Positions: []positionState{{"ACME", "15", "101", "90"}}}
			if diff := cmp.Diff(want, f.ledgerOf(t, f.conn.ID)); diff != "" {
				t.Errorf("ledger (-want +got):\n%s", diff)
			}
		})

		t.Run("FillFoundBySyncFirst", func(t *testing.T) {
			// A sync finds the fill (the order is closed at the broker)
			// before the tracker reads the order: the tracker then adds
			// nothing, and the fill keeps seq 1, the portfolio's latest.
			f := newFixture(t, db)
			pf := f.mustLedger(t, f.s, f.conn)
			p := mustPlace(t, f.s, f.user, limitOrder(f.conn, f.acme, brokers.Buy, "10", "100"))
			id := brokerID(t, p.Order)
			f.broker.fill(id, dec("10"), dec("100"), dec("0"))
			f.clock.Add(time.Second)
			f.mustLedger(t, f.s, f.conn)
			mustTrack(t, f.env, f.s)
			if o := f.mustOrder(t, p.Order.ID); o.Status != brokers.Filled {
				t.Errorf("order: %s, want filled", o.Status)
			}
			got := f.ledgerOf(t, f.conn.ID)
			if diff := cmp.Diff([]positionState{{"ACME", "10", "100", ""}}, got.Positions); diff != "" || got.Cash != "99000" {
				t.Errorf("ledger: cash %s, want 99000; positions (-want +got):\n%s", got.Cash, diff)
			}
			if diff := cmp.Diff([]fillState{{1, id, "buy", "10", "100", ""}}, f.fillsOf(t, pf.ID)); diff != "" {
				t.Errorf("fills (-want +got):\n%s", diff)
			}
			if got.FillSeq != 1 {
				t.Errorf("the portfolio's fill seq is %d, its latest fill's 1", got.FillSeq)
			}
		})

		t.Run("NoLedgerYet", func(t *testing.T) {
			// A fill seen before the first sync moves the order's share
			// only: the first sync's snapshot holds the fill.
			f := newFixture(t, db)
			now := f.clock.Now()
			o := newOrder(f.user, limitOrder(f.conn, f.acme, brokers.Buy, "10", "100"), brokers.Order{Symbol: "ACME", AssetType: "stock",
				Side: brokers.Buy, Type: brokers.Limit, Quantity: dec("10"), LimitPrice: decp("100")}, "h", now)
			if _, err := db.NewInsert().Model(&o).Exec(ctx); err != nil {
				t.Fatal(err)
			}
			bid := "b-x"
			o.Status, o.BrokerOrderID, o.FilledQuantity, o.FilledPrice = brokers.Filled, &bid, decp("10"), decp("100")
			pid, err := NewStore(db).applyFill(ctx, &o, now)
			if err != nil || pid != uuid.Nil {
				t.Fatalf("applyFill = %v, %v; want no portfolio", pid, err)
			}
			if got := f.mustOrder(t, o.ID); !got.LedgerQty.Equal(dec("10")) || !got.LedgerCash.Equal(dec("-1000")) {
				t.Errorf("the order's share: %s, %s", got.LedgerQty, got.LedgerCash)
			}
		})

		t.Run("PartialFillsAtDifferentPrices", func(t *testing.T) { testPartialFillsAtDifferentPrices(t, db) })

		t.Run("LostAcknowledgementFilledBeforeSync", func(t *testing.T) { testLostAcknowledgementFilledBeforeSync(t, db) })
	})
}

// testPartialFillsAtDifferentPrices fills an order in two parts at
// different prices. The broker reports the average price of all the
// fills so far (brokers.OrderState.FilledPrice), so the second part cost
// (10 × 101.2 − 4 × 100) / 6 = 102 a unit; the position's average cost
// is the whole order's, 101.2, and the ledger's equity moves by the
// commissions only (none here), as the position is carried at cost.
func testPartialFillsAtDifferentPrices(t *testing.T, db *bun.DB) {
	f := newFixture(t, db)
	f.mustLedger(t, f.s, f.conn)
	p := mustPlace(t, f.s, f.user, limitOrder(f.conn, f.acme, brokers.Buy, "10", "105"))
	id := brokerID(t, p.Order)
	f.broker.fill(id, dec("4"), dec("100"), dec("0"))
	mustTrack(t, f.env, f.s)
	f.broker.fill(id, dec("6"), dec("102"), dec("0"))
	if got := f.broker.state(id).FilledPrice; !got.Equal(dec("101.2")) {
		t.Fatalf("the broker's average price %s, want 101.2", got)
	}
	mustTrack(t, f.env, f.s)
	want := ledgerState{Cash: "98988", Equity: "100000", Version: 2, FillSeq: 1, Positions: []positionState{{"ACME", "10", "101.2", ""}}}
	if diff := cmp.Diff(want, f.ledgerOf(t, f.conn.ID)); diff != "" {
		t.Errorf("ledger (-want +got):\n%s", diff)
	}
}

func TestDrift(t *testing.T) {
	t.Parallel()
	pos := func(sym, qty string) Position { return Position{Symbol: sym, Quantity: dec(qty)} }
	for _, tt := range []struct {
		name      string
		ledger    Portfolio
		cash      string
		positions []Position
		want      string
	}{
		{"Equal", Portfolio{Cash: dec("100"), Positions: []Position{pos("A", "1")}}, "100.00", []Position{pos("A", "1.0")}, ""},
		{"NothingHeld", Portfolio{Cash: dec("5")}, "5", nil, ""},
		{"Cash", Portfolio{Cash: dec("100")}, "90", nil, "cash: ledger 100, broker 90"},
		{"Quantity", Portfolio{Cash: dec("1"), Positions: []Position{pos("A", "1")}}, "1", []Position{pos("A", "2")}, "A: ledger 1, broker 2"},
		{"OnlyInTheLedger", Portfolio{Cash: dec("1"), Positions: []Position{pos("B", "3")}}, "1", nil, "B: ledger 3, broker 0"},
		{"OnlyAtTheBroker", Portfolio{Cash: dec("1")}, "1", []Position{pos("C", "-2")}, "C: ledger 0, broker -2"},
		{"SortedBySymbol", Portfolio{Cash: dec("1"), Positions: []Position{pos("Z", "1"), pos("A", "1")}}, "2",
			[]Position{pos("M", "1"), pos("A", "1")}, "cash: ledger 1, broker 2; M: ledger 0, broker 1; Z: ledger 1, broker 0"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := drift(tt.ledger, dec(tt.cash), tt.positions); got != tt.want {
				t.Errorf("drift() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSideSign(t *testing.T) {
	t.Parallel()
	for side, want := range map[brokers.Side]string{brokers.Buy: "1", brokers.Sell: "-1"} {
		if got := sideSign(side); !got.Equal(dec(want)) {
			t.Errorf("sideSign(%s) = %s, want %s", side, got, want)
		}
	}
}

// testLostAcknowledgementFilledBeforeSync loses the broker's answer to an
// order that the broker accepted and filled at once. A sync then takes
// the account, the fill included, before the tracker learns of the
// order: the tracker must not apply the fill to the ledger a second time.
func testLostAcknowledgementFilledBeforeSync(t *testing.T, db *bun.DB) {
	f := newFixture(t, db)
	f.mustLedger(t, f.s, f.conn)
	lost := true
	f.broker.set(func(b *fakeBroker) {
		b.autoFill = true
		b.After = func(m string) error {
			if m == "PlaceOrder" && lost {
				lost = false
				return fmt.Errorf("fake: the answer was lost: %w", tradekit.ErrUnavailable)
			}
			return nil
		}
	})
	p := mustPlace(t, f.s, f.user, marketOrder(f.conn, f.acme, brokers.Buy, "10"))
	if p.Order.Status != brokers.Pending || p.Order.BrokerOrderID != nil {
		t.Fatalf("order after a lost answer: %s, broker id %v", p.Order.Status, p.Order.BrokerOrderID)
	}
	f.clock.Add(time.Second)
	f.mustLedger(t, f.s, f.conn)
	want := ledgerState{Cash: "99000", Equity: "100000", Version: 1, FillSeq: 1, Positions: []positionState{{"ACME", "10", "100", ""}}}
	if diff := cmp.Diff(want, f.ledgerOf(t, f.conn.ID)); diff != "" {
		t.Fatalf("ledger after the sync (-want +got):\n%s", diff)
	}
	mustTrack(t, f.env, f.s)
	if o := f.mustOrder(t, p.Order.ID); o.Status != brokers.Filled {
		t.Errorf("order after tracking: %s, want filled", o.Status)
	}
	got := f.ledgerOf(t, f.conn.ID)
	if diff := cmp.Diff(want.Positions, got.Positions); diff != "" || got.Cash != want.Cash {
		t.Errorf("the fill was applied twice: cash %s, want %s; positions (-want +got):\n%s", got.Cash, want.Cash, diff)
	}
	if got.FillSeq != want.FillSeq {
		t.Errorf("the fill was recorded twice: fill seq %d, want %d", got.FillSeq, want.FillSeq)
	}
}
