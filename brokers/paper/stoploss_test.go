package paper_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/brokers/alpaca"
	"github.com/tradekit/tradekit/brokers/paper"
	"github.com/tradekit/tradekit/internal/dbtest"
)

// TestReleaseStopLosses runs Tradekit's own Alpaca client against the
// paper broker: the stop-loss leg of a filled buy holds the position, so
// the broker refuses a sell of it, until ReleaseStopLosses cancels the
// leg; a sell within what is available cancels nothing, and the held leg
// of a buy not yet filled is kept.
func TestReleaseStopLosses(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustPrices(t, db, "ACME", map[string]string{"2026-03-02": "100"})
		e := mustEnv(t, db, paper.Config{})
		c, _ := e.trader(t)
		ctx := context.Background()
		place := func(id string, side brokers.Side, qty string, stop *string) (brokers.OrderState, error) {
			r := brokers.OrderRequest{ClientOrderID: id, Symbol: "ACME", Side: side, Type: brokers.Market, Quantity: d(qty)}
			if stop != nil {
				r.StopLossPrice = dp(*stop)
			}
			return c.PlaceOrder(ctx, r)
		}
		stop := "95"
		// 4 with a stop-loss, 6 without: 10 held, 6 available.
		if _, err := place("with-stop", brokers.Buy, "4", &stop); err != nil {
			t.Fatal(err)
		}
		if _, err := place("without", brokers.Buy, "6", nil); err != nil {
			t.Fatal(err)
		}
		match(t, e.b)
		// A limit buy far below the close, with a stop-loss: its leg is held.
		limit := d("50")
		pending, err := c.PlaceOrder(ctx, brokers.OrderRequest{ClientOrderID: "pending", Symbol: "ACME", Side: brokers.Buy,
			Type: brokers.Limit, Quantity: d("1"), LimitPrice: &limit, StopLossPrice: dp("40")})
		if err != nil {
			t.Fatal(err)
		}

		if n, err := c.ReleaseStopLosses(ctx, "ACME", d("6")); err != nil || n != 0 {
			t.Errorf("ReleaseStopLosses(6 of 6 available) = %d, %v; want 0", n, err)
		}
		// Selling all 10 is refused while the leg rests.
		var refused *brokers.RefusedError
		if _, err := place("sell-1", brokers.Sell, "10", nil); !errors.As(err, &refused) {
			t.Fatalf("a sell of the whole position beside the stop leg: %v, want the broker's refusal", err)
		}
		if n, err := c.ReleaseStopLosses(ctx, "ACME", d("11")); err != nil || n != 0 {
			t.Errorf("ReleaseStopLosses(more than the position) = %d, %v; want 0", n, err)
		}
		if n, err := c.ReleaseStopLosses(ctx, "ACME", d("10")); err != nil || n != 1 {
			t.Fatalf("ReleaseStopLosses(10) = %d, %v; want 1", n, err)
		}
		sell, err := place("sell-2", brokers.Sell, "10", nil)
		if err != nil {
			t.Fatalf("the sell after the release: %v", err)
		}
		match(t, e.b)
		if st, err := c.Order(ctx, sell.ID); err != nil || st.Status != brokers.Filled {
			t.Errorf("the sell: %+v, %v; want filled", st, err)
		}
		// The pending buy's leg is still held: it protects that buy.
		var o alpaca.OrderJSON
		if st := e.get(t, e.lastToken, "/v2/orders/"+pending.ID, &o); st != http.StatusOK || len(o.Legs) != 1 || o.Legs[0].Status != "held" {
			t.Errorf("the pending buy: %d, legs %+v; want its leg held", st, o.Legs)
		}
	})
}
