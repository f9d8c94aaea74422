package backtestdb

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/backtest"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/internal/testkit"
	"github.com/tradekit/tradekit/marketdata"
)

// mustBars stores an asset of NYSE with n daily bars on consecutive
// weekdays from 2010, open and close cycling over a week so that a
// strategy trades.
func mustBars(tb testing.TB, db bun.IDB, symbol string, n int) {
	tb.Helper()
	ctx := context.Background()
	md := marketdata.NewStore(db)
	a := marketdata.Asset{Symbol: symbol, Name: symbol, Type: marketdata.Stock, ExchangeID: marketdata.ExchangeID("NYSE"), Currency: "USD", IsActive: true}
	if err := md.SaveAsset(ctx, &a); err != nil {
		tb.Fatal(err)
	}
	ps := make([]marketdata.Price, 0, n)
	for d := calendar.NewDate(2010, 1, 4); len(ps) < n; d = d.AddDays(1) {
		if wd := d.Weekday(); wd == time.Saturday || wd == time.Sunday {
			continue
		}
		p := decimal.NewFromInt(100 + int64(len(ps)%7))
		ps = append(ps, marketdata.Price{AssetID: a.ID, Date: d, Open: p, High: p.Add(decimal.NewFromInt(1)),
			Low: p.Sub(decimal.NewFromInt(1)), Close: p.Add(decimal.RequireFromString("0.5")), Volume: 1000})
	}
	if err := md.SavePrices(ctx, ps); err != nil {
		tb.Fatal(err)
	}
}

// mustCompile compiles the strategy of the entry and exit formulas.
func mustCompile(tb testing.TB, entry, exit string) *backtest.Compiled {
	tb.Helper()
	c, err := backtest.Strategy{Entry: entry, Exit: exit}.Compile()
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// resultDoc is what the tests read of a stored result's document.
type resultDoc struct {
	ID              string           `json:"id"`
	StrategyHash    string           `json:"strategyHash"`
	Symbols         []string         `json:"symbols"`
	Equity          []map[string]any `json:"equity"`
	EquityDays      int              `json:"equityDays"`
	Trades          []map[string]any `json:"trades"`
	TradesTruncated int              `json:"tradesTruncated"`
	Stats           struct {
		Trades int `json:"trades"`
	} `json:"stats"`
}

// mustDoc decodes r's document.
func mustDoc(tb testing.TB, r Record) resultDoc {
	tb.Helper()
	var d resultDoc
	if err := json.Unmarshal([]byte(r.Document), &d); err != nil {
		tb.Fatalf("the document of %s: %v", r.StrategyHash, err)
	}
	return d
}

// rows returns how many rows of model's table match where.
func rows(tb testing.TB, db bun.IDB, model any, where string, args ...any) int {
	tb.Helper()
	n, err := db.NewSelect().Model(model).Where(where, args...).Count(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// TestServiceRun runs backtests through the Service on stored prices: a
// result is saved with its document and figures, a rerun replaces it, a
// new strategy past the account's limit is refused until one is deleted,
// only the owner deletes, a universe that names nothing is refused
// naming the parameter, and every run gives its lease back.
func TestServiceRun(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		mustBars(t, db, "WIDG", 60)
		t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
		clk := testkit.NewClock(t0)
		svc := New(db, ServiceConfig{Now: clk.Now})
		user, other := mustUser(t, db), mustUser(t, db)
		o := Owner{UserID: user, AccountID: user, MaxStored: 1, MaxRunning: 1}
		widg := Universe{Symbols: []string{"WIDG"}}
		first := mustCompile(t, "close > open", "close < open")

		rec, err := svc.Run(ctx, o, Request{Strategy: first, Universe: widg})
		if err != nil {
			t.Fatal(err)
		}
		got, err := svc.Result(ctx, user, first.Hash())
		if err != nil || got.ID != rec.ID || got.Document != rec.Document || !got.CreatedAt.Equal(t0) ||
			got.TotalReturn == nil || rec.TotalReturn == nil || *got.TotalReturn != *rec.TotalReturn {
			t.Errorf("Result() = %s created at %v, %v; want the run's %s created at %v, its document and figures", got.ID, got.CreatedAt, err, rec.ID, t0)
		}
		d := mustDoc(t, got)
		if d.ID != rec.ID.String() || d.StrategyHash != first.Hash() || len(d.Symbols) != 1 || d.Symbols[0] != "WIDG" ||
			d.EquityDays == 0 || len(d.Equity) != d.EquityDays || d.TradesTruncated != 0 || len(d.Trades) != d.Stats.Trades {
			t.Errorf("the stored document: id %s, hash %s, symbols %v, %d of %d days, %d trades listed of %d, %d truncated",
				d.ID, d.StrategyHash, d.Symbols, len(d.Equity), d.EquityDays, len(d.Trades), d.Stats.Trades, d.TradesTruncated)
		}

		// A rerun replaces the result: one row, the new run's.
		clk.Add(time.Hour)
		rerun, err := svc.Run(ctx, o, Request{Strategy: first, Universe: widg})
		if err != nil {
			t.Fatalf("a rerun at the limit: %v", err)
		}
		if n := rows(t, db, (*Record)(nil), "user_id = ?", user); n != 1 {
			t.Errorf("%d results after a rerun, want 1", n)
		}
		if got, err := svc.Result(ctx, user, first.Hash()); err != nil || got.ID != rerun.ID || got.ID == rec.ID || !got.CreatedAt.Equal(t0.Add(time.Hour)) {
			t.Errorf("after the rerun Result() = %s created at %v, %v; want the rerun's %s created at %v", got.ID, got.CreatedAt, err, rerun.ID, t0.Add(time.Hour))
		}

		// A new strategy past the limit; room once the kept one is
		// deleted, by its owner only.
		second := mustCompile(t, "close < open", "close > open")
		if _, err := svc.Run(ctx, o, Request{Strategy: second, Universe: widg}); !errors.Is(err, tradekit.ErrForbidden) {
			t.Errorf("a second strategy on a plan keeping one: %v, want forbidden", err)
		}
		if err := svc.Delete(ctx, other, first.Hash()); !errors.Is(err, tradekit.ErrNotFound) {
			t.Errorf("another user's Delete() = %v, want not found", err)
		}
		if err := svc.Delete(ctx, user, first.Hash()); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Result(ctx, user, first.Hash()); !errors.Is(err, tradekit.ErrNotFound) {
			t.Errorf("Result() after Delete() = %v, want not found", err)
		}
		if _, err := svc.Run(ctx, o, Request{Strategy: second, Universe: widg}); err != nil {
			t.Errorf("a second strategy after deleting the first: %v", err)
		}

		// A universe that names nothing is refused naming the parameter,
		// and stores nothing.
		for _, tt := range []struct {
			u     Universe
			param string
		}{
			{Universe{}, "symbols"},
			{Universe{Symbols: []string{"NOPE"}}, "symbols"},
			{Universe{Symbols: []string{"WIDG"}, Index: "SPX"}, "index"},
			{Universe{Index: "NOPE"}, "index"},
		} {
			_, err := svc.Run(ctx, o, Request{Strategy: second, Universe: tt.u})
			var pe *tradekit.ParamError
			if !errors.As(err, &pe) || pe.Param != tt.param {
				t.Errorf("Run() over %+v = %v, want a ParamError naming %s", tt.u, err, tt.param)
			}
		}
		if n := rows(t, db, (*Record)(nil), "user_id = ?", user); n != 1 {
			t.Errorf("%d results after the refused runs, want 1", n)
		}
		if n := rows(t, db, (*runLease)(nil), "account_id = ?", user); n != 0 {
			t.Errorf("%d leases left after the runs, want none", n)
		}
	})
}

// TestServiceRunTruncated runs a strategy that trades every other day
// over more than 2 × MaxTrades days: the stored document lists the last
// MaxTrades trades and counts the others in tradesTruncated.
func TestServiceRunTruncated(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		mustBars(t, db, "BUSY", 2*MaxTrades+300)
		svc := New(db, ServiceConfig{})
		user := mustUser(t, db)
		c := mustCompile(t, "close > 0", "close > 0")
		if _, err := svc.Run(ctx, Owner{UserID: user, AccountID: user, MaxStored: 1, MaxRunning: 1},
			Request{Strategy: c, Universe: Universe{Symbols: []string{"BUSY"}}}); err != nil {
			t.Fatal(err)
		}
		got, err := svc.Result(ctx, user, c.Hash())
		if err != nil {
			t.Fatal(err)
		}
		d := mustDoc(t, got)
		if d.Stats.Trades <= MaxTrades || len(d.Trades) != MaxTrades || d.TradesTruncated != d.Stats.Trades-MaxTrades {
			t.Errorf("%d trades listed, %d truncated, %d in the stats; want %d listed and the rest truncated",
				len(d.Trades), d.TradesTruncated, d.Stats.Trades, MaxTrades)
		}
		if len(d.Equity) != d.EquityDays || d.EquityDays < 2*MaxTrades {
			t.Errorf("%d equity days listed of %d, want all of them", len(d.Equity), d.EquityDays)
		}
	})
}
