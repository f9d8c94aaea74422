package paper_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/alpacahq/alpaca-trade-api-go/v3/alpaca"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/brokers/paper"
	"github.com/tradekit/tradekit/brokers/paper/portal"
	"github.com/tradekit/tradekit/internal/dbtest"
)

// sdkCalls are the methods of the official Go SDK's Trading client
// (github.com/alpacahq/alpaca-trade-api-go/v3/alpaca.Client, v3.9.1),
// every one of which TestOfficialSDK drives.
var sdkCalls = []string{
	"GetAccount", "GetAccountConfigurations", "UpdateAccountConfigurations", "GetAccountActivities",
	"GetPortfolioHistory", "GetPositions", "GetPosition", "CloseAllPositions", "ClosePosition", "GetClock",
	"GetCalendar", "GetOrders", "PlaceOrder", "GetOrder", "GetOrderByClientOrderID", "ReplaceOrder", "CancelOrder",
	"CancelAllOrders", "GetAssets", "GetAsset", "GetOptionContracts", "GetOptionContract", "GetAnnouncements",
	"GetAnnouncement", "GetWatchlists", "CreateWatchlist", "GetWatchlist", "UpdateWatchlist",
	"AddSymbolToWatchlist", "RemoveSymbolFromWatchlist", "DeleteWatchlist",
}

// sdkRun records the outcome of each SDK call against what Alpaca would
// answer: success, or an *sdk.APIError with a given status.
type sdkRun struct {
	t      *testing.T
	called map[string]bool
	ok     []string // calls that succeeded as expected
	errs   []string // calls that answered the expected error
}

// check records a call of method that wants success (status 0) or an
// APIError of status with a non-zero code and a message.
func (s *sdkRun) check(method string, err error, status int) bool {
	s.t.Helper()
	s.called[method] = true
	if status == 0 {
		if err != nil {
			s.t.Errorf("%s: %v", method, err)
			return false
		}
		s.ok = append(s.ok, method)
		return true
	}
	var ae *sdk.APIError
	if !errors.As(err, &ae) || ae.StatusCode != status || ae.Code == 0 || ae.Message == "" {
		s.t.Errorf("%s: got %v, want Alpaca's JSON error with status %d", method, err, status)
		return false
	}
	s.errs = append(s.errs, method)
	return true
}

func dec(s string) *decimal.Decimal { return dp(s) }

// TestOfficialSDK drives every call of Alpaca's official Go SDK against
// the paper broker, as a third-party app would: the SDK's client with
// the broker's base URL and an OAuth access token. Each call must
// succeed with Alpaca's fields, or answer the JSON error Alpaca would
// (422 for what the paper broker does not simulate).
func TestOfficialSDK(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		// t0 is Monday 2 March 2026, 10:00 in New York: the market is open.
		acme := mustPrices(t, db, "ACME", map[string]string{"2026-02-27": "100", "2026-03-02": "102"})
		e := mustEnv(t, db, paper.Config{}, portal.Config{AccessTTL: 72 * time.Hour})
		tok, accountID := e.connect(t)
		c := sdk.NewClient(sdk.ClientOpts{OAuth: tok.AccessToken, BaseURL: e.srv.URL + "/paper", HTTPClient: e.srv.Client(), RetryLimit: 1})
		s := &sdkRun{t: t, called: map[string]bool{}}

		// The account: a cash account, every buying power the cash.
		acct, err := c.GetAccount()
		if s.check("GetAccount", err, 0) {
			if acct.ID != accountID || !acct.Cash.Equal(d("100000")) || !acct.RegTBuyingPower.Equal(d("100000")) ||
				!acct.EffectiveBuyingPower.Equal(d("100000")) || !acct.NonMarginBuyingPower.Equal(d("100000")) ||
				!acct.Multiplier.Equal(d("1")) || !acct.DaytradingBuyingPower.IsZero() || !acct.AccruedFees.IsZero() ||
				acct.ShortingEnabled || acct.Status != "ACTIVE" {
				t.Errorf("GetAccount: %+v", acct)
			}
		}
		cfg, err := c.GetAccountConfigurations()
		if s.check("GetAccountConfigurations", err, 0) && (!cfg.NoShorting || cfg.DTBPCheck != sdk.Entry) {
			t.Errorf("GetAccountConfigurations: %+v", cfg)
		}
		_, err = c.UpdateAccountConfigurations(sdk.UpdateAccountConfigurationsRequest{DtbpCheck: "entry", TradeConfirmEmail: "none", NoShorting: true, FractionalTrading: true})
		s.check("UpdateAccountConfigurations", err, 0)
		// Enabling short selling is not simulated.
		if _, err := c.UpdateAccountConfigurations(sdk.UpdateAccountConfigurationsRequest{FractionalTrading: true}); !isStatus(err, http.StatusUnprocessableEntity) {
			t.Errorf("UpdateAccountConfigurations(no_shorting false): %v, want 422", err)
		}

		// The clock and the calendar, from Tradekit's NYSE calendar.
		clk, err := c.GetClock()
		if s.check("GetClock", err, 0) {
			if !clk.IsOpen || !clk.NextClose.Equal(time.Date(2026, 3, 2, 21, 0, 0, 0, time.UTC)) ||
				!clk.NextOpen.Equal(time.Date(2026, 3, 3, 14, 30, 0, 0, time.UTC)) || !clk.Timestamp.Equal(t0) {
				t.Errorf("GetClock: %+v", clk)
			}
		}
		// Good Friday, 3 April 2026, is an NYSE holiday.
		days, err := c.GetCalendar(sdk.GetCalendarRequest{Start: time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2026, 4, 7, 0, 0, 0, 0, time.UTC)})
		if s.check("GetCalendar", err, 0) {
			var got []string
			for _, d := range days {
				got = append(got, d.Date+" "+d.Open+"-"+d.Close)
			}
			want := []string{"2026-04-01 09:30-16:00", "2026-04-02 09:30-16:00", "2026-04-06 09:30-16:00", "2026-04-07 09:30-16:00"}
			if !slices.Equal(got, want) {
				t.Errorf("GetCalendar: %v, want %v", got, want)
			}
		}

		// Assets, from Tradekit's asset table.
		assets, err := c.GetAssets(sdk.GetAssetsRequest{Status: "active"})
		if s.check("GetAssets", err, 0) && (len(assets) != 1 || assets[0].Symbol != "ACME" || assets[0].ID != acme.ID.String() || !assets[0].Tradable) {
			t.Errorf("GetAssets: %+v", assets)
		}
		asset, err := c.GetAsset("acme")
		if s.check("GetAsset", err, 0) && (asset.Symbol != "ACME" || asset.Exchange != "NYSE" || asset.Class != sdk.USEquity) {
			t.Errorf("GetAsset: %+v", asset)
		}
		if _, err := c.GetAsset("NOPE"); !isStatus(err, http.StatusNotFound) {
			t.Errorf("GetAsset(NOPE): %v, want 404", err)
		}

		// Orders: a market buy by quantity, a notional buy, both filled
		// by the matcher at the close of 102.
		buy, err := c.PlaceOrder(sdk.PlaceOrderRequest{Symbol: "ACME", Qty: dec("10"), Side: sdk.Buy, Type: sdk.Market, TimeInForce: sdk.Day, ClientOrderID: "sdk-buy"})
		if s.check("PlaceOrder", err, 0) && (buy.Status != "new" || buy.OrderClass != sdk.Simple || buy.ExtendedHours) {
			t.Errorf("PlaceOrder: %+v", buy)
		}
		notional, err := c.PlaceOrder(sdk.PlaceOrderRequest{Symbol: "ACME", Notional: dec("51"), Side: sdk.Buy, Type: sdk.Market, TimeInForce: sdk.Day})
		if err != nil || notional.Qty != nil || notional.Notional == nil || !notional.Notional.Equal(d("51")) {
			t.Fatalf("a notional order: %+v, %v", notional, err)
		}
		match(t, e.b)
		got, err := c.GetOrder(buy.ID)
		if s.check("GetOrder", err, 0) && (got.Status != "filled" || !got.FilledAvgPrice.Equal(d("102")) || !got.FilledQty.Equal(d("10"))) {
			t.Errorf("GetOrder: %+v", got)
		}
		if got, err := c.GetOrder(notional.ID); err != nil || got.Status != "filled" || !got.FilledQty.Equal(d("0.5")) {
			t.Errorf("the notional order after the match: %+v, %v", got, err)
		}

		// A resting limit buy in extended hours, found by its client
		// order id, then replaced and cancelled.
		rest, err := c.PlaceOrder(sdk.PlaceOrderRequest{Symbol: "ACME", Qty: dec("2"), Side: sdk.Buy, Type: sdk.Limit, LimitPrice: dec("50"),
			TimeInForce: sdk.Day, ExtendedHours: true, ClientOrderID: "sdk-rest"})
		if err != nil {
			t.Fatal(err)
		}
		byClient, err := c.GetOrderByClientOrderID("sdk-rest")
		if s.check("GetOrderByClientOrderID", err, 0) && (byClient.ID != rest.ID || !byClient.ExtendedHours || !byClient.LimitPrice.Equal(d("50"))) {
			t.Errorf("GetOrderByClientOrderID: %+v", byClient)
		}
		repl, err := c.ReplaceOrder(rest.ID, sdk.ReplaceOrderRequest{Qty: dec("3"), LimitPrice: dec("51"), ClientOrderID: "sdk-rest-2"})
		if s.check("ReplaceOrder", err, 0) {
			if repl.Replaces == nil || *repl.Replaces != rest.ID || !repl.Qty.Equal(d("3")) || !repl.LimitPrice.Equal(d("51")) || repl.Status != "new" {
				t.Errorf("ReplaceOrder: %+v", repl)
			}
			if old, err := c.GetOrder(rest.ID); err != nil || old.Status != "replaced" || old.ReplacedBy == nil || *old.ReplacedBy != repl.ID || old.ReplacedAt == nil {
				t.Errorf("the replaced order: %+v, %v", old, err)
			}
		}
		err = c.CancelOrder(repl.ID)
		if s.check("CancelOrder", err, 0) {
			if o, err := c.GetOrder(repl.ID); err != nil || o.Status != "canceled" {
				t.Errorf("the cancelled order: %+v, %v", o, err)
			}
		}
		orders, err := c.GetOrders(sdk.GetOrdersRequest{Status: "all", Limit: 50, Direction: "asc"})
		if s.check("GetOrders", err, 0) {
			var st []string
			for _, o := range orders {
				st = append(st, o.Status)
			}
			if want := []string{"filled", "filled", "replaced", "canceled"}; !slices.Equal(st, want) {
				t.Errorf("GetOrders: statuses %v, want %v", st, want)
			}
		}

		// What is not simulated answers 422, never a silent drop.
		for name, req := range map[string]sdk.PlaceOrderRequest{
			"gtd":      {Symbol: "ACME", Qty: dec("1"), Side: sdk.Buy, Type: sdk.Market, TimeInForce: sdk.GTD},
			"ioc stop": {Symbol: "ACME", Qty: dec("1"), Side: sdk.Buy, Type: sdk.Stop, StopPrice: dec("200"), TimeInForce: sdk.IOC},
			"notional bracket": {Symbol: "ACME", Notional: dec("100"), Side: sdk.Buy, Type: sdk.Market, TimeInForce: sdk.Day, OrderClass: sdk.Bracket,
				TakeProfit: &sdk.TakeProfit{LimitPrice: dec("120")}, StopLoss: &sdk.StopLoss{StopPrice: dec("90")}},
			"stop on limit":  {Symbol: "ACME", Qty: dec("1"), Side: sdk.Buy, Type: sdk.Limit, LimitPrice: dec("100"), StopPrice: dec("99"), TimeInForce: sdk.Day},
			"short position": {Symbol: "ACME", Qty: dec("1"), Side: sdk.Sell, Type: sdk.Market, TimeInForce: sdk.Day, PositionIntent: sdk.SellToOpen},
		} {
			if _, err := c.PlaceOrder(req); !isStatus(err, http.StatusUnprocessableEntity) {
				t.Errorf("PlaceOrder(%s): %v, want 422", name, err)
			}
		}

		// Positions: 10.5 ACME at 102, with the previous close of 100.
		pos, err := c.GetPositions()
		if s.check("GetPositions", err, 0) && (len(pos) != 1 || !pos[0].Qty.Equal(d("10.5")) || !pos[0].QtyAvailable.Equal(d("10.5"))) {
			t.Errorf("GetPositions: %+v", pos)
		}
		p, err := c.GetPosition("ACME")
		if s.check("GetPosition", err, 0) {
			if !p.AvgEntryPrice.Equal(d("102")) || !p.LastdayPrice.Equal(d("100")) || !p.ChangeToday.Equal(d("0.02")) ||
				!p.UnrealizedIntradayPL.Equal(d("21")) || !p.UnrealizedIntradayPLPC.Equal(d("0.02")) || !p.UnrealizedPLPC.IsZero() ||
				p.AssetMarginable || p.Exchange != "NYSE" {
				t.Errorf("GetPosition: %+v", p)
			}
		}
		if _, err := c.GetPosition("ZZZ"); !isStatus(err, http.StatusNotFound) {
			t.Errorf("GetPosition(ZZZ): %v, want 404", err)
		}

		acts, err := c.GetAccountActivities(sdk.GetAccountActivitiesRequest{ActivityTypes: []string{"FILL"}, Direction: "asc"})
		if s.check("GetAccountActivities", err, 0) && (len(acts) != 2 || acts[0].OrderID != buy.ID || acts[0].ActivityType != "FILL" || !acts[0].Qty.Equal(d("10")) || !acts[0].Price.Equal(d("102"))) {
			t.Errorf("GetAccountActivities: %+v", acts)
		}
		_, err = c.GetPortfolioHistory(sdk.GetPortfolioHistoryRequest{Period: "1W", TimeFrame: sdk.Day1})
		s.check("GetPortfolioHistory", err, 0)

		// Closing: part of the position, then all, cancelling a resting sell.
		closing, err := c.ClosePosition("ACME", sdk.ClosePositionRequest{Percentage: d("20")})
		if s.check("ClosePosition", err, 0) && (closing.Side != sdk.Sell || !closing.Qty.Equal(d("2.1")) || closing.Type != sdk.Market) {
			t.Errorf("ClosePosition: %+v", closing)
		}
		match(t, e.b)
		if _, err := c.PlaceOrder(sdk.PlaceOrderRequest{Symbol: "ACME", Qty: dec("1"), Side: sdk.Sell, Type: sdk.Limit, LimitPrice: dec("500"), TimeInForce: sdk.GTC}); err != nil {
			t.Fatal(err)
		}
		if p, err := c.GetPosition("ACME"); err != nil || !p.Qty.Equal(d("8.4")) || !p.QtyAvailable.Equal(d("7.4")) {
			t.Errorf("the position with an open sell: %+v, %v", p, err)
		}
		closed, err := c.CloseAllPositions(sdk.CloseAllPositionsRequest{CancelOrders: true})
		if s.check("CloseAllPositions", err, 0) && (len(closed) != 1 || !closed[0].Qty.Equal(d("8.4"))) {
			t.Errorf("CloseAllPositions: %+v", closed)
		}
		match(t, e.b)
		if pos, err := c.GetPositions(); err != nil || len(pos) != 0 {
			t.Errorf("positions after closing all: %+v, %v", pos, err)
		}
		if _, err := c.PlaceOrder(sdk.PlaceOrderRequest{Symbol: "ACME", Qty: dec("1"), Side: sdk.Buy, Type: sdk.Limit, LimitPrice: dec("1"), TimeInForce: sdk.GTC}); err != nil {
			t.Fatal(err)
		}
		err = c.CancelAllOrders()
		if s.check("CancelAllOrders", err, 0) {
			if open, err := c.GetOrders(sdk.GetOrdersRequest{Status: "open"}); err != nil || len(open) != 0 {
				t.Errorf("open orders after CancelAllOrders: %+v, %v", open, err)
			}
		}

		// A bracket order: the entry fills at the close of 102, its legs
		// open; the close falls to 89, the stop-loss leg fills and the
		// take-profit leg is cancelled.
		br, err := c.PlaceOrder(sdk.PlaceOrderRequest{Symbol: "ACME", Qty: dec("5"), Side: sdk.Buy, Type: sdk.Market, TimeInForce: sdk.GTC,
			OrderClass: sdk.Bracket, TakeProfit: &sdk.TakeProfit{LimitPrice: dec("120")}, StopLoss: &sdk.StopLoss{StopPrice: dec("90")}})
		if err != nil {
			t.Fatal(err)
		}
		if br.OrderClass != sdk.Bracket || len(br.Legs) != 2 || br.Legs[0].Status != "held" || br.Legs[0].Type != sdk.Limit ||
			!br.Legs[0].LimitPrice.Equal(d("120")) || br.Legs[1].Type != sdk.Stop || !br.Legs[1].StopPrice.Equal(d("90")) || br.Legs[1].Side != sdk.Sell {
			t.Fatalf("the bracket order: %+v", br)
		}
		match(t, e.b)
		if got, err := c.GetOrder(br.ID); err != nil || got.Status != "filled" || len(got.Legs) != 2 || got.Legs[0].Status != "new" || got.Legs[1].Status != "new" {
			t.Fatalf("the bracket after its entry filled: %+v, %v", got, err)
		}
		if p, err := c.GetPosition("ACME"); err != nil || !p.Qty.Equal(d("5")) || !p.QtyAvailable.Equal(d("0")) {
			t.Errorf("the position under the bracket's exits: %+v, %v", p, err)
		}
		mustClose(t, db, "ACME", "2026-03-02", "89")
		match(t, e.b)
		nested, err := c.GetOrders(sdk.GetOrdersRequest{Status: "all", Limit: 500, Nested: true, Symbols: []string{"ACME"}, Direction: "desc"})
		if err != nil || len(nested) == 0 || nested[0].ID != br.ID || len(nested[0].Legs) != 2 {
			t.Fatalf("the nested orders: %+v, %v", nested, err)
		}
		if tp, sl := nested[0].Legs[0], nested[0].Legs[1]; tp.Status != "canceled" || sl.Status != "filled" || !sl.FilledAvgPrice.Equal(d("89")) {
			t.Errorf("the bracket's legs at a close of 89: take profit %s, stop loss %s at %v", tp.Status, sl.Status, sl.FilledAvgPrice)
		}
		if pos, err := c.GetPositions(); err != nil || len(pos) != 0 {
			t.Errorf("positions after the stop loss: %+v, %v", pos, err)
		}

		// Not simulated: options, corporate actions, watchlists.
		_, err = c.GetOptionContracts(sdk.GetOptionContractsRequest{UnderlyingSymbols: "ACME"})
		s.check("GetOptionContracts", err, http.StatusUnprocessableEntity)
		_, err = c.GetOptionContract("ACME260320C00100000")
		s.check("GetOptionContract", err, http.StatusUnprocessableEntity)
		_, err = c.GetAnnouncements(sdk.GetAnnouncementsRequest{CATypes: []string{"dividend"}, Since: t0.AddDate(0, 0, -30), Until: t0})
		s.check("GetAnnouncements", err, http.StatusUnprocessableEntity)
		_, err = c.GetAnnouncement("123")
		s.check("GetAnnouncement", err, http.StatusUnprocessableEntity)
		_, err = c.GetWatchlists()
		s.check("GetWatchlists", err, http.StatusUnprocessableEntity)
		_, err = c.CreateWatchlist(sdk.CreateWatchlistRequest{Name: "w", Symbols: []string{"ACME"}})
		s.check("CreateWatchlist", err, http.StatusUnprocessableEntity)
		_, err = c.GetWatchlist("w1")
		s.check("GetWatchlist", err, http.StatusUnprocessableEntity)
		_, err = c.UpdateWatchlist("w1", sdk.UpdateWatchlistRequest{Name: "x"})
		s.check("UpdateWatchlist", err, http.StatusUnprocessableEntity)
		_, err = c.AddSymbolToWatchlist("w1", sdk.AddSymbolToWatchlistRequest{Symbol: "ACME"})
		s.check("AddSymbolToWatchlist", err, http.StatusUnprocessableEntity)
		err = c.RemoveSymbolFromWatchlist("w1", sdk.RemoveSymbolFromWatchlistRequest{Symbol: "ACME"})
		s.check("RemoveSymbolFromWatchlist", err, http.StatusUnprocessableEntity)
		err = c.DeleteWatchlist("w1")
		s.check("DeleteWatchlist", err, http.StatusUnprocessableEntity)

		for _, m := range sdkCalls {
			if !s.called[m] {
				t.Errorf("the SDK's %s was not called", m)
			}
		}
		t.Logf("official SDK: %d of %d calls succeed, %d answer Alpaca's JSON error by design (%v)", len(s.ok), len(sdkCalls), len(s.errs), s.errs)
	})
}

// isStatus reports whether err is the SDK's APIError with status, a
// code and a message: Alpaca's JSON error body.
func isStatus(err error, status int) bool {
	var ae *sdk.APIError
	return errors.As(err, &ae) && ae.StatusCode == status && ae.Code != 0 && ae.Message != ""
}

// TestUnknownRoutes checks that every path under /v2 the broker does not
// serve answers Alpaca's JSON error, never a plain-text 404 or 405.
func TestUnknownRoutes(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		e := mustEnv(t, db, paper.Config{})
		tok, _ := e.connect(t)
		for _, tt := range []struct {
			method, path string
			status, code int
		}{
			{http.MethodPost, "/v2/account", http.StatusMethodNotAllowed, 40510000},
			{http.MethodPut, "/v2/orders/7d1b5c3e-0000-4000-8000-000000000000", http.StatusMethodNotAllowed, 40510000},
			{http.MethodPatch, "/v2/positions", http.StatusMethodNotAllowed, 40510000},
			{http.MethodGet, "/v2/nothing", http.StatusNotFound, 40410000},
			{http.MethodGet, "/v2/account/nothing", http.StatusNotFound, 40410000},
			{http.MethodGet, "/v2/watchlists", http.StatusUnprocessableEntity, 42210000},
			{http.MethodGet, "/v2/options/contracts", http.StatusUnprocessableEntity, 42210000},
			{http.MethodGet, "/v2/corporate_actions/announcements", http.StatusUnprocessableEntity, 42210000},
		} {
			req, err := http.NewRequest(tt.method, e.srv.URL+"/paper"+tt.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
			resp, err := e.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body := readBody(t, resp)
			var got struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			}
			if err := json.Unmarshal([]byte(body), &got); err != nil || resp.StatusCode != tt.status || got.Code != tt.code || got.Message == "" ||
				!strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
				t.Errorf("%s %s: %d %q, want %d with code %d", tt.method, tt.path, resp.StatusCode, body, tt.status, tt.code)
			}
		}
	})
}
