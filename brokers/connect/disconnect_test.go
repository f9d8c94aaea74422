package connect

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/internal/dbtest"
)

// TestDisconnectSettlesPendingOrders checks that no order of a
// disconnected connection stays pending: a disconnect reads each back
// with its fills (one the broker filled after the disconnect began), and
// cancels at the broker what is still open there, before it revokes the
// tokens; a broker that cannot be reached leaves the connection active,
// and one that no longer accepts the tokens leaves the orders cancelled,
// their state at the broker unknown.
func TestDisconnectSettlesPendingOrders(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()

		t.Run("FilledMeanwhileAndOpen", func(t *testing.T) {
			f := newFixture(t, db)
			market := mustPlace(t, f.s, f.user, marketOrder(f.conn, f.acme, brokers.Buy, "5"))
			limit := mustPlace(t, f.s, f.user, limitOrder(f.conn, f.acme, brokers.Buy, "10", "90"))
			marketID, limitID := brokerID(t, market.Order), brokerID(t, limit.Order)
			f.broker.set(func(b *fakeBroker) {
				b.Before = func(method string) error {
					if method == "CancelOrder" && b.state(marketID).Status == brokers.Pending {
						// The broker fills the market order as the
						// disconnect comes to cancel it.
						b.fill(marketID, dec("5"), dec("100"), dec("0"))
					}
					return nil
				}
			})
			got, err := f.s.Disconnect(ctx, f.user, f.conn.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != Disconnected || got.AccessToken != nil {
				t.Errorf("Disconnect = %s, tokens %v", got.Status, got.AccessToken)
			}
			if m := f.mustOrder(t, market.Order.ID); m.Status != brokers.Filled || !m.LedgerQty.Equal(dec("5")) {
				t.Errorf("the market order: %s, %s in the ledger; want filled, 5", m.Status, m.LedgerQty)
			}
			if l := f.mustOrder(t, limit.Order.ID); l.Status != brokers.Cancelled || l.NextCheckAt != nil {
				t.Errorf("the limit order: %s, next check %v; want cancelled, none", l.Status, l.NextCheckAt)
			}
			if st := f.broker.state(limitID); st.Status != brokers.Cancelled {
				t.Errorf("the limit order at the broker: %s, want cancelled", st.Status)
			}
			if l := f.ledgerOf(t, f.conn.ID); len(l.Positions) != 1 || l.Positions[0].Quantity != "5" {
				t.Errorf("the ledger after the disconnect: %+v, want the 5 ACME filled", l.Positions)
			}
			if n := f.countOrders(t, f.user)[brokers.Pending]; n != 0 {
				t.Errorf("%d orders pending after the disconnect", n)
			}
			if n := f.broker.count("CancelOrder"); n != 2 {
				t.Errorf("%d cancellations at the broker, want one of each order", n)
			}
		})

		t.Run("BrokerDown", func(t *testing.T) {
			f := newFixture(t, db)
			p := mustPlace(t, f.s, f.user, limitOrder(f.conn, f.acme, brokers.Buy, "10", "90"))
			f.broker.set(func(b *fakeBroker) { b.Before = failOn("CancelOrder", 1, errDown) })
			if _, err := f.s.Disconnect(ctx, f.user, f.conn.ID); !errors.Is(err, tradekit.ErrUnavailable) {
				t.Fatalf("Disconnect with the broker down = %v, want ErrUnavailable", err)
			}
			c, err := NewStore(db).Connection(ctx, f.user, f.conn.ID)
			if err != nil || c.Status != Active || c.AccessToken == nil {
				t.Fatalf("the connection after the failed disconnect: %s (%v), want active with its tokens", c.Status, err)
			}
			if o := f.mustOrder(t, p.Order.ID); o.Status != brokers.Pending {
				t.Fatalf("the order after the failed disconnect: %s, want pending", o.Status)
			}
			// Orders go through it again, and the next try settles them.
			mustPlace(t, f.s, f.user, limitOrder(f.conn, f.acme, brokers.Buy, "1", "90"))
			if _, err := f.s.Disconnect(ctx, f.user, f.conn.ID); err != nil {
				t.Fatal(err)
			}
			if n := f.countOrders(t, f.user); n[brokers.Pending] != 0 || n[brokers.Cancelled] != 2 {
				t.Errorf("orders after the disconnect: %v, want 2 cancelled", n)
			}
		})

		t.Run("NoLongerAuthorized", func(t *testing.T) {
			f := newFixture(t, db)
			p := mustPlace(t, f.s, f.user, limitOrder(f.conn, f.acme, brokers.Buy, "10", "90"))
			f.broker.set(func(b *fakeBroker) {
				b.Before = func(string) error { return fmt.Errorf("fake: %w", tradekit.ErrUnauthorized) }
			})
			if _, err := f.s.Disconnect(ctx, f.user, f.conn.ID); err != nil {
				t.Fatal(err)
			}
			o := f.mustOrder(t, p.Order.ID)
			if o.Status != brokers.Cancelled || !strings.HasPrefix(o.BrokerStatus, "unknown") {
				t.Errorf("the order: %s (%q), want cancelled, its broker status unknown", o.Status, o.BrokerStatus)
			}
		})
	})
}
