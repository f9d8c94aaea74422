package paper_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/brokers/alpaca"
	"github.com/tradekit/tradekit/brokers/paper"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/internal/testkit"
)

// TestPlacedPass: the pass a placement wakes fills the order and, in the
// same pass, a leg its fill opened that can fill at once (a stop-loss
// above the close); a leg that cannot (a stop-loss below it) rests open.
// The regular passes are an hour apart here, so only that pass can fill.
func TestPlacedPass(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustPrices(t, db, "ACME", map[string]string{"2026-03-02": "100"})
		e := mustEnv(t, db, paper.Config{MatchInterval: time.Hour})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go e.b.Run(ctx)
		c, _ := e.trader(t)
		place := func(id, stop string) string {
			st, err := c.PlaceOrder(ctx, brokers.OrderRequest{ClientOrderID: id, Symbol: "ACME", Side: brokers.Buy,
				Type: brokers.Market, Quantity: d("2"), StopLossPrice: dp(stop)})
			if err != nil {
				t.Fatalf("placing %s: %v", id, err)
			}
			return st.ID
		}
		rests, stopsOut := place("rests", "95"), place("stops-out", "105")
		for _, tt := range []struct {
			id, leg string
		}{{rests, "new"}, {stopsOut, "filled"}} {
			testkit.Eventually(t, 10*time.Second, func() error {
				var o alpaca.OrderJSON
				if st := e.get(t, e.lastToken, "/v2/orders/"+tt.id, &o); st != http.StatusOK {
					t.Fatalf("GET the order: %d", st)
				}
				if o.Status != "filled" || len(o.Legs) != 1 || o.Legs[0].Status != tt.leg {
					return fmt.Errorf("order %s: %s with legs %+v", o.ClientOrderID, o.Status, o.Legs)
				}
				return nil
			}, "order %s filled, its leg %s", tt.id, tt.leg)
		}
	})
}
