package connect

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/marketdata"
)

// fixture is an env with a service, a user, an active connection
// without a portfolio yet, and ACME: closing at 100 for 30 days, ATR(14)
// 2. The broker holds 100,000 USD in cash.
type fixture struct {
	*env
	s    *Service
	user uuid.UUID
	conn Connection
	acme marketdata.Asset
}

func newFixture(t *testing.T, db *bun.DB, mods ...func(*Config)) *fixture {
	t.Helper()
	e := newEnv(t, db)
	f := &fixture{env: e, s: e.service(t, mods...)}
	f.user = e.mustUser(t)
	f.conn = e.mustConnection(t, f.user)
	f.acme = e.mustAsset(t, "ACME", "100", 30)
	return f
}

// countOrders returns how many orders the user has, by status.
func (f *fixture) countOrders(t *testing.T, user uuid.UUID) map[brokers.OrderStatus]int {
	t.Helper()
	var list []Order
	if err := f.db.NewSelect().Model(&list).Where("user_id = ?", user).Scan(context.Background()); err != nil {
		t.Fatal(err)
	}
	out := map[brokers.OrderStatus]int{}
	for _, o := range list {
		out[o.Status]++
	}
	return out
}

func TestPlaceOrder(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()

		t.Run("Exact", func(t *testing.T) { testPlaceOrderExact(t, db) })

		t.Run("FirstOrderPullsTheLedger", func(t *testing.T) {
			f := newFixture(t, db, func(c *Config) { c.SlippageBps = decimal.New(50, 0) })
			if _, err := NewStore(db).PortfolioOf(ctx, f.conn.ID); !errors.Is(err, tradekit.ErrNotFound) {
				t.Fatalf("PortfolioOf before the first order = %v, want ErrNotFound", err)
			}
			// The broker cannot be read after the order is sent: its watch
			// stops at once and the order stays as the broker acknowledged it.
			f.broker.set(func(b *fakeBroker) { b.Before = failOn("Order", -1, errDown) })
			p := mustPlace(t, f.s, f.user, withStop(marketOrder(f.conn, f.acme, brokers.Buy, "10"), "90"))
			o := p.Order
			if o.Status != brokers.Pending || p.Replayed || !p.Check.OK() {
				t.Fatalf("placement: status %s, replayed %v, violations %v", o.Status, p.Replayed, p.Check.Violations)
			}
			// The reservation of a market order: the close plus 50 bps.
			if o.ReservedPrice == nil || !o.ReservedPrice.Equal(dec("100.5")) {
				t.Errorf("ReservedPrice = %s, want 100.5", decimalString(o.ReservedPrice))
			}
			if got := brokerID(t, o); got != "b-1" || o.BrokerStatus != "new" {
				t.Errorf("broker id %s, status %q; want b-1, new", got, o.BrokerStatus)
			}
			if diff := cmp.Diff(o, f.mustOrder(t, o.ID)); diff != "" {
				t.Errorf("the order as stored differs from the one returned (-returned +stored):\n%s", diff)
			}
			want := []brokers.OrderRequest{{ClientOrderID: o.ID.String(), Symbol: "ACME", Side: brokers.Buy, Type: brokers.Market, Quantity: dec("10"),
				StopLossPrice: decp("90")}} // the stop-loss travels with the order
			if diff := cmp.Diff(want, f.broker.orderRequests()); diff != "" {
				t.Errorf("the broker's orders (-want +got):\n%s", diff)
			}
			pf := f.mustPortfolio(t, f.conn.ID)
			if !pf.Cash.Equal(dec("100000")) || !pf.Equity.Equal(dec("100000")) || pf.Currency != "USD" || pf.UserID != f.user {
				t.Errorf("the pulled ledger: cash %s, equity %s, currency %s", pf.Cash, pf.Equity, pf.Currency)
			}
			// Check saw the ATR(14) of the stored bars, 2, and the close.
			if !p.Check.Price.Equal(dec("100")) || !p.Check.Notional.Equal(dec("1000")) || !p.Check.PositionPct.Equal(dec("1")) {
				t.Errorf("check: price %s, notional %s, position %s%%", p.Check.Price, p.Check.Notional, p.Check.PositionPct)
			}
			c, err := NewStore(db).Connection(ctx, f.user, f.conn.ID)
			if err != nil {
				t.Fatal(err)
			}
			if c.ReconciledAt == nil || c.LedgerDrift != "" {
				t.Errorf("connection after the first pull: reconciled %v, drift %q", c.ReconciledAt, c.LedgerDrift)
			}
		})

		t.Run("LimitReservesItsLimit", func(t *testing.T) {
			f := newFixture(t, db, func(c *Config) { c.SlippageBps = decimal.New(50, 0) })
			p := mustPlace(t, f.s, f.user, limitOrder(f.conn, f.acme, brokers.Buy, "10", "95"))
			if p.Order.ReservedPrice == nil || !p.Order.ReservedPrice.Equal(dec("95")) {
				t.Errorf("ReservedPrice = %s, want 95", decimalString(p.Order.ReservedPrice))
			}
			if n := f.broker.count("Order"); n != 0 {
				t.Errorf("a limit order was watched: %d reads", n)
			}
		})

		t.Run("GuardrailRejectionKeepsEveryRule", func(t *testing.T) {
			f := newFixture(t, db)
			f.mustGuardrails(t, f.user, brokers.Guardrails{MaxDailyTrades: 25, MaxPositionSizePct: dec("1"),
				MaxPortfolioRiskPct: dec("10"), StopLossRequired: true, AllowedAssetTypes: []string{"etf"}})
			p := mustPlace(t, f.s, f.user, marketOrder(f.conn, f.acme, brokers.Buy, "20"))
			o := p.Order
			if o.Status != brokers.Rejected || o.RejectRule != brokers.RuleMaxPositionSizePct || o.ReservedPrice != nil || o.NextCheckAt != nil {
				t.Fatalf("order: status %s, rule %s, reserved %s, next check %v", o.Status, o.RejectRule, decimalString(o.ReservedPrice), o.NextCheckAt)
			}
			var rules []string
			for _, v := range p.Check.Violations {
				rules = append(rules, v.Rule)
			}
			if diff := cmp.Diff([]string{brokers.RuleMaxPositionSizePct, brokers.RuleStopLossRequired, brokers.RuleAllowedAssetTypes}, rules); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
			stored := f.mustOrder(t, o.ID)
			got, err := stored.Violations()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(p.Check.Violations, got); diff != "" {
				t.Errorf("stored violations (-checked +stored):\n%s", diff)
			}
			if stored.RejectReason != p.Check.Violations[0].Message || !strings.Contains(stored.RejectReason, "2.00% of equity") {
				t.Errorf("reject reason %q", stored.RejectReason)
			}
			if n := f.broker.count("PlaceOrder"); n != 0 {
				t.Errorf("a rejected order reached the broker %d times", n)
			}
			// A rejected order is no trade of the day.
			b, err := NewStore(db).book(ctx, f.conn.ID, f.user, brokers.UTCDay(start))
			if err != nil || b.Trades != 0 {
				t.Errorf("trades today = %d, %v; want 0", b.Trades, err)
			}
		})

		t.Run("ViolationsOfAnOrderWithoutRejection", func(t *testing.T) {
			vs, err := (&Order{}).Violations()
			if err != nil || vs != nil {
				t.Errorf("Violations() = %v, %v; want none", vs, err)
			}
			if _, err := (&Order{Rejection: "{"}).Violations(); err == nil {
				t.Error("a malformed rejection decoded")
			}
		})

		for _, tt := range []struct {
			name       string
			err        error
			wantStatus brokers.OrderStatus
			wantReason string
		}{
			{"BrokerRefusalRejects", &brokers.RefusedError{Reason: "insufficient buying power", Code: 40310000}, brokers.Rejected, "insufficient buying power"},
			{"LostAuthorizationRejects", fmt.Errorf("fake: %w", tradekit.ErrUnauthorized), brokers.Rejected,
				"the broker no longer accepts this connection's authorization: disconnect and connect again"},
			{"UnreachableBrokerLeavesItPending", fmt.Errorf("fake: %w", tradekit.ErrUnavailable), brokers.Pending, ""},
		} {
			t.Run(tt.name, func(t *testing.T) {
				f := newFixture(t, db)
				f.mustLedger(t, f.s, f.conn)
				f.broker.set(func(b *fakeBroker) {
					b.Before = func(m string) error {
						if m == "PlaceOrder" {
							return tt.err
						}
						return nil
					}
				})
				p := mustPlace(t, f.s, f.user, marketOrder(f.conn, f.acme, brokers.Buy, "10"))
				stored := f.mustOrder(t, p.Order.ID)
				for _, o := range []Order{p.Order, stored} {
					if o.Status != tt.wantStatus || o.RejectReason != tt.wantReason || o.BrokerOrderID != nil {
						t.Errorf("order: status %s, reason %q, broker id %v; want %s, %q, none", o.Status, o.RejectReason, o.BrokerOrderID, tt.wantStatus, tt.wantReason)
					}
				}
				if tt.wantStatus == brokers.Rejected && (stored.RejectRule != RuleBroker || stored.NextCheckAt != nil) {
					t.Errorf("rejected order: rule %q, next check %v", stored.RejectRule, stored.NextCheckAt)
				}
				if tt.wantStatus == brokers.Pending && (stored.NextCheckAt == nil || !stored.NextCheckAt.Equal(start.Add(time.Second))) {
					t.Errorf("pending order's next check %v, want a second after it was placed", stored.NextCheckAt)
				}
			})
		}

		t.Run("ReplayByClientOrderID", func(t *testing.T) {
			f := newFixture(t, db)
			first := mustPlace(t, f.s, f.user, withClientID(limitOrder(f.conn, f.acme, brokers.Buy, "10", "100"), "key-1"))
			// "10.000" and "1E2" are the quantity 10 and the price 100:
			// the same parameters.
			again := mustPlace(t, f.s, f.user, withClientID(limitOrder(f.conn, f.acme, brokers.Buy, "10.000", "1E2"), "key-1"))
			if !again.Replayed || again.Order.ID != first.Order.ID || len(again.Check.Rules) != 0 {
				t.Errorf("replay: replayed %v, order %s (first %s), %d rules", again.Replayed, again.Order.ID, first.Order.ID, len(again.Check.Rules))
			}
			if *again.Order.ClientOrderID != "key-1" || again.Order.Status != brokers.Pending {
				t.Errorf("replayed order: client id %q, status %s", *again.Order.ClientOrderID, again.Order.Status)
			}
			_, err := f.s.PlaceOrder(ctx, f.user, withClientID(limitOrder(f.conn, f.acme, brokers.Buy, "11", "100"), "key-1"))
			if !errors.Is(err, tradekit.ErrConflict) {
				t.Errorf("other parameters under a used client order id: %v, want ErrConflict", err)
			}
			if n := f.broker.requestCount(); n != 1 {
				t.Errorf("the broker received %d orders, want 1", n)
			}
			// Another user may use the same key.
			other := f.mustUser(t)
			oc := f.mustConnection(t, other)
			if p := mustPlace(t, f.s, other, withClientID(limitOrder(oc, f.acme, brokers.Buy, "10", "100"), "key-1")); p.Replayed {
				t.Error("another user's order with the same key was a replay")
			}
		})

		t.Run("ConcurrentReplaysPlaceOnce", func(t *testing.T) {
			f := newFixture(t, db)
			f.mustLedger(t, f.s, f.conn)
			two := f.service(t)
			const n = 6
			res := make([]Placement, n)
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					s := []*Service{f.s, two}[i%2]
					res[i], errs[i] = s.PlaceOrder(ctx, f.user, withClientID(limitOrder(f.conn, f.acme, brokers.Buy, "1", "99"), "same"))
				}()
			}
			wg.Wait()
			fresh := 0
			for i := range n {
				if errs[i] != nil {
					t.Fatalf("placement %d: %v", i, errs[i])
				}
				if !res[i].Replayed {
					fresh++
				}
				if res[i].Order.ID != res[0].Order.ID {
					t.Errorf("placement %d returned order %s, placement 0 %s", i, res[i].Order.ID, res[0].Order.ID)
				}
			}
			if fresh != 1 || f.broker.requestCount() != 1 {
				t.Errorf("%d placements were not replays and the broker received %d orders; want 1 and 1", fresh, f.broker.requestCount())
			}
		})

		t.Run("ClientOrderIDLength", func(t *testing.T) {
			f := newFixture(t, db)
			// MaxClientOrderID counts characters, not bytes.
			ok := strings.Repeat("é", MaxClientOrderID)
			if p := mustPlace(t, f.s, f.user, withClientID(limitOrder(f.conn, f.acme, brokers.Buy, "1", "99"), ok)); p.Order.Status != brokers.Pending {
				t.Errorf("a %d-character id: status %s", MaxClientOrderID, p.Order.Status)
			}
			_, err := f.s.PlaceOrder(ctx, f.user, withClientID(limitOrder(f.conn, f.acme, brokers.Buy, "1", "99"), strings.Repeat("x", MaxClientOrderID+1)))
			var pe *tradekit.ParamError
			if !errors.As(err, &pe) || pe.Param != "clientOrderId" {
				t.Errorf("a %d-character id: %v, want a ParamError for clientOrderId", MaxClientOrderID+1, err)
			}
		})

		t.Run("RecordsNothingWhenRefused", func(t *testing.T) {
			f := newFixture(t, db)
			for _, tt := range f.refusals(t) {
				t.Run(tt.name, func(t *testing.T) {
					_, err := f.s.PlaceOrder(ctx, tt.user, tt.in)
					if !errors.Is(err, tt.wantErr) {
						t.Fatalf("PlaceOrder = %v, want %v", err, tt.wantErr)
					}
					var pe *tradekit.ParamError
					if tt.wantParam != "" && (!errors.As(err, &pe) || pe.Param != tt.wantParam) {
						t.Errorf("PlaceOrder = %v, want a ParamError for %s", err, tt.wantParam)
					}
				})
			}
			if diff := cmp.Diff(map[brokers.OrderStatus]int{}, f.countOrders(t, f.user)); diff != "" {
				t.Errorf("orders recorded (-want +got):\n%s", diff)
			}
			if n := f.broker.count("PlaceOrder"); n != 0 {
				t.Errorf("the broker received %d orders", n)
			}
			// A limit order needs no stored price: it reserves its limit.
			nopx := f.mustAsset(t, "NOPX", "1", 0)
			p := mustPlace(t, f.s, f.user, limitOrder(f.conn, nopx, brokers.Buy, "1", "5"))
			if p.Order.Status != brokers.Pending || !p.Order.ReservedPrice.Equal(dec("5")) {
				t.Errorf("limit order without a price: %s, reserved %s", p.Order.Status, decimalString(p.Order.ReservedPrice))
			}
		})

		t.Run("DisconnectedConnection", func(t *testing.T) {
			f := newFixture(t, db)
			if _, err := f.s.Disconnect(ctx, f.user, f.conn.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := f.s.PlaceOrder(ctx, f.user, marketOrder(f.conn, f.acme, brokers.Buy, "1")); !errors.Is(err, tradekit.ErrConflict) {
				t.Errorf("PlaceOrder on a disconnected connection = %v, want ErrConflict", err)
			}
		})

		t.Run("FirstPullFails", func(t *testing.T) {
			f := newFixture(t, db)
			f.broker.set(func(b *fakeBroker) {
				b.Before = func(m string) error {
					if m == "Account" {
						return fmt.Errorf("fake: %w", tradekit.ErrUnavailable)
					}
					return nil
				}
			})
			if _, err := f.s.PlaceOrder(ctx, f.user, marketOrder(f.conn, f.acme, brokers.Buy, "1")); !errors.Is(err, tradekit.ErrUnavailable) {
				t.Errorf("PlaceOrder with the broker down before the first sync = %v, want ErrUnavailable", err)
			}
			if _, err := NewStore(db).PortfolioOf(ctx, f.conn.ID); !errors.Is(err, tradekit.ErrNotFound) {
				t.Errorf("a portfolio after a failed first pull: %v", err)
			}
			if diff := cmp.Diff(map[brokers.OrderStatus]int{}, f.countOrders(t, f.user)); diff != "" {
				t.Errorf("orders recorded (-want +got):\n%s", diff)
			}
		})

		t.Run("Quotes", func(t *testing.T) {
			f := newFixture(t, db)
			f.mustLedger(t, f.s, f.conn)
			md := marketdata.NewStore(db)
			today := calendar.DateOf(start)
			// OLD's only close is older than the ATR's window; FUT's is
			// after today; FEW has 10 bars, too few for an ATR(14).
			old := f.mustAsset(t, "OLD", "1", 0)
			fut := f.mustAsset(t, "FUT", "1", 0)
			few := f.mustAsset(t, "FEW", "50", 10)
			for _, p := range []marketdata.Price{
				{AssetID: old.ID, Date: today.AddDays(-200), Open: dec("40"), High: dec("41"), Low: dec("39"), Close: dec("40"), Volume: 1},
				{AssetID: fut.ID, Date: today.AddDays(3), Open: dec("40"), High: dec("41"), Low: dec("39"), Close: dec("40"), Volume: 1},
			} {
				if err := md.SavePrices(ctx, []marketdata.Price{p}); err != nil {
					t.Fatal(err)
				}
			}
			for _, tt := range []struct {
				asset           marketdata.Asset
				wantPrice, risk string
			}{
				// Without an ATR the stop is 10 % of the price away.
				{old, "40", "4"},
				{few, "50", "5"},
				// ACME's stop is 2 ATRs, 4, away.
				{f.acme, "100", "4"},
			} {
				r, err := f.s.PreviewOrder(ctx, f.user, marketOrder(f.conn, tt.asset, brokers.Buy, "1"))
				if err != nil {
					t.Fatalf("%s: %v", tt.asset.Symbol, err)
				}
				if !r.Price.Equal(dec(tt.wantPrice)) || !r.Risk.Equal(dec(tt.risk)) {
					t.Errorf("%s: price %s, risk %s; want %s, %s", tt.asset.Symbol, r.Price, r.Risk, tt.wantPrice, tt.risk)
				}
			}
			var pe *tradekit.ParamError
			if _, err := f.s.PlaceOrder(ctx, f.user, marketOrder(f.conn, fut, brokers.Buy, "1")); !errors.As(err, &pe) || pe.Param != "assetId" {
				t.Errorf("a market order on an asset priced only in the future: %v, want a ParamError for assetId", err)
			}
			// New prices change the price version: the quote follows.
			moved := f.mustAsset(t, "MOVED", "100", 30)
			if _, err := f.s.PreviewOrder(ctx, f.user, marketOrder(f.conn, moved, brokers.Buy, "1")); err != nil {
				t.Fatal(err)
			}
			if err := md.SavePrices(ctx, []marketdata.Price{{AssetID: moved.ID, Date: today, Open: dec("110"), High: dec("111"), Low: dec("109"), Close: dec("110"), Volume: 1}}); err != nil {
				t.Fatal(err)
			}
			r, err := f.s.PreviewOrder(ctx, f.user, marketOrder(f.conn, moved, brokers.Buy, "1"))
			if err != nil || !r.Price.Equal(dec("110")) {
				t.Errorf("after a new close of 110: price %s, %v", r.Price, err)
			}
		})

	})
}

// refusal is an order PlaceOrder and PreviewOrder refuse, and why.
type refusal struct {
	name      string
	user      uuid.UUID
	in        OrderInput
	wantErr   error
	wantParam string
}

// refusals stores what the orders that are refused need (a pending
// connection, another user, assets without a price or priced only in the
// future) and returns them.
func (f *fixture) refusals(t *testing.T) []refusal {
	t.Helper()
	ctx := context.Background()
	other := f.mustUser(t)
	pending := Connection{ID: uuid.New(), UserID: f.user, Provider: paper.Name, Status: Pending, RedirectURL: "https://app.example/",
		CreatedAt: start, UpdatedAt: start}
	if err := NewStore(f.db).InsertConnection(ctx, &pending); err != nil {
		t.Fatal(err)
	}
	nopx := f.mustAsset(t, "NOPX", "1", 0)
	fut := f.mustAsset(t, "FUT", "1", 0)
	today := calendar.DateOf(start)
	err := marketdata.NewStore(f.db).SavePrices(ctx, []marketdata.Price{{AssetID: fut.ID, Date: today.AddDays(3),
		Open: dec("40"), High: dec("41"), Low: dec("39"), Close: dec("40"), Volume: 1}})
	if err != nil {
		t.Fatal(err)
	}
	return []refusal{
		{"MalformedQuantity", f.user, marketOrder(f.conn, f.acme, brokers.Buy, "0"), tradekit.ErrInvalid, "quantity"},
		{"LimitWithoutPrice", f.user, OrderInput{ConnectionID: f.conn.ID, AssetID: f.acme.ID, Order: brokers.Order{Side: brokers.Buy, Type: brokers.Limit, Quantity: one}},
			tradekit.ErrInvalid, "limitPrice"},
		{"StopAboveThePrice", f.user, withStop(marketOrder(f.conn, f.acme, brokers.Buy, "1"), "120"), tradekit.ErrInvalid, "stopLossPrice"},
		{"MarketOrderWithoutPrice", f.user, marketOrder(f.conn, nopx, brokers.Buy, "1"), tradekit.ErrInvalid, "assetId"},
		{"PricedOnlyInTheFuture", f.user, marketOrder(f.conn, fut, brokers.Buy, "1"), tradekit.ErrInvalid, "assetId"},
		{"PendingConnection", f.user, marketOrder(pending, f.acme, brokers.Buy, "1"), tradekit.ErrConflict, ""},
		{"AnotherUsersConnection", other, marketOrder(f.conn, f.acme, brokers.Buy, "1"), tradekit.ErrNotFound, ""},
		{"UnknownConnection", f.user, marketOrder(Connection{ID: uuid.New()}, f.acme, brokers.Buy, "1"), tradekit.ErrNotFound, ""},
		// The asset's error comes before the connection's.
		{"UnknownAsset", f.user, marketOrder(f.conn, marketdata.Asset{ID: uuid.New()}, brokers.Buy, "1"), tradekit.ErrInvalid, "assetId"},
		{"UnknownAssetOnAnotherUsersConnection", other, marketOrder(f.conn, marketdata.Asset{ID: uuid.New()}, brokers.Buy, "1"),
			tradekit.ErrInvalid, "assetId"},
		{"UnknownAssetOnAPendingConnection", f.user, marketOrder(pending, marketdata.Asset{ID: uuid.New()}, brokers.Buy, "1"),
			tradekit.ErrInvalid, "assetId"},
	}
}

func TestPreviewOrder(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()

		t.Run("ChecksAgainstTheLedger", func(t *testing.T) {
			f := newFixture(t, db)
			f.mustLedger(t, f.s, f.conn)
			f.mustGuardrails(t, f.user, brokers.Guardrails{MaxDailyTrades: 2, MaxPositionSizePct: dec("20"), MaxPortfolioRiskPct: dec("10"),
				AllowedAssetTypes: brokers.AssetTypes()})
			r, err := f.s.PreviewOrder(ctx, f.user, marketOrder(f.conn, f.acme, brokers.Buy, "150"))
			if err != nil {
				t.Fatal(err)
			}
			if !r.OK() || len(r.Rules) != 6 || !r.PositionPct.Equal(dec("15")) || r.Trades != 1 {
				t.Errorf("preview: violations %v, %d rules, position %s%%, trades %d", r.Violations, len(r.Rules), r.PositionPct, r.Trades)
			}
			if diff := cmp.Diff(map[brokers.OrderStatus]int{}, f.countOrders(t, f.user)); diff != "" {
				t.Errorf("orders recorded by a preview (-want +got):\n%s", diff)
			}
			// An open order counts: 15 % held in reserve and 15 % more
			// break the 20 % limit, as they would if placed.
			mustPlace(t, f.s, f.user, limitOrder(f.conn, f.acme, brokers.Buy, "150", "100"))
			r, err = f.s.PreviewOrder(ctx, f.user, marketOrder(f.conn, f.acme, brokers.Buy, "150"))
			if err != nil {
				t.Fatal(err)
			}
			if r.OK() || r.Violations[0].Rule != brokers.RuleMaxPositionSizePct || !r.Exposure.Equal(dec("300")) || r.Trades != 2 {
				t.Errorf("preview beside an open order: violations %v, exposure %s, trades %d", r.Violations, r.Exposure, r.Trades)
			}
			if n := f.broker.requestCount(); n != 1 {
				t.Errorf("the broker received %d orders, want 1", n)
			}
		})

		// Last: a failed preview may leave a connection of the pool
		// reading an old snapshot on SQLite (see
		// TestPreviewFailureKeepsReadsFresh); nothing is written after.
		t.Run("Refusals", func(t *testing.T) {
			f := newFixture(t, db)
			f.mustLedger(t, f.s, f.conn)
			for _, tt := range f.refusals(t) {
				t.Run(tt.name, func(t *testing.T) {
					_, err := f.s.PreviewOrder(ctx, tt.user, tt.in)
					if !errors.Is(err, tt.wantErr) {
						t.Fatalf("PreviewOrder = %v, want %v", err, tt.wantErr)
					}
					var pe *tradekit.ParamError
					if tt.wantParam != "" && (!errors.As(err, &pe) || pe.Param != tt.wantParam) {
						t.Errorf("PreviewOrder = %v, want a ParamError for %s", err, tt.wantParam)
					}
				})
			}
		})
	})
}

// testPlaceOrderExact places orders of one user from many goroutines on
// two services at once, while the broker fills none: exactly the orders
// a sequential run accepts are accepted.
func testPlaceOrderExact(t *testing.T, db *bun.DB) {
	for _, tt := range []struct {
		name      string
		g         brokers.Guardrails
		in        func(f *fixture) OrderInput
		n         int
		accepted  int
		rejectBy  string
		wantPrice string
	}{
		// 30 × 100 is 3 % of 100,000: six fit under 20 %.
		{"MarketBuys", brokers.Guardrails{MaxDailyTrades: 100, MaxPositionSizePct: dec("20"), AllowedAssetTypes: brokers.AssetTypes()},
			func(f *fixture) OrderInput { return marketOrder(f.conn, f.acme, brokers.Buy, "30") }, 10, 6, brokers.RuleMaxPositionSizePct, "100"},
		// 80 at 100 is 8 %: two fit under 20 %.
		{"LimitBuys", brokers.Guardrails{MaxDailyTrades: 100, MaxPositionSizePct: dec("20"), AllowedAssetTypes: brokers.AssetTypes()},
			func(f *fixture) OrderInput { return limitOrder(f.conn, f.acme, brokers.Buy, "80", "100") }, 3, 2, brokers.RuleMaxPositionSizePct, "100"},
		{"DailyTrades", brokers.Guardrails{MaxDailyTrades: 3, AllowedAssetTypes: brokers.AssetTypes()},
			func(f *fixture) OrderInput { return limitOrder(f.conn, f.acme, brokers.Buy, "1", "90") }, 8, 3, brokers.RuleMaxDailyTrades, "90"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			f := newFixture(t, db)
			two := f.service(t)
			f.mustGuardrails(t, f.user, tt.g)
			// The market orders' watches stop at their first read.
			f.broker.set(func(b *fakeBroker) { b.Before = failOn("Order", -1, errDown) })
			f.mustLedger(t, f.s, f.conn)
			var wg sync.WaitGroup
			res := make([]Placement, tt.n)
			errs := make([]error, tt.n)
			for i := range tt.n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					s := []*Service{f.s, two}[i%2]
					res[i], errs[i] = s.PlaceOrder(ctx, f.user, tt.in(f))
				}()
			}
			wg.Wait()
			accepted := 0
			for i, p := range res {
				if errs[i] != nil {
					t.Fatalf("placement %d: %v", i, errs[i])
				}
				switch p.Order.Status {
				case brokers.Pending:
					accepted++
					if !p.Order.ReservedPrice.Equal(dec(tt.wantPrice)) {
						t.Errorf("reserved at %s, want %s", p.Order.ReservedPrice, tt.wantPrice)
					}
				case brokers.Rejected:
					if p.Order.RejectRule != tt.rejectBy {
						t.Errorf("rejected by %s, want %s", p.Order.RejectRule, tt.rejectBy)
					}
				default:
					t.Errorf("placement %d: status %s", i, p.Order.Status)
				}
			}
			if accepted != tt.accepted {
				t.Errorf("%d of %d orders accepted, want %d", accepted, tt.n, tt.accepted)
			}
			want := map[brokers.OrderStatus]int{brokers.Pending: tt.accepted, brokers.Rejected: tt.n - tt.accepted}
			if diff := cmp.Diff(want, f.countOrders(t, f.user)); diff != "" {
				t.Errorf("orders stored (-want +got):\n%s", diff)
			}
			if n := f.broker.requestCount(); n != tt.accepted {
				t.Errorf("the broker received %d orders, want %d", n, tt.accepted)
			}
		})
	}
}

// TestPreviewFailureKeepsReadsFresh previews orders before the
// connection's first sync. With the broker up, the first preview pulls the
// ledger and records nothing. With the broker down, every preview fails,
// after finding no ledger while its other reads may still run; every read
// after them, through any of the pool's connections, sees what was written
// since.
func TestPreviewFailureKeepsReadsFresh(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		f := newFixture(t, db)
		f.mustGuardrails(t, f.user, loose())
		first := f.mustConnection(t, f.user)
		if _, err := f.s.PreviewOrder(ctx, f.user, marketOrder(first, f.acme, brokers.Buy, "1")); err != nil {
			t.Fatalf("the first preview: %v", err)
		}
		if _, err := NewStore(db).PortfolioOf(ctx, first.ID); err != nil {
			t.Errorf("no ledger after the first preview: %v", err)
		}
		if diff := cmp.Diff(map[brokers.OrderStatus]int{}, f.countOrders(t, f.user)); diff != "" {
			t.Errorf("orders recorded by a preview (-want +got):\n%s", diff)
		}

		f.broker.set(func(b *fakeBroker) { b.Before = failOn("Account", -1, errDown) })
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 15 {
					if _, err := f.s.PreviewOrder(ctx, f.user, marketOrder(f.conn, f.acme, brokers.Buy, "1")); !errors.Is(err, tradekit.ErrUnavailable) {
						t.Errorf("PreviewOrder with the broker down = %v, want ErrUnavailable", err)
						return
					}
				}
			}()
		}
		wg.Wait()
		later := f.mustConnection(t, f.user)
		errs := make([]error, 16)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = NewStore(db).Connection(ctx, f.user, later.ID)
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("read %d of a connection stored after the previews: %v", i, err)
			}
		}
		// On SQLite, a connection of the pool that still reads the
		// database as it was keeps the WAL from being checkpointed past
		// that point.
		if db.Dialect().Name() == dialect.SQLite {
			var busy, frames, done int
			err := db.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &done)
			if err != nil || done < frames {
				t.Errorf("a connection of the pool holds an old snapshot: %d of %d WAL frames checkpointed (%v)", done, frames, err)
			}
		}
	})
}
