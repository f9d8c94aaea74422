package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/internal/testkit"
	"github.com/tradekit/tradekit/marketdata"
)

// waitList polls GET path until it lists n items, or fails after 10 s.
func (ts tradingServer) waitList(t *testing.T, key, path string, n int) []map[string]any {
	t.Helper()
	var l []map[string]any
	testkit.Eventually(t, 10*time.Second, func() error {
		if l = ts.call(t, "GET", path, key).list(t); len(l) < n {
			return fmt.Errorf("%d items: %v", len(l), l)
		}
		return nil
	}, "%s to list %d items", path, n)
	return l
}

// TestCopyTradingAutoSync runs a leader and a follower on the paper
// broker: the leader's buy is mirrored at the expected size and fills, a
// guardrail rejects a mirrored order, the copy stop-loss turns auto-sync
// off, and unpublishing notifies. On PostgreSQL two instances run the
// copy engine, and every fill is copied once.
func TestCopyTradingAutoSync(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustOrderAssets(t, db)
		key := make([]byte, 32)
		copy(key, "copy trading test key, 32 bytes!")
		servers := []tradingServer{startOrders(t, db, key)}
		if db.Dialect().Name() == dialect.PG {
			servers = append(servers, startOrders(t, db, key))
		}
		ts := servers[0]
		alice := mustKey(t, db, "alice@example.com", "pro")
		bob := mustKey(t, db, "bob@example.com", "pro")
		alicePF, aliceConn := mustPortfolio(t, ts, alice)
		bobPF, _ := mustPortfolio(t, ts, bob)
		profile := ts.call(t, "POST", "/api/v1/copy-trading/publish?"+query("portfolioId", alicePF, "displayName", "Alice", "slug", "alice"), alice).object(t)
		follow := ts.call(t, "POST", "/api/v1/copy-trading/follow?"+query("leaderProfileId", profile["id"].(string), "autoSync", "true",
			"allocationPct", "50", "maxPositionPct", "100"), bob).object(t)
		followID := follow["id"].(string)
		buy := func(qty string) map[string]any {
			o := ts.order(t, alice, "connectionId", aliceConn, "assetId", widgID.String(), "side", "buy", "type", "market", "quantity", qty).object(t)
			return ts.waitOrder(t, alice, o["id"].(string), "filled")
		}
		const orders = "/api/v1/brokers/orders"

		// The leader buys 100 WIDG: 100 × 57.278625 of equity E_L, so the
		// follower buys 100 × (50 % of E_B) / E_L, rounded down to 4 places.
		filled := buy("100")
		copies := ts.waitList(t, bob, orders, 1)
		created, _ := time.Parse(time.RFC3339Nano, copies[0]["createdAt"].(string))
		filledAt, _ := time.Parse(time.RFC3339Nano, filled["filledAt"].(string))
		t.Logf("from the leader's fill to the follower's order: %v", created.Sub(filledAt))
		eL := num(t, ts.call(t, "GET", "/api/v1/portfolios/"+alicePF, alice).object(t)["brokerEquity"])
		eB := decimal.New(100000, 0)
		want := decimal.New(100, 0).Mul(eB).Div(decimal.New(2, 0)).Div(eL).RoundDown(4)
		if c := copies[0]; c["side"] != "buy" || c["symbol"] != "WIDG" || !num(t, c["quantity"]).Equal(want) ||
			!strings.HasPrefix(c["clientOrderId"].(string), "copy-") {
			t.Errorf("the copy: %v, want %s WIDG (E_L %s)", c, want, eL)
		}
		ts.waitOrder(t, bob, copies[0]["id"].(string), "filled")
		n := ts.waitList(t, bob, "/api/v1/notifications", 1)
		// The notification tells the leader's trade and the copy: its
		// quantity and its order.
		copyID := copies[0]["id"].(string)
		data, _ := n[0]["data"].(map[string]any)
		quantity, isNumber := data["copyQuantity"].(float64) // a JSON number, not a string (issue 40)
		if n[0]["kind"] != "leader_trade" || !strings.Contains(n[0]["message"].(string), "bought 100 WIDG") ||
			!strings.Contains(n[0]["message"].(string), "; copied: a market buy of "+want.String()+" WIDG, order "+copyID) ||
			data["orderId"] != copyID || !isNumber || !decimal.NewFromFloat(quantity).Equal(want) || data["copyStatus"] != "placed" {
			t.Errorf("notification: %v", n[0])
		}

		// A guardrail of the follower rejects the next copy; it is
		// recorded and notified, never retried.
		ts.patchGuardrails(t, bob, "maxPositionSizePct", "1")
		buy("10")
		rejected := ts.waitList(t, bob, orders+"?status=rejected", 1)
		if !strings.Contains(rejected[0]["rejectReason"].(string), "% of equity") {
			t.Errorf("the rejected copy: %v", rejected[0])
		}
		kinds := func() string {
			var k []string
			for _, x := range ts.call(t, "GET", "/api/v1/notifications", bob).list(t) {
				k = append(k, x["kind"].(string))
			}
			return strings.Join(k, " ")
		}
		testkit.Eventually(t, 10*time.Second, func() bool { return strings.Contains(kinds(), "copy_rejected") },
			"a copy_rejected notification")
		if !strings.HasPrefix(kinds(), "copy_rejected leader_trade") {
			t.Errorf("notifications after the rejection: %s", kinds())
		}

		// The copies lose: WIDG closes at 40 today, 17.28 below the copy's
		// price on about 50 shares, over 1 % of the 50,000 allocation. The
		// next leader fill finds the copy stop-loss hit: auto-sync stops.
		ts.patchGuardrails(t, bob, "maxPositionSizePct", "100")
		ts.call(t, "PATCH", "/api/v1/copy-trading/follow/"+followID+"?copyStopLossPct=1", bob).object(t)
		c := decimal.New(40, 0)
		today := calendar.DateOf(time.Now().UTC())
		if err := marketdata.NewStore(db).SavePrices(context.Background(), []marketdata.Price{{AssetID: widgID, Date: today,
			Open: c, High: c, Low: c, Close: c, Volume: 1}}); err != nil {
			t.Fatal(err)
		}
		buy("10")
		var f map[string]any
		testkit.Eventually(t, 10*time.Second, func() error {
			if f = ts.call(t, "GET", "/api/v1/copy-trading/following", bob).list(t)[0]; f["autoSync"] != false {
				return fmt.Errorf("auto-sync still on: %v", f)
			}
			return nil
		}, "auto-sync to stop")
		if !strings.Contains(f["stoppedReason"].(string), "copy stop-loss") {
			t.Errorf("stopped: %v", f)
		}
		// The stop and the fill's leader_trade may be recorded a moment
		// apart: wait for both, newest first.
		stopped := func(k string) bool {
			return strings.HasPrefix(k, "leader_trade copy_stopped") || strings.HasPrefix(k, "copy_stopped leader_trade")
		}
		testkit.Eventually(t, 10*time.Second, func() error {
			if k := kinds(); !stopped(k) {
				return fmt.Errorf("notifications %s", k)
			}
			return nil
		}, "copy_stopped and leader_trade notifications")
		// The third leader fill's copy event is recorded; then the
		// follower must have no order beyond the copy and the rejected one.
		testkit.Eventually(t, 10*time.Second, func() error {
			if n := countRows(t, db, "copy_events"); n < 3 {
				return fmt.Errorf("%d copy events", n)
			}
			return nil
		}, "a copy event for each of the 3 leader fills")
		if l := ts.call(t, "GET", orders, bob).list(t); len(l) != 2 {
			t.Errorf("the follower has %d orders, want the copy and the rejected one: %v", len(l), l)
		}
		if n := countRows(t, db, "copy_events"); n != 3 {
			t.Errorf("%d copy events for 3 leader fills", n)
		}

		// Unpublishing notifies the follower.
		ts.call(t, "DELETE", "/api/v1/copy-trading/publish", alice).object(t)
		if !strings.HasPrefix(kinds(), "leader_unpublished") {
			t.Errorf("notifications after unpublishing: %s", kinds())
		}
		_ = bobPF
	})
}
