package paper_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	sdk "github.com/alpacahq/alpaca-trade-api-go/v3/alpaca"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/brokers/paper"
	"github.com/tradekit/tradekit/brokers/paper/portal"
	"github.com/tradekit/tradekit/internal/dbtest"
)

// TestOrderClasses drives OCO, OTO, stop_limit, trailing_stop, ioc and fok
// orders through the official SDK, moving the close between matching
// passes, and checks which orders fill, at what price, and which are
// cancelled.
func TestOrderClasses(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustPrices(t, db, "ACME", map[string]string{"2026-02-27": "100", "2026-03-02": "100"})
		e := mustEnv(t, db, paper.Config{}, portal.Config{AccessTTL: 72 * time.Hour})
		tok, _ := e.connect(t)
		c := sdk.NewClient(sdk.ClientOpts{OAuth: tok.AccessToken, BaseURL: e.srv.URL + "/paper", HTTPClient: e.srv.Client(), RetryLimit: 1})
		place := func(req sdk.PlaceOrderRequest) *sdk.Order {
			t.Helper()
			req.Symbol = "ACME"
			o, err := c.PlaceOrder(req)
			if err != nil {
				t.Fatalf("PlaceOrder(%+v): %v", req, err)
			}
			return o
		}
		status := func(id string) *sdk.Order {
			t.Helper()
			o, err := c.GetOrder(id)
			if err != nil {
				t.Fatal(err)
			}
			return o
		}
		setClose := func(v string) {
			t.Helper()
			mustClose(t, db, "ACME", "2026-03-02", v)
			match(t, e.b)
		}

		// ioc and fok: fill now at the close, or are cancelled.
		ioc := place(sdk.PlaceOrderRequest{Qty: dec("20"), Side: sdk.Buy, Type: sdk.Market, TimeInForce: sdk.IOC})
		fok := place(sdk.PlaceOrderRequest{Qty: dec("1"), Side: sdk.Buy, Type: sdk.Limit, LimitPrice: dec("90"), TimeInForce: sdk.FOK})
		match(t, e.b)
		if o := status(ioc.ID); o.Status != "filled" || !o.FilledAvgPrice.Equal(d("100")) {
			t.Errorf("ioc market buy: %s at %v", o.Status, o.FilledAvgPrice)
		}
		if o := status(fok.ID); o.Status != "canceled" || o.CanceledAt == nil {
			t.Errorf("fok limit buy below the close: %s", o.Status)
		}

		// OCO: a limit sell at 110 and a stop sell at 95, both open; the
		// close reaches 111, the limit fills, the stop is cancelled.
		oco := place(sdk.PlaceOrderRequest{Qty: dec("5"), Side: sdk.Sell, Type: sdk.Limit, TimeInForce: sdk.GTC, OrderClass: sdk.OCO,
			TakeProfit: &sdk.TakeProfit{LimitPrice: dec("110")}, StopLoss: &sdk.StopLoss{StopPrice: dec("95")}})
		if oco.OrderClass != sdk.OCO || !oco.LimitPrice.Equal(d("110")) || len(oco.Legs) != 1 || oco.Legs[0].Status != "new" || oco.Legs[0].Side != sdk.Sell {
			t.Fatalf("the OCO order: %+v", oco)
		}
		if p, err := c.GetPosition("ACME"); err != nil || !p.QtyAvailable.Equal(d("15")) {
			t.Errorf("qty_available under an OCO order: %+v, %v (want 15: its two orders count once)", p, err)
		}
		// A sell of more than is left beside the OCO exit is refused.
		if _, err := c.PlaceOrder(sdk.PlaceOrderRequest{Symbol: "ACME", Qty: dec("16"), Side: sdk.Sell, Type: sdk.Market, TimeInForce: sdk.Day}); !isStatus(err, http.StatusForbidden) {
			t.Errorf("a sell beside the OCO order: %v, want 403", err)
		}
		match(t, e.b)
		if o := status(oco.ID); o.Status != "new" || o.Legs[0].Status != "new" {
			t.Errorf("the OCO order at 100: %s, leg %s", o.Status, o.Legs[0].Status)
		}
		setClose("111")
		if o := status(oco.ID); o.Status != "filled" || !o.FilledAvgPrice.Equal(d("111")) || o.Legs[0].Status != "canceled" {
			t.Errorf("the OCO order at 111: %s at %v, leg %s", o.Status, o.FilledAvgPrice, o.Legs[0].Status)
		}

		// stop_limit: a sell stop at 105, limit 104. The close falls to 103:
		// triggered, but below the limit; back to 104.5: fills at 104.5,
		// although the close is above the stop again.
		sl := place(sdk.PlaceOrderRequest{Qty: dec("2"), Side: sdk.Sell, Type: sdk.StopLimit, StopPrice: dec("105"), LimitPrice: dec("104"), TimeInForce: sdk.GTC})
		setClose("106")
		if o := status(sl.ID); o.Status != "new" {
			t.Errorf("stop_limit above its stop: %s", o.Status)
		}
		setClose("103")
		if o := status(sl.ID); o.Status != "new" {
			t.Errorf("stop_limit triggered below its limit: %s", o.Status)
		}
		setClose("105.5")
		if o := status(sl.ID); o.Status != "filled" || !o.FilledAvgPrice.Equal(d("105.5")) {
			t.Errorf("stop_limit after its trigger: %s at %v", o.Status, o.FilledAvgPrice)
		}

		// trailing_stop: a sell trailing 5%: the mark follows the close
		// up to 120 (stop 114), and the order fills when the close falls
		// to 114.
		tr := place(sdk.PlaceOrderRequest{Qty: dec("3"), Side: sdk.Sell, Type: sdk.TrailingStop, TrailPercent: dec("5"), TimeInForce: sdk.GTC})
		if tr.HWM == nil || !tr.HWM.Equal(d("105.5")) || tr.StopPrice == nil || !tr.StopPrice.Equal(d("100.225")) {
			t.Errorf("the trailing stop placed: hwm %v, stop %v", tr.HWM, tr.StopPrice)
		}
		setClose("120")
		if o := status(tr.ID); o.Status != "new" || !o.HWM.Equal(d("120")) || !o.StopPrice.Equal(d("114")) {
			t.Errorf("the trailing stop at 120: %s, hwm %v, stop %v", o.Status, o.HWM, o.StopPrice)
		}
		setClose("115")
		if o := status(tr.ID); o.Status != "new" || !o.HWM.Equal(d("120")) {
			t.Errorf("the trailing stop at 115: %s, hwm %v", o.Status, o.HWM)
		}
		setClose("114")
		if o := status(tr.ID); o.Status != "filled" || !o.FilledAvgPrice.Equal(d("114")) {
			t.Errorf("the trailing stop at 114: %s at %v", o.Status, o.FilledAvgPrice)
		}

		// OTO: a limit buy with a take-profit leg, held; cancelling the
		// parent cancels the leg.
		oto := place(sdk.PlaceOrderRequest{Qty: dec("1"), Side: sdk.Buy, Type: sdk.Limit, LimitPrice: dec("50"), TimeInForce: sdk.GTC,
			OrderClass: sdk.OTO, TakeProfit: &sdk.TakeProfit{LimitPrice: dec("200")}})
		if len(oto.Legs) != 1 || oto.Legs[0].Status != "held" || oto.Legs[0].Side != sdk.Sell {
			t.Fatalf("the OTO order: %+v", oto)
		}
		if err := c.CancelOrder(oto.ID); err != nil {
			t.Fatal(err)
		}
		if o := status(oto.ID); o.Status != "canceled" || o.Legs[0].Status != "canceled" {
			t.Errorf("the cancelled OTO order: %s, leg %s", o.Status, o.Legs[0].Status)
		}
		if _, err := c.ReplaceOrder(oto.Legs[0].ID, sdk.ReplaceOrderRequest{LimitPrice: dec("190")}); !isStatus(err, http.StatusUnprocessableEntity) {
			t.Errorf("replacing a leg: %v, want 422", err)
		}

		// Refused: brackets without a stop, exits on the wrong side of
		// each other, an OCO market order.
		for name, req := range map[string]sdk.PlaceOrderRequest{
			"bracket without stop_loss": {Qty: dec("1"), Side: sdk.Buy, Type: sdk.Market, TimeInForce: sdk.Day, OrderClass: sdk.Bracket, TakeProfit: &sdk.TakeProfit{LimitPrice: dec("120")}},
			"exits crossed": {Qty: dec("1"), Side: sdk.Buy, Type: sdk.Market, TimeInForce: sdk.Day, OrderClass: sdk.Bracket,
				TakeProfit: &sdk.TakeProfit{LimitPrice: dec("90")}, StopLoss: &sdk.StopLoss{StopPrice: dec("95")}},
			"oco market": {Qty: dec("1"), Side: sdk.Sell, Type: sdk.Market, TimeInForce: sdk.Day, OrderClass: sdk.OCO,
				TakeProfit: &sdk.TakeProfit{LimitPrice: dec("120")}, StopLoss: &sdk.StopLoss{StopPrice: dec("95")}},
			"oto with both": {Qty: dec("1"), Side: sdk.Buy, Type: sdk.Market, TimeInForce: sdk.Day, OrderClass: sdk.OTO,
				TakeProfit: &sdk.TakeProfit{LimitPrice: dec("120")}, StopLoss: &sdk.StopLoss{StopPrice: dec("95")}},
			"trail and stop": {Qty: dec("1"), Side: sdk.Sell, Type: sdk.TrailingStop, TrailPrice: dec("1"), TrailPercent: dec("1"), TimeInForce: sdk.Day},
		} {
			req.Symbol = "ACME"
			if _, err := c.PlaceOrder(req); !isStatus(err, http.StatusUnprocessableEntity) {
				t.Errorf("PlaceOrder(%s): %v, want 422", name, err)
			}
		}
	})
}

// TestStopLossLeg places a buy with a stop-loss through Tradekit's own
// Alpaca client, as brokers/connect sends one: the paper broker holds an
// OTO order whose stop leg rests once the buy fills, fills when the close
// falls to the stop, and is listed by the client's Fills as a sell of
// its own, which the sync records.
func TestStopLossLeg(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustPrices(t, db, "ACME", map[string]string{"2026-03-02": "100"})
		e := mustEnv(t, db, paper.Config{})
		c, _ := e.trader(t)
		ctx := context.Background()
		stop := d("95")
		st, err := c.PlaceOrder(ctx, brokers.OrderRequest{ClientOrderID: "tk-1", Symbol: "ACME", Side: brokers.Buy, Type: brokers.Market,
			Quantity: d("4"), StopLossPrice: &stop})
		if err != nil {
			t.Fatal(err)
		}
		match(t, e.b)
		if got, err := c.Order(ctx, st.ID); err != nil || got.Status != brokers.Filled || !got.FilledPrice.Equal(d("100")) {
			t.Fatalf("the buy: %+v, %v", got, err)
		}
		mustClose(t, db, "ACME", "2026-03-02", "94")
		match(t, e.b)
		fills, err := c.Fills(ctx, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if len(fills) != 2 || fills[0].ID != st.ID || fills[1].Side != brokers.Sell || !fills[1].Quantity.Equal(d("4")) || !fills[1].Price.Equal(d("94")) {
			t.Errorf("fills: %+v, want the buy at 100 and the stop leg's sell of 4 at 94", fills)
		}
		if ps, err := c.Positions(ctx); err != nil || len(ps) != 0 {
			t.Errorf("positions after the stop: %+v, %v", ps, err)
		}
	})
}
