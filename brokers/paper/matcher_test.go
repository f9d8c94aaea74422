package paper_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/brokers/alpaca"
	"github.com/tradekit/tradekit/brokers/paper"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/internal/testkit"
	"github.com/tradekit/tradekit/marketdata"
)

// orderReads is a query hook that counts the queries bun runs and the
// rows that SELECTs from paper_orders return.
type orderReads struct{ queries, rows atomic.Int64 }

func (h *orderReads) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context { return ctx }

func (h *orderReads) AfterQuery(_ context.Context, e *bun.QueryEvent) {
	if e.Err == nil && e.Result != nil && strings.HasPrefix(e.Query, "SELECT") && strings.Contains(e.Query, `FROM "paper_orders"`) {
		if n, err := e.Result.RowsAffected(); err == nil {
			h.rows.Add(n)
		}
	}
	h.queries.Add(1)
}

// waitRows waits until the rows read since rows0 reach n, and fails
// after 20 s.
func (h *orderReads) waitRows(t *testing.T, rows0, n int64) {
	t.Helper()
	testkit.Eventually(t, 20*time.Second, func() error {
		if got := h.rows.Load() - rows0; got < n {
			return fmt.Errorf("%d order rows read, want at least %d", got, n)
		}
		return nil
	}, "the matcher's passes to read %d order rows", n)
}

// waitQueries waits until n more queries have run, and fails after 20 s.
func (h *orderReads) waitQueries(t *testing.T, n int64) {
	t.Helper()
	q0 := h.queries.Load()
	testkit.Eventually(t, 20*time.Second, func() error {
		if got := h.queries.Load() - q0; got < n {
			return fmt.Errorf("%d queries, want %d: is the matcher running?", got, n)
		}
		return nil
	}, "%d more queries", n)
}

// countStatus returns how many orders on symbol have status.
func countStatus(t *testing.T, db bun.IDB, symbol, status string) int {
	t.Helper()
	n, err := db.NewSelect().Table("paper_orders").Where("symbol = ? AND status = ?", symbol, status).Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// waitStatus waits until n orders on symbol have status, and fails after
// 20 s.
func waitStatus(t *testing.T, db bun.IDB, symbol, status string, n int) {
	t.Helper()
	testkit.Eventually(t, 20*time.Second, func() error {
		if got := countStatus(t, db, symbol, status); got != n {
			return fmt.Errorf("%d %s orders on %s, want %d", got, status, symbol, n)
		}
		return nil
	}, "%d %s orders on %s", n, status, symbol)
}

// saveClose stores close as the asset's bar of day.
func saveClose(t *testing.T, db bun.IDB, a marketdata.Asset, day, close string) {
	t.Helper()
	dd, err := calendar.ParseDate(day)
	if err != nil {
		t.Fatal(err)
	}
	c := d(close)
	p := marketdata.Price{AssetID: a.ID, Date: dd, Open: c, High: c, Low: c, Close: c, Volume: 1000}
	if err := marketdata.NewStore(db).SavePrices(context.Background(), []marketdata.Price{p}); err != nil {
		t.Fatal(err)
	}
}

// TestRegularPassSkipsStillOrders checks that the matcher's regular pass
// reads the resting orders only when their asset's prices change: with
// 20 limit buys far below ACME's close and one below WIDG's, the passes
// after the first read no order at all; a new ACME close far from the
// limits makes the passes read ACME's 20 orders once, and not WIDG's; a
// close through the limits fills ACME's 20 and leaves WIDG's open. (On
// main every pass read every open order.)
func TestRegularPassSkipsStillOrders(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		acme := mustPrices(t, db, "ACME", map[string]string{"2026-02-27": "100"})
		mustPrices(t, db, "WIDG", map[string]string{"2026-02-27": "50"})
		h := &orderReads{}
		db.AddQueryHook(h)
		e := mustEnv(t, db, paper.Config{MatchInterval: time.Millisecond})
		_, id := e.trader(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		place := func(symbol, limit string) {
			qty := d("1")
			_, err := e.b.Place(ctx, uuid.MustParse(id), alpaca.OrderRequestJSON{Symbol: symbol, Side: "buy", Type: "limit",
				TimeInForce: "gtc", Qty: &qty, LimitPrice: dp(limit)})
			if err != nil {
				t.Fatal(err)
			}
		}
		for range 20 {
			place("ACME", "90")
		}
		place("WIDG", "40")
		e.clock.Add(time.Minute) // the orders are no longer new
		rows0 := h.rows.Load()
		go e.b.Run(ctx)
		h.waitRows(t, rows0, 21) // the first pass reads them all

		rows0 = h.rows.Load()
		h.waitQueries(t, 20)
		if n := h.rows.Load() - rows0; n != 0 {
			t.Errorf("with prices and clock still, the passes read %d order rows; want 0", n)
		}

		rows0 = h.rows.Load()
		saveClose(t, db, acme, "2026-03-02", "95")
		h.waitRows(t, rows0, 20)
		h.waitQueries(t, 20)
		if n := h.rows.Load() - rows0; n != 20 {
			t.Errorf("after ACME's close moved, the passes read %d order rows; want ACME's 20, once", n)
		}

		saveClose(t, db, acme, "2026-03-03", "89")
		waitStatus(t, db, "ACME", "filled", 20)
		if n := countStatus(t, db, "WIDG", "new"); n != 1 {
			t.Errorf("%d WIDG orders open; want 1", n)
		}
	})
}

// TestRegularPassNewOrders checks that the regular pass fills an order
// placed through another Broker on the database, which runs no matcher
// (an instance that stopped before it matched its order, say), although
// no price moves: new orders are read by when they were placed.
func TestRegularPassNewOrders(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustPrices(t, db, "ACME", map[string]string{"2026-02-27": "100"})
		h := &orderReads{}
		db.AddQueryHook(h)
		e := mustEnv(t, db, paper.Config{MatchInterval: time.Millisecond})
		_, id := e.trader(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		qty := d("1")
		// A resting order, so that ACME has open orders and a seen version.
		if _, err := e.b.Place(ctx, uuid.MustParse(id), alpaca.OrderRequestJSON{Symbol: "ACME", Side: "buy", Type: "limit",
			TimeInForce: "gtc", Qty: &qty, LimitPrice: dp("90")}); err != nil {
			t.Fatal(err)
		}
		go e.b.Run(ctx)
		h.waitQueries(t, 10)
		other := paper.New(db, paper.Config{Now: e.clock.Now})
		if _, err := other.Place(ctx, uuid.MustParse(id), alpaca.OrderRequestJSON{Symbol: "ACME", Side: "buy", Type: "market",
			TimeInForce: "day", Qty: &qty}); err != nil {
			t.Fatal(err)
		}
		waitStatus(t, db, "ACME", "filled", 1)
	})
}

// TestRegularPassAuction checks that the regular pass fills an opg order
// when the clock passes the open of its session, although no price moves
// and the order is long placed: its session's bar is stored before the
// open.
func TestRegularPassAuction(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustPrices(t, db, "ACME", map[string]string{"2026-02-27": "100", "2026-03-03": "101"})
		h := &orderReads{}
		db.AddQueryHook(h)
		e := mustEnv(t, db, paper.Config{MatchInterval: time.Millisecond})
		_, id := e.trader(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		// 19:30 in New York on Monday 2 March: the order joins Tuesday's
		// opening auction, at 09:30 (14:30 UTC).
		e.clock.Set(time.Date(2026, 3, 3, 0, 30, 0, 0, time.UTC))
		qty := d("1")
		if _, err := e.b.Place(ctx, uuid.MustParse(id), alpaca.OrderRequestJSON{Symbol: "ACME", Side: "buy", Type: "market",
			TimeInForce: "opg", Qty: &qty}); err != nil {
			t.Fatal(err)
		}
		go e.b.Run(ctx)
		h.waitQueries(t, 10)
		e.clock.Set(time.Date(2026, 3, 3, 10, 0, 0, 0, time.UTC)) // 05:00 in New York: before the open
		h.waitQueries(t, 10)
		if n := countStatus(t, db, "ACME", "new"); n != 1 {
			t.Fatalf("%d open orders before the open; want 1", n)
		}
		e.clock.Set(time.Date(2026, 3, 3, 14, 31, 0, 0, time.UTC))
		waitStatus(t, db, "ACME", "filled", 1)
	})
}
