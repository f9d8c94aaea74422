package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/internal/testkit"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/server"
)

// The assets of the order tests: 30 daily bars up to today, each close
// a quarter above the last, high and low a unit either side, so that the
// latest close is 57.25 and ATR(14) is exactly 2.
var (
	widgID = uuid.MustParse("0e1c5d2a-0001-4000-8000-000000000000") // a stock
	tkixID = uuid.MustParse("0e1c5d2a-0002-4000-8000-000000000000") // an ETF
	bareID = uuid.MustParse("0e1c5d2a-0003-4000-8000-000000000000") // a stock without prices
)

const widgClose = "57.25"

// The paper broker's costs in the order tests.
var (
	testSlippageBps = decimal.New(5, 0)
	testCommission  = decimal.RequireFromString("1.25")
)

func mustOrderAssets(tb testing.TB, db bun.IDB) {
	tb.Helper()
	ctx := context.Background()
	st := marketdata.NewStore(db)
	for _, a := range []marketdata.Asset{
		{ID: widgID, Symbol: "WIDG", Name: "Widget Works", Type: marketdata.Stock, ExchangeID: uuid.MustParse(nyseID), Currency: "USD", IsActive: true},
		{ID: tkixID, Symbol: "TKIX", Name: "Tradekit Index Fund", Type: marketdata.ETF, ExchangeID: uuid.MustParse(nyseID), Currency: "USD", IsActive: true},
		{ID: bareID, Symbol: "BARE", Name: "Bare Inc", Type: marketdata.Stock, ExchangeID: uuid.MustParse(nyseID), Currency: "USD", IsActive: true},
	} {
		if err := st.SaveAsset(ctx, &a); err != nil {
			tb.Fatal(err)
		}
	}
	today := calendar.DateOf(time.Now().UTC())
	var bars []marketdata.Price
	for _, id := range []uuid.UUID{widgID, tkixID} {
		for i := 0; i < 30; i++ {
			c := decimal.New(50, 0).Add(decimal.New(int64(i)*25, -2))
			bars = append(bars, marketdata.Price{AssetID: id, Date: today.AddDays(i - 29), Open: c, High: c.Add(decimal.New(1, 0)),
				Low: c.Sub(decimal.New(1, 0)), Close: c, Volume: 1000})
		}
	}
	if err := st.SavePrices(ctx, bars); err != nil {
		tb.Fatal(err)
	}
}

// startOrders starts a trading server on db, with its background work
// running (the paper broker's matcher, the order tracker), the paper
// broker charging testSlippageBps and testCommission, and secret key key
// (a random one when nil).
func startOrders(tb testing.TB, db *bun.DB, key []byte) tradingServer {
	tb.Helper()
	return startOrdersWith(tb, db, server.BrokersConfig{SecretKey: key})
}

// startOrdersWith is startOrders with cfg, whose sync interval, paper
// slippage and commission it sets.
func startOrdersWith(tb testing.TB, db *bun.DB, cfg server.BrokersConfig) tradingServer {
	tb.Helper()
	cfg.SyncInterval, cfg.PaperSlippageBps, cfg.PaperCommission = time.Hour, testSlippageBps, testCommission
	ts := startTradingWith(tb, db, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		ts.Maintain(ctx)
		close(done)
	}()
	tb.Cleanup(func() {
		cancel()
		<-done
	})
	return ts
}

// orderFixture stores the order tests' assets, starts a server with its
// background work on db, and connects a paper account of alice (on the
// pro plan): it returns the server, alice's key and the connection id.
func orderFixture(t *testing.T, db *bun.DB) (ts tradingServer, alice, conn string) {
	t.Helper()
	mustOrderAssets(t, db)
	ts = startOrders(t, db, nil)
	alice = mustKey(t, db, "alice@example.com", "pro")
	return ts, alice, connectPaper(t, ts, alice)
}

// order sends POST /api/v1/brokers/orders with the parameters.
func (ts tradingServer) order(tb testing.TB, key string, kv ...string) response {
	tb.Helper()
	return ts.call(tb, "POST", "/api/v1/brokers/orders?"+query(kv...), key)
}

// waitOrder polls the order until its status is want, or fails after 10 s.
func (ts tradingServer) waitOrder(tb testing.TB, key, id, want string) map[string]any {
	tb.Helper()
	var o map[string]any
	testkit.Eventually(tb, 10*time.Second, func() error {
		o = ts.call(tb, "GET", "/api/v1/brokers/orders/"+id, key).object(tb)
		if o["status"] != want {
			return fmt.Errorf("order %s is %v", id, o["status"])
		}
		return nil
	}, "order %s to be %s", id, want)
	return o
}

// num returns a JSON number of a decoded body as a decimal.
func num(tb testing.TB, v any) decimal.Decimal {
	tb.Helper()
	switch x := v.(type) {
	case float64:
		return decimal.NewFromFloat(x)
	case string:
		return decimal.RequireFromString(x)
	}
	tb.Fatalf("%v (%T) is not a number", v, v)
	return decimal.Decimal{}
}

// wantNum fails unless the JSON number v equals want exactly, read from
// the raw body so that no float rounding hides a wrong digit.
func wantNum(tb testing.TB, what, raw, field, want string) {
	tb.Helper()
	if !strings.Contains(raw, `"`+field+`":`+want+`,`) && !strings.Contains(raw, `"`+field+`":`+want+`}`) {
		tb.Errorf("%s: %s is not %s in %s", what, field, want, raw)
	}
}

// TestMarketOrderFillsWithinASecond places a market buy and waits for it
// to be filled: within a second.
func TestMarketOrderFillsWithinASecond(t *testing.T) {
	// Not parallel: it measures a latency, which the other tests of the
	// package, run many at once, would lengthen (under the race detector,
	// on a loaded machine, to 1.3 s).
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ts, alice, conn := orderFixture(t, db)
		o := ts.order(t, alice, "connectionId", conn, "assetId", widgID.String(), "side", "buy", "type", "market",
			"quantity", "10").object(t)
		if o["status"] != "pending" {
			t.Fatalf("placed: %v", o)
		}
		start := time.Now()
		ts.waitOrder(t, alice, o["id"].(string), "filled")
		if d := time.Since(start); d > time.Second {
			t.Errorf("the market order filled after %v, not within a second", d)
		}
	})
}

func TestOrderLifecycle(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ts, alice, conn := orderFixture(t, db)

		// A market buy: pending at once, filled (within a second:
		// TestMarketOrderFillsWithinASecond) at the latest close plus
		// 5 bps, less a commission of 1.25.
		placed := ts.order(t, alice, "connectionId", conn, "assetId", widgID.String(), "side", "buy", "type", "market",
			"quantity", "10", "stopLossPrice", "50.5", "clientOrderId", "first-buy")
		o := placed.object(t)
		if o["status"] != "pending" || o["symbol"] != "WIDG" || o["connectionId"] != conn || o["assetId"] != widgID.String() ||
			o["side"] != "buy" || o["type"] != "market" || o["limitPrice"] != nil || o["filledAt"] != nil || o["createdAt"] == nil ||
			o["clientOrderId"] != "first-buy" {
			t.Fatalf("placed: %s", placed.raw)
		}
		wantNum(t, "placed", placed.raw, "quantity", "10")
		wantNum(t, "placed", placed.raw, "stopLossPrice", "50.5")
		id := o["id"].(string)
		filled := ts.waitOrder(t, alice, id, "filled")
		raw := ts.call(t, "GET", "/api/v1/brokers/orders/"+id, alice).raw
		wantNum(t, "filled", raw, "filledPrice", "57.278625") // 57.25 × 1.0005
		wantNum(t, "filled", raw, "filledQuantity", "10")
		wantNum(t, "filled", raw, "commission", "1.25")
		if filled["filledAt"] == nil {
			t.Errorf("filled without filledAt: %s", raw)
		}

		// The fill reaches the portfolio: cash 100000 − 572.78625 − 1.25.
		var pf []map[string]any
		testkit.Eventually(t, 10*time.Second, func() error {
			pf = ts.call(t, "GET", "/api/v1/portfolios", alice).list(t)
			if len(pf) != 1 || len(pf[0]["positions"].([]any)) != 1 {
				return fmt.Errorf("portfolios %v", pf)
			}
			return nil
		}, "a position after the fill")
		p := pf[0]["positions"].([]any)[0].(map[string]any)
		if p["symbol"] != "WIDG" || !num(t, p["quantity"]).Equal(decimal.New(10, 0)) ||
			!num(t, p["averageCost"]).Equal(decimal.RequireFromString("57.278625")) ||
			!num(t, pf[0]["cash"]).Equal(decimal.RequireFromString("99425.96375")) {
			t.Errorf("portfolio after the fill: %v", pf[0])
		}

		// A limit far below the close rests; cancelling it works once.
		rest := ts.order(t, alice, "connectionId", conn, "assetId", widgID.String(), "side", "buy", "type", "limit",
			"quantity", "3", "limitPrice", "20.125").object(t)
		// A pass of the matcher, run here so that it has surely seen the
		// order, leaves it resting: the broker fills nothing but the
		// first buy, so the tracker has nothing to record either.
		if _, err := ts.Paper().Match(context.Background()); err != nil {
			t.Fatal(err)
		}
		if n, err := db.NewSelect().Table("paper_orders").Where("status = 'filled'").Count(context.Background()); err != nil || n != 1 {
			t.Fatalf("after a match pass the paper broker has filled %d orders (%v), want the first buy only", n, err)
		}
		if o := ts.call(t, "GET", "/api/v1/brokers/orders/"+rest["id"].(string), alice).object(t); o["status"] != "pending" {
			t.Fatalf("a far limit is %v, not pending", o["status"])
		}
		c := ts.call(t, "DELETE", "/api/v1/brokers/orders/"+rest["id"].(string), alice)
		if got := c.object(t); got["id"] != rest["id"] || got["status"] != "cancelled" || len(got) != 2 {
			t.Errorf("cancel: %s", c.raw)
		}
		again := ts.call(t, "DELETE", "/api/v1/brokers/orders/"+rest["id"].(string), alice)
		if again.status != http.StatusConflict || again.errorCode() != "CONFLICT" {
			t.Errorf("cancel again: %d %s", again.status, again.raw)
		}
		ts.waitOrder(t, alice, rest["id"].(string), "cancelled")
		refill := ts.call(t, "DELETE", "/api/v1/brokers/orders/"+id, alice)
		if refill.status != http.StatusConflict || !strings.Contains(refill.errorMessage(), "filled") {
			t.Errorf("cancel a filled order: %d %s", refill.status, refill.raw)
		}

		// A sell takes part of the position.
		sell := ts.order(t, alice, "connectionId", conn, "assetId", widgID.String(), "side", "sell", "type", "market", "quantity", "4").object(t)
		ts.waitOrder(t, alice, sell["id"].(string), "filled")
		raw = ts.call(t, "GET", "/api/v1/brokers/orders/"+sell["id"].(string), alice).raw
		wantNum(t, "sell", raw, "filledPrice", "57.221375") // 57.25 × 0.9995

		// The list: newest first, filtered, paginated.
		list := ts.call(t, "GET", "/api/v1/brokers/orders", alice)
		items := list.list(t)
		if len(items) != 3 || items[0]["id"] != sell["id"] || items[1]["id"] != rest["id"] || items[2]["id"] != id {
			t.Errorf("list: %s", list.raw)
		}
		if m, _ := list.body["meta"].(map[string]any); m["total"] != 3.0 || m["page"] != 1.0 || m["limit"] != 20.0 {
			t.Errorf("meta: %v", list.body["meta"])
		}
		for q, want := range map[string][]any{
			"status=filled":              {sell["id"], id},
			"status=cancelled":           {rest["id"]},
			"status=filled&side=sell":    {sell["id"]},
			"side=buy&limit=1&page=2":    {id},
			"status=rejected":            {},
			"status=pending&side=sell":   {},
			"limit=2&page=1&side=buy":    {rest["id"], id},
			"status=filled&page=9":       {},
			"limit=100&status=cancelled": {rest["id"]},
		} {
			got := ts.call(t, "GET", "/api/v1/brokers/orders?"+q, alice).list(t)
			ids := []any{}
			for _, o := range got {
				ids = append(ids, o["id"])
			}
			if fmt.Sprint(ids) != fmt.Sprint(want) {
				t.Errorf("?%s: %v, want %v", q, ids, want)
			}
		}
		for _, c := range []struct{ query, field string }{
			{"status=open", "status"}, {"side=short", "side"}, {"page=0", "page"}, {"limit=101", "limit"}, {"limit=0", "limit"}, {"page=x", "page"},
		} {
			wantInvalid(t, c.query, ts.call(t, "GET", "/api/v1/brokers/orders?"+c.query, alice), c.field)
		}
	})
}

func TestOrderValidation(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustOrderAssets(t, db)
		ts := startOrders(t, db, nil)
		alice := mustKey(t, db, "alice@example.com", "pro")
		bob := mustKey(t, db, "bob@example.com", "pro")
		conn := connectPaper(t, ts, alice)
		good := map[string]string{"connectionId": conn, "assetId": widgID.String(), "side": "buy", "type": "market", "quantity": "1"}
		with := func(kv ...string) []string {
			m := map[string]string{}
			for k, v := range good {
				m[k] = v
			}
			for i := 0; i < len(kv); i += 2 {
				if kv[i+1] == "<none>" {
					delete(m, kv[i])
				} else {
					m[kv[i]] = kv[i+1]
				}
			}
			var out []string
			for k, v := range m {
				out = append(out, k, v)
			}
			return out
		}
		for _, c := range []struct {
			field string
			kv    []string
		}{
			{"connectionId", []string{"connectionId", "<none>"}},
			{"connectionId", []string{"connectionId", "paper"}},
			{"assetId", []string{"assetId", "<none>"}},
			{"assetId", []string{"assetId", uuid.NewString()}},
			{"side", []string{"side", "<none>"}},
			{"side", []string{"side", "short"}},
			{"type", []string{"type", "stop"}},
			{"quantity", []string{"quantity", "<none>"}},
			{"quantity", []string{"quantity", "0"}},
			{"quantity", []string{"quantity", "-3"}},
			{"quantity", []string{"quantity", "ten"}},
			{"quantity", []string{"quantity", "0.0000000001"}},
			{"quantity", []string{"quantity", "1e16"}},
			{"limitPrice", []string{"limitPrice", "50"}},                 // on a market order
			{"limitPrice", []string{"type", "limit"}},                    // missing on a limit order
			{"limitPrice", []string{"type", "limit", "limitPrice", "0"}}, // not positive
			{"stopLossPrice", []string{"stopLossPrice", "60"}},           // above the buy's price
			{"stopLossPrice", []string{"side", "sell", "stopLossPrice", "57.25"}},
			{"clientOrderId", []string{"clientOrderId", strings.Repeat("x", 65)}},
			{"preview", []string{"preview", "maybe"}},
			{"assetId", []string{"assetId", bareID.String()}}, // a market order without a price
		} {
			wantInvalid(t, fmt.Sprint(c.kv), ts.order(t, alice, with(c.kv...)...), c.field)
		}
		// A limit order needs no stored price.
		if r := ts.order(t, alice, with("assetId", bareID.String(), "type", "limit", "limitPrice", "5", "preview", "true")...); r.status != 200 {
			t.Errorf("limit preview without a price: %d %s", r.status, r.raw)
		}

		// Connections: another user's is not found, a pending one is a
		// conflict, and so is a disconnected one.
		if r := ts.order(t, bob, with()...); r.status != http.StatusNotFound || r.errorCode() != "NOT_FOUND" {
			t.Errorf("bob through alice's connection: %d %s", r.status, r.raw)
		}
		pending := ts.call(t, "POST", "/api/v1/brokers/connections?"+query("provider", "paper", "redirectUrl", appURL), alice).object(t)
		if r := ts.order(t, alice, with("connectionId", pending["id"].(string))...); r.status != http.StatusConflict || !strings.Contains(r.errorMessage(), "pending") {
			t.Errorf("through a pending connection: %d %s", r.status, r.raw)
		}
		ts.call(t, "DELETE", "/api/v1/brokers/connections/"+conn, alice).object(t)
		if r := ts.order(t, alice, with()...); r.status != http.StatusConflict || !strings.Contains(r.errorMessage(), "disconnected") {
			t.Errorf("through a disconnected connection: %d %s", r.status, r.raw)
		}
		if n := countRows(t, db, "broker_orders"); n != 0 {
			t.Errorf("%d orders recorded by invalid requests", n)
		}
	})
}

// countRows returns the number of rows in table.
func countRows(tb testing.TB, db bun.IDB, table string) int {
	tb.Helper()
	n, err := db.NewSelect().Table(table).Count(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// patchGuardrails sets the key owner's guardrails.
func (ts tradingServer) patchGuardrails(tb testing.TB, key string, kv ...string) {
	tb.Helper()
	ts.call(tb, "PATCH", "/api/v1/brokers/guardrails?"+query(kv...), key).object(tb)
}

// rejectDetails returns the details of a 422 ORDER_REJECTED, failing on
// any other answer.
func rejectDetails(tb testing.TB, what string, r response) map[string]any {
	tb.Helper()
	e, _ := r.body["error"].(map[string]any)
	d, _ := e["details"].(map[string]any)
	if r.status != http.StatusUnprocessableEntity || r.errorCode() != "ORDER_REJECTED" || d == nil {
		tb.Fatalf("%s: %d %s, want 422 ORDER_REJECTED", what, r.status, r.raw)
	}
	return d
}

func TestOrderGuardrails(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ts, alice, conn := orderFixture(t, db)
		buy := func(kv ...string) response {
			return ts.order(t, alice, append([]string{"connectionId", conn, "assetId", widgID.String(), "side", "buy", "type", "market"}, kv...)...)
		}
		// Each guardrail on its own, the others wide open; equity is
		// 100000 and WIDG's close 57.25, its ATR 2.
		wide := []string{"maxDailyTrades", "1000", "maxPositionSizePct", "100", "maxPortfolioRiskPct", "100", "stopLossRequired", "false",
			"allowedAssetTypes", "stock,etf"}
		for _, c := range []struct {
			name, rule, limit, actual string
			guard, order              []string
		}{
			// 100 × 57.25 = 5725 is 5.725 % of equity.
			{"position size", "maxPositionSizePct", "5", "5.725", []string{"maxPositionSizePct", "5"}, []string{"quantity", "100"}},
			// 50 × (57.25 − 30) = 1362.5 at risk is 1.3625 %.
			{"portfolio risk", "maxPortfolioRiskPct", "1", "1.3625", []string{"maxPortfolioRiskPct", "1"}, []string{"quantity", "50", "stopLossPrice", "30"}},
			// Without a stop, 2 × ATR: 300 × 4 = 1200, 1.2 %.
			{"risk without a stop", "maxPortfolioRiskPct", "1", "1.2", []string{"maxPortfolioRiskPct", "1"}, []string{"quantity", "300"}},
			{"stop required", "stopLossRequired", "1", "0", []string{"stopLossRequired", "true"}, []string{"quantity", "1"}},
			{"asset type", "allowedAssetTypes", "1", "0", []string{"allowedAssetTypes", "etf"}, []string{"quantity", "1"}},
		} {
			ts.patchGuardrails(t, alice, wide...)
			ts.patchGuardrails(t, alice, c.guard...)
			r := buy(c.order...)
			d := rejectDetails(t, c.name, r)
			if d["rule"] != c.rule || !num(t, d["limit"]).Equal(decimal.RequireFromString(c.limit)) ||
				!num(t, d["actual"]).Equal(decimal.RequireFromString(c.actual)) || len(d["rules"].([]any)) != 1 {
				t.Errorf("%s: details %v", c.name, d)
			}
			wantNum(t, c.name, r.raw, "actual", c.actual)
			o := ts.call(t, "GET", "/api/v1/brokers/orders/"+d["orderId"].(string), alice).object(t)
			if o["status"] != "rejected" || o["rejectReason"] == nil || !strings.Contains(r.errorMessage(), c.rule) {
				t.Errorf("%s: the recorded order %v, message %q", c.name, o, r.errorMessage())
			}
		}

		// Several broken rules: the first is named, every one listed.
		ts.patchGuardrails(t, alice, "maxPositionSizePct", "5", "stopLossRequired", "true", "allowedAssetTypes", "etf")
		d := rejectDetails(t, "three rules", buy("quantity", "100"))
		var rules []string
		for _, r := range d["rules"].([]any) {
			rules = append(rules, r.(map[string]any)["rule"].(string))
		}
		if d["rule"] != "maxPositionSizePct" || fmt.Sprint(rules) != "[maxPositionSizePct stopLossRequired allowedAssetTypes]" {
			t.Errorf("three rules: %v", d)
		}

		// maxDailyTrades counts the accepted orders of the UTC day: the
		// rejected ones above do not count.
		ts.patchGuardrails(t, alice, wide...)
		ts.patchGuardrails(t, alice, "maxDailyTrades", "2")
		for i := 0; i < 2; i++ {
			buy("quantity", "1").object(t)
		}
		d = rejectDetails(t, "third trade", buy("quantity", "1"))
		if d["rule"] != "maxDailyTrades" || d["limit"] != 2.0 || d["actual"] != 3.0 {
			t.Errorf("third trade: %v", d)
		}
		// The paper broker never saw a rejected order.
		if n := countRows(t, db, "paper_orders"); n != 2 {
			t.Errorf("the paper broker holds %d orders, want the 2 accepted", n)
		}

		// Selling what the account does not hold, through a broker that
		// cannot short, fails its own rule before the broker is called.
		ts.patchGuardrails(t, alice, "maxDailyTrades", "1000")
		r := ts.order(t, alice, "connectionId", conn, "assetId", tkixID.String(), "side", "sell", "type", "market", "quantity", "5")
		d = rejectDetails(t, "sell beyond held", r)
		if d["rule"] != "heldQuantity" || d["held"] != 0.0 || d["requested"] != 5.0 {
			t.Errorf("sell beyond held: %s", r.raw)
		}
		if n := countRows(t, db, "paper_orders"); n != 2 {
			t.Errorf("the paper broker holds %d orders, want the 2 accepted", n)
		}

		// The broker's own refusal: a buy within the guardrails, whose
		// cost with an open buy of another asset's (a limit far below its
		// price, 60% of the cash) is beyond the account's cash.
		ts.order(t, alice, "connectionId", conn, "assetId", tkixID.String(), "side", "buy", "type", "limit", "quantity", "60000",
			"limitPrice", "1").object(t)
		r = ts.order(t, alice, "connectionId", conn, "assetId", widgID.String(), "side", "buy", "type", "market", "quantity", "1000")
		d = rejectDetails(t, "broker refusal", r)
		if d["rule"] != "broker" || !strings.Contains(fmt.Sprint(d["reason"]), "insufficient buying power") {
			t.Errorf("broker refusal: %s", r.raw)
		}
		o := ts.call(t, "GET", "/api/v1/brokers/orders/"+d["orderId"].(string), alice).object(t)
		if o["status"] != "rejected" || !strings.Contains(fmt.Sprint(o["rejectReason"]), "insufficient buying power") {
			t.Errorf("the refused order: %v", o)
		}
	})
}

func TestOrderPreview(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ts, alice, conn := orderFixture(t, db)
		ts.patchGuardrails(t, alice, "maxPositionSizePct", "5")
		r := ts.order(t, alice, "connectionId", conn, "assetId", widgID.String(), "side", "buy", "type", "market", "quantity", "100",
			"stopLossPrice", "55.25", "preview", "true", "clientOrderId", "looking")
		p := r.object(t)
		if p["preview"] != true || p["accepted"] != false || p["tradesToday"] != 1.0 || len(p["rules"].([]any)) != 6 {
			t.Errorf("preview: %s", r.raw)
		}
		for field, want := range map[string]string{"price": widgClose, "estimatedNotional": "5725", "positionAfter": "100",
			"positionPctAfter": "5.725", "portfolioRiskPctAfter": "0.2"} {
			wantNum(t, "preview", r.raw, field, want)
		}
		first := p["rules"].([]any)[1].(map[string]any)
		if first["rule"] != "maxPositionSizePct" || first["ok"] != false || first["message"] == nil {
			t.Errorf("the broken rule in the preview: %v", first)
		}
		// A limit order is checked at its limit.
		r = ts.order(t, alice, "connectionId", conn, "assetId", widgID.String(), "side", "buy", "type", "limit", "limitPrice", "40",
			"quantity", "100", "preview", "true")
		if p := r.object(t); p["accepted"] != true {
			t.Errorf("limit preview: %s", r.raw)
		}
		wantNum(t, "limit preview", r.raw, "estimatedNotional", "4000")
		if n := countRows(t, db, "broker_orders") + countRows(t, db, "paper_orders"); n != 0 {
			t.Errorf("a preview recorded or placed %d orders", n)
		}
		// The client order id of a preview stays free.
		if o := ts.order(t, alice, "connectionId", conn, "assetId", widgID.String(), "side", "buy", "type", "market", "quantity", "1",
			"clientOrderId", "looking").object(t); o["clientOrderId"] != "looking" {
			t.Errorf("order after a preview: %v", o)
		}
	})
}

// set returns a copy of the name-value pairs kv with the pairs of with
// replacing those of the same names, or added.
func set(kv []string, with ...string) []string {
	out := append([]string(nil), kv...)
	for i := 0; i+1 < len(with); i += 2 {
		found := false
		for j := 0; j+1 < len(out); j += 2 {
			if out[j] == with[i] {
				out[j+1], found = with[i+1], true
			}
		}
		if !found {
			out = append(out, with[i], with[i+1])
		}
	}
	return out
}

func TestOrderIdempotency(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustOrderAssets(t, db)
		key := make([]byte, 32)
		copy(key, "idempotency test key, 32 bytes!")
		one := startOrders(t, db, key)
		two := startOrders(t, db, key) // a second instance on the same database
		alice := mustKey(t, db, "alice@example.com", "pro")
		bob := mustKey(t, db, "bob@example.com", "pro")
		conn := connectPaper(t, one, alice)
		params := []string{"connectionId", conn, "assetId", widgID.String(), "side", "buy", "type", "limit", "limitPrice", "20",
			"quantity", "2", "clientOrderId", "retry-me"}

		first := one.order(t, alice, params...)
		o := first.object(t)
		if first.header.Get("Idempotent-Replayed") != "" {
			t.Errorf("the first placement says it is replayed")
		}
		// The same parameters, written differently, on the other instance.
		again := two.order(t, alice, set(params, "quantity", "2.000")...)
		if got := again.object(t); got["id"] != o["id"] || again.header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("retry: %s", again.raw)
		}
		for _, change := range [][]string{{"quantity", "3"}, {"limitPrice", "21"}, {"side", "sell"}, {"stopLossPrice", "10"}} {
			r := two.order(t, alice, set(params, change...)...)
			if r.status != http.StatusConflict || !strings.Contains(r.errorMessage(), "retry-me") {
				t.Errorf("reuse with %v: %d %s", change, r.status, r.raw)
			}
		}
		// Ids are per user: bob's "retry-me" is his own (and needs his
		// own connection).
		bobConn := connectPaper(t, one, bob)
		b := one.order(t, bob, set(params, "connectionId", bobConn)...).object(t)
		if b["id"] == o["id"] {
			t.Errorf("bob got alice's order")
		}

		// A rejected order replays as the same rejection.
		one.patchGuardrails(t, alice, "stopLossRequired", "true")
		rej := set(params, "clientOrderId", "rejected-once")
		d1 := rejectDetails(t, "rejected", one.order(t, alice, rej...))
		one.patchGuardrails(t, alice, "stopLossRequired", "false")
		r2 := two.order(t, alice, rej...)
		if d2 := rejectDetails(t, "rejected again", r2); d2["orderId"] != d1["orderId"] || r2.header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("a rejected order's retry: %v, then %v", d1, d2)
		}

		// Racing retries on two instances place one order.
		race := set(params, "clientOrderId", "raced")
		ids := make([]any, 20)
		var wg sync.WaitGroup
		for i := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ts := one
				if i%2 == 1 {
					ts = two
				}
				ids[i] = ts.order(t, alice, race...).object(t)["id"]
			}()
		}
		wg.Wait()
		for _, id := range ids {
			if id != ids[0] {
				t.Fatalf("racing retries placed several orders: %v", ids)
			}
		}
		n, err := db.NewSelect().Table("broker_orders").Where("client_order_id = 'raced'").Count(context.Background())
		if err != nil || n != 1 {
			t.Errorf("%d orders recorded for one client order id (%v)", n, err)
		}
		if n := countRows(t, db, "paper_orders"); n != 3 {
			t.Errorf("the paper broker holds %d orders, want 3 (alice's two, bob's one)", n)
		}
	})
}

func TestOrderIsolation(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustOrderAssets(t, db)
		ts := startOrders(t, db, nil)
		alice := mustKey(t, db, "alice@example.com", "pro")
		bob := mustKey(t, db, "bob@example.com", "pro")
		conn := connectPaper(t, ts, alice)
		o := ts.order(t, alice, "connectionId", conn, "assetId", widgID.String(), "side", "buy", "type", "limit",
			"limitPrice", "20", "quantity", "1").object(t)
		id := o["id"].(string)
		for _, c := range []struct{ method, path string }{
			{"GET", "/api/v1/brokers/orders/" + id},
			{"DELETE", "/api/v1/brokers/orders/" + id},
			{"DELETE", "/api/v1/brokers/orders/" + uuid.NewString()},
		} {
			if r := ts.call(t, c.method, c.path, bob); r.status != http.StatusNotFound || r.errorCode() != "NOT_FOUND" {
				t.Errorf("bob: %s %s: %d %s", c.method, c.path, r.status, r.raw)
			}
		}
		if l := ts.call(t, "GET", "/api/v1/brokers/orders", bob).list(t); len(l) != 0 {
			t.Errorf("bob lists %d orders", len(l))
		}
		wantInvalid(t, "bad id", ts.call(t, "DELETE", "/api/v1/brokers/orders/nope", alice), "id")
		if got := ts.call(t, "GET", "/api/v1/brokers/orders/"+id, alice).object(t); got["status"] != "pending" {
			t.Errorf("alice's order after bob's tries: %v", got)
		}
	})
}

// underLoad returns how many requests a load test sends at once: n, or
// 40 % of it under the race detector, where the concurrency it watches
// is the same and each request costs several times more (.ci/run runs
// the trading tests once more without it, through PgBouncer, at full
// load).
func underLoad(n int) int {
	if raceDetector {
		return n * 2 / 5
	}
	return n
}

// TestOrderDailyLimitUnderLoad sends 100 orders at once (40 under the
// race detector) with maxDailyTrades 10: over two instances on
// PostgreSQL, one on SQLite. Exactly 10 are accepted and the rest
// rejected by maxDailyTrades.
func TestOrderDailyLimitUnderLoad(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustOrderAssets(t, db)
		key := make([]byte, 32)
		copy(key, "concurrency test key, 32 bytes!!")
		servers := []tradingServer{startOrders(t, db, key)}
		if db.Dialect().Name() == dialect.PG {
			servers = append(servers, startOrders(t, db, key))
		}
		alice := mustKey(t, db, "alice@example.com", "business")
		conn := connectPaper(t, servers[0], alice)
		servers[0].patchGuardrails(t, alice, "maxDailyTrades", "10")

		n := underLoad(100)
		statuses := make([]int, n)
		rules := make([]any, n)
		var wg sync.WaitGroup
		for i := range statuses {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := servers[i%len(servers)].order(t, alice, "connectionId", conn, "assetId", widgID.String(), "side", "buy",
					"type", "market", "quantity", "1")
				statuses[i] = r.status
				if e, ok := r.body["error"].(map[string]any); ok {
					d, _ := e["details"].(map[string]any)
					rules[i] = d["rule"]
				}
			}()
		}
		wg.Wait()
		count := map[string]int{}
		for i, s := range statuses {
			count[fmt.Sprint(s, " ", rules[i])]++
		}
		if count["200 <nil>"] != 10 || count["422 maxDailyTrades"] != n-10 || len(count) != 2 {
			t.Errorf("over %d instance(s): %v, want 10 × 200 and %d × 422 maxDailyTrades", len(servers), count, n-10)
		}
		if n := countRows(t, db, "paper_orders"); n != 10 {
			t.Errorf("the paper broker holds %d orders, want 10", n)
		}
		// Every instance's matcher and tracker ran: each accepted order
		// filled once, and the portfolio holds 10.
		testkit.Eventually(t, 15*time.Second, func() error {
			r := servers[0].call(t, "GET", "/api/v1/brokers/orders?status=filled", alice)
			pf := servers[0].call(t, "GET", "/api/v1/portfolios", alice).list(t)
			held := "none"
			if len(pf) == 1 && len(pf[0]["positions"].([]any)) == 1 {
				held = num(t, pf[0]["positions"].([]any)[0].(map[string]any)["quantity"]).String()
			}
			if total := r.body["meta"].(map[string]any)["total"]; total != 10.0 || held != "10" {
				return fmt.Errorf("%v orders filled, %s held; want 10 and 10", total, held)
			}
			return nil
		}, "every accepted order filled and held")
	})
}

// TestGuardrailsExactUnderLoad sends orders at once, over two instances on
// PostgreSQL and one on SQLite, against the position-size and the
// portfolio-risk limits, and checks that exactly as many are accepted as
// a sequential run would accept, whatever fills in between; and that open
// limit orders hold their exposure in reserve. Equity is 100,000; WIDG
// closes at 57.25 with an ATR(14) of 2, so an unprotected unit risks 4.
// The sizes keep each limit clear of what the slippage (5 bps) and the
// commissions (1.25 a fill) move. Under the race detector fewer orders go
// at once (see underLoad), still more than the limits accept.
func TestGuardrailsExactUnderLoad(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		guardrails []string
		order      []string // besides connectionId and assetId
		orders     int
		accepted   int
		rule       string
	}{
		// 45 × 57.25 = 2.576 % of equity: 7 fit under 20 % (18.03 %).
		{"position size", []string{"maxPositionSizePct", "20"},
			[]string{"side", "buy", "type", "market", "quantity", "45"}, 50, 7, "maxPositionSizePct"},
		// 100 units risk 400, 0.4 % of equity: 12 fit under 5 % (4.8 %).
		{"portfolio risk", []string{"maxPositionSizePct", "100", "maxPortfolioRiskPct", "5"},
			[]string{"side", "buy", "type", "market", "quantity", "100"}, 50, 12, "maxPortfolioRiskPct"},
		// Limit buys at 40, below the close, stay open: 200 × 40 is 8 %,
		// so two fit under 20 % and the third is refused.
		{"open limit orders", []string{"maxPositionSizePct", "20"},
			[]string{"side", "buy", "type", "limit", "limitPrice", "40", "quantity", "200"}, 10, 2, "maxPositionSizePct"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dbtest.Each(t, func(t *testing.T, db *bun.DB) {
				mustOrderAssets(t, db)
				key := make([]byte, 32)
				copy(key, "concurrency test key, 32 bytes!!")
				servers := []tradingServer{startOrders(t, db, key)}
				if db.Dialect().Name() == dialect.PG {
					servers = append(servers, startOrders(t, db, key))
				}
				alice := mustKey(t, db, "alice@example.com", "business")
				conn := connectPaper(t, servers[0], alice)
				servers[0].patchGuardrails(t, alice, append([]string{"maxDailyTrades", "100000"}, tc.guardrails...)...)
				params := append([]string{"connectionId", conn, "assetId", widgID.String()}, tc.order...)

				orders := max(underLoad(tc.orders), tc.accepted+2)
				got := make([]string, orders)
				var wg sync.WaitGroup
				for i := range got {
					wg.Add(1)
					go func() {
						defer wg.Done()
						r := servers[i%len(servers)].order(t, alice, params...)
						got[i] = fmt.Sprint(r.status)
						if e, ok := r.body["error"].(map[string]any); ok {
							d, _ := e["details"].(map[string]any)
							got[i] += fmt.Sprint(" ", d["rule"])
						}
					}()
				}
				wg.Wait()
				count := map[string]int{}
				for _, g := range got {
					count[g]++
				}
				want := map[string]int{"200": tc.accepted, "422 " + tc.rule: orders - tc.accepted}
				if diff := cmp.Diff(want, count); diff != "" {
					t.Errorf("over %d instance(s), answers (-want +got):\n%s", len(servers), diff)
				}
				// A preview now finds the limit held, with every accepted
				// order counted.
				pv := servers[0].order(t, alice, append(params, "preview", "true")...).object(t)
				for _, r := range pv["rules"].([]any) {
					rule := r.(map[string]any)
					if rule["rule"] == tc.rule && rule["ok"] != false {
						t.Errorf("a preview of one more order passes %s: %v", tc.rule, rule)
					}
				}
			})
		})
	}
}
