package paper_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	sdk "github.com/alpacahq/alpaca-trade-api-go/v3/alpaca"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/brokers/paper"
	"github.com/tradekit/tradekit/brokers/paper/portal"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/marketdata"
)

// ny is New York's time zone, the zone of Alpaca's auction rules.
var ny = func() *time.Location {
	loc, err := time.LoadLocation("America/New_York")
	if err != nil {
		panic(err)
	}
	return loc
}()

// at returns the instant of a wall-clock time in New York.
func at(year int, month time.Month, day, hour, minute int) time.Time {
	return time.Date(year, month, day, hour, minute, 0, 0, ny)
}

// mustBar stores the daily bar of symbol's asset on date with the open and
// the close given (high and low around them).
func mustBar(t *testing.T, db bun.IDB, symbol, date, open, close string) {
	t.Helper()
	ctx := context.Background()
	st := marketdata.NewStore(db)
	a, err := st.AssetBySymbol(ctx, symbol)
	if err != nil {
		t.Fatal(err)
	}
	day, err := calendar.ParseDate(date)
	if err != nil {
		t.Fatal(err)
	}
	o, c := d(open), d(close)
	if err := st.SavePrices(ctx, []marketdata.Price{{AssetID: a.ID, Date: day, Open: o, High: decimal.Max(o, c), Low: decimal.Min(o, c), Close: c, Volume: 1}}); err != nil {
		t.Fatal(err)
	}
}

// TestAuctionAcceptance checks Alpaca's acceptance rules for time in
// force opg and cls through the official SDK, on NYSE's calendar in New
// York time: an opg order is refused from 9:28 to 19:00 on a trading day,
// a cls order from 15:50 (10 minutes before an early close) to 19:00;
// otherwise each is accepted for the next auction. Only whole-share
// market and limit orders of class simple, in regular hours, may be opg
// or cls.
func TestAuctionAcceptance(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustPrices(t, db, "ACME", map[string]string{"2026-02-27": "100"})
		e := mustEnv(t, db, paper.Config{}, portal.Config{AccessTTL: 24 * 365 * time.Hour})
		tok, _ := e.connect(t)
		c := sdk.NewClient(sdk.ClientOpts{OAuth: tok.AccessToken, BaseURL: e.srv.URL + "/paper", HTTPClient: e.srv.Client(), RetryLimit: 1})
		buy := func(tif sdk.TimeInForce) error {
			_, err := c.PlaceOrder(sdk.PlaceOrderRequest{Symbol: "ACME", Qty: dec("1"), Side: sdk.Buy, Type: sdk.Limit, LimitPrice: dec("1"), TimeInForce: tif})
			return err
		}
		for _, tt := range []struct {
			name     string
			now      time.Time
			tif      sdk.TimeInForce
			accepted bool
		}{
			{"opg before the open's cutoff", at(2026, 3, 2, 9, 27), sdk.OPG, true},
			{"opg at 9:28", at(2026, 3, 2, 9, 28), sdk.OPG, false},
			{"opg in the session", at(2026, 3, 2, 10, 0), sdk.OPG, false},
			{"opg at 18:59", at(2026, 3, 2, 18, 59), sdk.OPG, false},
			{"opg from 19:00, for the next open", at(2026, 3, 2, 19, 0), sdk.OPG, true},
			{"opg on a Saturday", at(2026, 3, 7, 12, 0), sdk.OPG, true},
			{"opg on Good Friday", at(2026, 4, 3, 12, 0), sdk.OPG, true},
			{"cls in the session", at(2026, 3, 2, 15, 49), sdk.CLS, true},
			{"cls at 15:50", at(2026, 3, 2, 15, 50), sdk.CLS, false},
			{"cls after the close", at(2026, 3, 2, 17, 0), sdk.CLS, false},
			{"cls from 19:00, for the next close", at(2026, 3, 2, 19, 0), sdk.CLS, true},
			{"cls before an early close's cutoff", at(2026, 11, 27, 12, 49), sdk.CLS, true},
			{"cls at an early close's cutoff", at(2026, 11, 27, 12, 50), sdk.CLS, false},
			{"cls on a Sunday", at(2026, 3, 8, 12, 0), sdk.CLS, true},
		} {
			e.clock.Set(tt.now)
			err := buy(tt.tif)
			if tt.accepted && err != nil || !tt.accepted && !isStatus(err, http.StatusUnprocessableEntity) {
				t.Errorf("%s: %v, want accepted %t (or 422)", tt.name, err, tt.accepted)
			}
		}

		e.clock.Set(at(2026, 3, 2, 8, 0))
		for name, req := range map[string]sdk.PlaceOrderRequest{
			"a stop opg":            {Symbol: "ACME", Qty: dec("1"), Side: sdk.Buy, Type: sdk.Stop, StopPrice: dec("200"), TimeInForce: sdk.OPG},
			"a fractional opg":      {Symbol: "ACME", Qty: dec("0.5"), Side: sdk.Buy, Type: sdk.Market, TimeInForce: sdk.OPG},
			"a notional cls":        {Symbol: "ACME", Notional: dec("50"), Side: sdk.Buy, Type: sdk.Market, TimeInForce: sdk.CLS},
			"a bracket opg":         {Symbol: "ACME", Qty: dec("1"), Side: sdk.Buy, Type: sdk.Market, TimeInForce: sdk.OPG, OrderClass: sdk.Bracket, TakeProfit: &sdk.TakeProfit{LimitPrice: dec("120")}, StopLoss: &sdk.StopLoss{StopPrice: dec("90")}},
			"an extended hours cls": {Symbol: "ACME", Qty: dec("1"), Side: sdk.Buy, Type: sdk.Limit, LimitPrice: dec("100"), TimeInForce: sdk.CLS, ExtendedHours: true},
		} {
			if _, err := c.PlaceOrder(req); !isStatus(err, http.StatusUnprocessableEntity) {
				t.Errorf("%s: %v, want 422", name, err)
			}
		}
	})
}

// TestAuctionFills checks how opg and cls orders fill, through the
// official SDK: at the open (opg) or close (cls) of their session's daily
// bar, once the clock has passed the auction and the bar is stored,
// without slippage; a limit not met cancels the order, as does a session
// without a stored bar once a later one is stored; an order cannot be
// cancelled or replaced from its auction's cutoff to the auction.
func TestAuctionFills(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustPrices(t, db, "ACME", map[string]string{"2026-02-27": "100"})
		mustBar(t, db, "ACME", "2026-03-02", "101", "102")
		e := mustEnv(t, db, paper.Config{SlippageBps: d("10"), Commission: d("1")}, portal.Config{AccessTTL: 24 * 365 * time.Hour})
		tok, _ := e.connect(t)
		c := sdk.NewClient(sdk.ClientOpts{OAuth: tok.AccessToken, BaseURL: e.srv.URL + "/paper", HTTPClient: e.srv.Client(), RetryLimit: 1})
		place := func(side sdk.Side, qty string, limit *decimal.Decimal, tif sdk.TimeInForce) *sdk.Order {
			t.Helper()
			typ := sdk.Market
			if limit != nil {
				typ = sdk.Limit
			}
			o, err := c.PlaceOrder(sdk.PlaceOrderRequest{Symbol: "ACME", Qty: dec(qty), Side: side, Type: typ, LimitPrice: limit, TimeInForce: tif})
			if err != nil {
				t.Fatalf("place %s %s %s: %v", tif, side, qty, err)
			}
			return o
		}
		order := func(o *sdk.Order) *sdk.Order {
			t.Helper()
			got, err := c.GetOrder(o.ID)
			if err != nil {
				t.Fatal(err)
			}
			return got
		}
		wantFill := func(name string, o *sdk.Order, price string) {
			t.Helper()
			if got := order(o); got.Status != "filled" || got.FilledAvgPrice == nil || !got.FilledAvgPrice.Equal(d(price)) || got.TimeInForce != o.TimeInForce {
				t.Errorf("%s: %s at %v (%s), want filled at %s", name, got.Status, got.FilledAvgPrice, got.TimeInForce, price)
			}
		}
		wantStatus := func(name string, o *sdk.Order, status string) {
			t.Helper()
			if got := order(o); got.Status != status {
				t.Errorf("%s: %s, want %s", name, got.Status, status)
			}
		}

		// Monday 2 March, 10:00: market and limit on close, for today.
		e.clock.Set(at(2026, 3, 2, 10, 0))
		moc := place(sdk.Buy, "10", nil, sdk.CLS)
		loc := place(sdk.Buy, "2", dec("101.5"), sdk.CLS)
		if moc.TimeInForce != sdk.CLS || moc.Status != "new" {
			t.Fatalf("the cls order: %+v", moc)
		}
		if n := match(t, e.b); n != 0 {
			t.Errorf("%d orders filled before the close", n)
		}
		e.clock.Set(at(2026, 3, 2, 16, 0))
		match(t, e.b)
		wantFill("market on close", moc, "102") // the close, without the 10 bps of slippage
		wantStatus("limit on close under the close", loc, "canceled")
		if acct, err := c.GetAccount(); err != nil || !acct.Cash.Equal(d("98979")) { // 100000 − 10 × 102 − 1
			t.Errorf("the cash after the close: %v, %v", acct.Cash, err)
		}

		// Monday, 19:30: orders on open, for Tuesday.
		e.clock.Set(at(2026, 3, 2, 19, 30))
		moo := place(sdk.Buy, "5", nil, sdk.OPG)
		looMissed := place(sdk.Buy, "3", dec("99"), sdk.OPG)
		looSell := place(sdk.Sell, "2", dec("100"), sdk.OPG)
		early := place(sdk.Sell, "1", nil, sdk.OPG)
		if p, err := c.GetPosition("ACME"); err != nil || !p.QtyAvailable.Equal(d("7")) {
			t.Errorf("qty_available beside the opg sells: %+v, %v", p, err)
		}
		// Cancelled before the cutoff: allowed.
		if err := c.CancelOrder(early.ID); err != nil {
			t.Errorf("cancel an opg order before the cutoff: %v", err)
		}
		// From the cutoff to the open, neither cancel nor replace.
		e.clock.Set(at(2026, 3, 3, 9, 28))
		if err := c.CancelOrder(moo.ID); !isStatus(err, http.StatusUnprocessableEntity) {
			t.Errorf("cancel an opg order at 9:28: %v, want 422", err)
		}
		if _, err := c.ReplaceOrder(looMissed.ID, sdk.ReplaceOrderRequest{LimitPrice: dec("98")}); !isStatus(err, http.StatusUnprocessableEntity) {
			t.Errorf("replace an opg order at 9:28: %v, want 422", err)
		}
		if n := match(t, e.b); n != 0 {
			t.Errorf("%d orders filled before the open", n)
		}
		// At the open, without Tuesday's bar: nothing fills yet.
		e.clock.Set(at(2026, 3, 3, 9, 30))
		if n := match(t, e.b); n != 0 {
			t.Errorf("%d orders filled before Tuesday's bar was stored", n)
		}
		mustBar(t, db, "ACME", "2026-03-03", "101.25", "104")
		match(t, e.b)
		wantFill("market on open", moo, "101.25")
		wantStatus("limit on open over its limit", looMissed, "canceled")
		wantFill("limit sell on open", looSell, "101.25")
		if p, err := c.GetPosition("ACME"); err != nil || !p.Qty.Equal(d("13")) {
			t.Errorf("the position after the open: %+v, %v", p, err)
		}

		// An opg order for Wednesday, cancelled after the open while
		// Wednesday's bar is not stored: allowed.
		e.clock.Set(at(2026, 3, 3, 20, 0))
		wed := place(sdk.Buy, "1", nil, sdk.OPG)
		e.clock.Set(at(2026, 3, 4, 9, 31))
		if err := c.CancelOrder(wed.ID); err != nil {
			t.Errorf("cancel an opg order after the open: %v", err)
		}
		// A cls order for Thursday, whose bar is never stored: cancelled
		// once Friday's is.
		e.clock.Set(at(2026, 3, 5, 10, 0))
		thu := place(sdk.Sell, "1", nil, sdk.CLS)
		e.clock.Set(at(2026, 3, 6, 17, 0))
		match(t, e.b)
		wantStatus("cls without its session's bar, before a later one", thu, "new")
		mustBar(t, db, "ACME", "2026-03-06", "103", "103")
		match(t, e.b)
		wantStatus("cls without its session's bar", thu, "canceled")
	})
}
