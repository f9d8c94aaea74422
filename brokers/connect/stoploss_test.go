package connect

import (
	"testing"

	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/internal/dbtest"
)

// TestSellReleasesStopLosses checks that a sell the broker refuses
// because the stop-loss leg of a buy holds the position is sent again
// once ReleaseStopLosses has cancelled the leg, and that nothing else
// calls ReleaseStopLosses: a sell the position covers, a refused buy, or
// a sell whose release fails, which stays refused with the broker's
// reason.
func TestSellReleasesStopLosses(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		refusal := &brokers.RefusedError{Reason: "insufficient buying power", Code: 40310000}

		t.Run("SellOfAStoppedPosition", func(t *testing.T) {
			f := newFixture(t, db)
			f.mustLedger(t, f.s, f.conn)
			f.broker.set(func(b *fakeBroker) { b.autoFill = true })
			mustPlace(t, f.s, f.user, withStop(marketOrder(f.conn, f.acme, brokers.Buy, "10"), "90"))
			p := mustPlace(t, f.s, f.user, marketOrder(f.conn, f.acme, brokers.Sell, "4"))
			if p.Order.Status != brokers.Filled {
				t.Errorf("the sell beside the stop leg: %s (%s), want filled", p.Order.Status, p.Order.RejectReason)
			}
			if n, m := f.broker.count("PlaceOrder"), f.broker.count("ReleaseStopLosses"); n != 3 || m != 1 {
				t.Errorf("%d PlaceOrder and %d ReleaseStopLosses calls, want 3 (the buy, the refused sell, the sell) and 1", n, m)
			}
			// The rest of the position has no stop left to release.
			p = mustPlace(t, f.s, f.user, marketOrder(f.conn, f.acme, brokers.Sell, "6"))
			if p.Order.Status != brokers.Filled || f.broker.count("ReleaseStopLosses") != 1 {
				t.Errorf("the second sell: %s, %d releases; want filled without a release", p.Order.Status, f.broker.count("ReleaseStopLosses"))
			}
		})

		t.Run("ReleaseFails", func(t *testing.T) {
			f := newFixture(t, db)
			f.mustLedger(t, f.s, f.conn)
			f.broker.set(func(b *fakeBroker) { b.autoFill = true })
			mustPlace(t, f.s, f.user, withStop(marketOrder(f.conn, f.acme, brokers.Buy, "10"), "90"))
			f.broker.set(func(b *fakeBroker) { b.Before = failOn("ReleaseStopLosses", 1, errDown) })
			p := mustPlace(t, f.s, f.user, marketOrder(f.conn, f.acme, brokers.Sell, "10"))
			if p.Order.Status != brokers.Rejected || p.Order.RejectReason != "insufficient qty available for order" || f.broker.count("PlaceOrder") != 2 {
				t.Errorf("the sell: %s %q after %d PlaceOrder calls; want rejected with the broker's reason, not sent again",
					p.Order.Status, p.Order.RejectReason, f.broker.count("PlaceOrder"))
			}
		})

		t.Run("RefusedBuy", func(t *testing.T) {
			f := newFixture(t, db)
			f.mustLedger(t, f.s, f.conn)
			f.broker.set(func(b *fakeBroker) { b.Before = failOn("PlaceOrder", 1, refusal) })
			p := mustPlace(t, f.s, f.user, marketOrder(f.conn, f.acme, brokers.Buy, "10"))
			if p.Order.Status != brokers.Rejected || f.broker.count("ReleaseStopLosses") != 0 {
				t.Errorf("a refused buy: %s, %d releases; want rejected without a release", p.Order.Status, f.broker.count("ReleaseStopLosses"))
			}
		})
	})
}
