package server_test

import (
	"testing"

	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/internal/dbtest"
)

// TestSellAfterStopLoss places, through the API and the built-in paper
// broker on both databases, a buy with a stopLossPrice, whose stop leg
// then rests at the broker holding the position, and sells the whole
// position: the sell fills, because Tradekit cancels the stop leg it
// needs when the broker refuses it, and sends it again.
func TestSellAfterStopLoss(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ts, alice, conn := orderFixture(t, db)
		order := func(kv ...string) string {
			t.Helper()
			r := ts.order(t, alice, append([]string{"connectionId", conn, "assetId", widgID.String(), "type", "market"}, kv...)...)
			if r.status != 200 {
				t.Fatalf("order %v: %d %s", kv, r.status, r.raw)
			}
			return r.object(t)["id"].(string)
		}
		buy := order("side", "buy", "quantity", "10", "stopLossPrice", "40")
		ts.waitOrder(t, alice, buy, "filled")
		sell := order("side", "sell", "quantity", "10")
		if o := ts.waitOrder(t, alice, sell, "filled"); o["filledQuantity"] != float64(10) {
			t.Errorf("the sell: %v", o)
		}
	})
}
