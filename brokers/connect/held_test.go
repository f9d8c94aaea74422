package connect

import (
	"context"
	"testing"

	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/internal/dbtest"
)

// TestSellBeyondHeld checks that through a broker whose accounts cannot
// sell short, a sell of more than is held fails the check with its own
// rule, heldQuantity, in the preview and in the order, before the broker
// is called, instead of passing as a short or failing a size limit.
func TestSellBeyondHeld(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		f := newFixture(t, db, func(c *Config) {
			cash := paper
			cash.CanShort = false
			c.Providers = []Provider{cash}
		})
		f.mustGuardrails(t, f.user, loose())
		f.broker.set(func(b *fakeBroker) { b.autoFill = true })
		mustPlace(t, f.s, f.user, marketOrder(f.conn, f.acme, brokers.Buy, "10"))
		sent := f.broker.count("PlaceOrder")

		pv, err := f.s.PreviewOrder(ctx, f.user, marketOrder(f.conn, f.acme, brokers.Sell, "1000"))
		if err != nil {
			t.Fatal(err)
		}
		if pv.OK() || pv.Violations[0].Rule != brokers.RuleHeldQuantity ||
			!pv.Violations[0].Limit.Equal(dec("10")) || !pv.Violations[0].Actual.Equal(dec("1000")) {
			t.Fatalf("preview of a sell of 1000 holding 10: %+v", pv.Violations)
		}
		p := mustPlace(t, f.s, f.user, marketOrder(f.conn, f.acme, brokers.Sell, "1000"))
		if p.Order.Status != brokers.Rejected || p.Order.RejectRule != brokers.RuleHeldQuantity {
			t.Errorf("the sell of 1000: %s by %s (%s), want rejected by heldQuantity", p.Order.Status, p.Order.RejectRule, p.Order.RejectReason)
		}
		if n := f.broker.count("PlaceOrder"); n != sent {
			t.Errorf("the rejected sell reached the broker")
		}
		if p := mustPlace(t, f.s, f.user, marketOrder(f.conn, f.acme, brokers.Sell, "10")); p.Order.Status == brokers.Rejected {
			t.Errorf("a sell of the 10 held: rejected by %s (%s)", p.Order.RejectRule, p.Order.RejectReason)
		}
	})
}
