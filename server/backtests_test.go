package server_test

import (
	"context"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/backtest"
	"github.com/tradekit/tradekit/backtest/backtestdb"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/marketdata/demo"
	"github.com/tradekit/tradekit/server"
)

// TestBacktests runs backtests through the API on both databases: the
// result is the library's on the same stored bars, it is kept under the
// strategy hash, a strategy published with that hash shows its figures,
// and bad definitions are 400s naming the parameter.
func TestBacktests(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		// From 2025: 22 months of the demo set, enough for trades of SMA
		// 10/30 crossovers and for the index's members over time (16),
		// in a third fewer rows than from 2024 (a load costs seconds under
		// the race detector).
		set, err := demo.Generate(demo.Config{Start: calendar.NewDate(2025, 1, 2)})
		if err != nil {
			t.Fatal(err)
		}
		if err := marketdata.InConnTx(ctx, db, func(ctx context.Context, st *marketdata.Store) error {
			return demo.Load(ctx, st, set)
		}); err != nil {
			t.Fatal(err)
		}
		h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler()
		key, other := mustKey(t, db, "quant@example.com", "pro"), mustKey(t, db, "other@example.com", "pro")

		def := []string{"entry", "crossover(sma(close, 10), sma(close, 30))", "exit", "crossunder(sma(close,10), sma(close,30))",
			"maxPositions", "2", "commissionBps", "5", "slippageBps", "5", "stopLossPct", "8"}
		r := send(t, h, "POST", "/api/v1/backtests?"+query(append(def, "symbols", "QNTC,nwsc", "from", "2025-03-03")...), key)
		if r.status != 200 {
			t.Fatalf("run: %d %s", r.status, r.raw)
		}
		got := r.object(t)
		stats := got["stats"].(map[string]any)
		hash := got["strategyHash"].(string)
		if got["calendar"] != "NASDAQ" || len(got["symbols"].([]any)) != 2 || got["index"] != nil ||
			int(stats["trades"].(float64)) != len(got["trades"].([]any)) || stats["start"] != "2025-03-03" {
			t.Errorf("result: calendar %v, symbols %v, index %v, %v trades listed %d, start %v", got["calendar"], got["symbols"],
				got["index"], stats["trades"], len(got["trades"].([]any)), stats["start"])
		}

		// The same run through the library gives the same figures.
		s, err := backtest.Strategy{Entry: "crossover(sma(close,10),sma(close,30))", Exit: "crossunder(sma(close, 10), sma(close, 30))",
			MaxPositions: 2, CommissionBps: 5, SlippageBps: 5, StopLossPct: 8}.Compile()
		if err != nil {
			t.Fatal(err)
		}
		l, err := backtestdb.Load(ctx, marketdata.NewStore(db), backtestdb.Universe{Symbols: []string{"QNTC", "NWSC"}}, backtestdb.LoadConfig{})
		if err != nil {
			t.Fatal(err)
		}
		res, err := backtest.Run(ctx, s, l.Assets, backtest.Config{Days: l.Days, From: calendar.NewDate(2025, 3, 3)})
		if err != nil {
			t.Fatal(err)
		}
		if s.Hash() != hash || stats["totalReturn"] != res.Stats.TotalReturn || stats["sharpeRatio"] != res.Stats.Sharpe ||
			len(got["equity"].([]any)) != len(res.Equity) || res.Stats.Trades == 0 {
			t.Errorf("the API's result differs from the library's: hash %s / %s, total return %v / %v, Sharpe %v / %v, %d trades",
				hash, s.Hash(), stats["totalReturn"], res.Stats.TotalReturn, stats["sharpeRatio"], res.Stats.Sharpe, res.Stats.Trades)
		}

		// Kept under the hash, for its owner only.
		if again := send(t, h, "GET", "/api/v1/backtests/"+hash, key); again.status != 200 || again.raw != r.raw {
			t.Errorf("the stored result: %d, the same document %t", again.status, again.raw == r.raw)
		}
		if r := send(t, h, "GET", "/api/v1/backtests/"+hash, other); r.status != 404 {
			t.Errorf("another user's result: %d, want 404", r.status)
		}

		// A published strategy shows its author's result, rounded to 8
		// places as a leader's figures are.
		send(t, h, "POST", "/api/v1/copy-trading/strategies?"+query("strategyHash", hash, "name", "SMA 10/30"), key)
		send(t, h, "POST", "/api/v1/copy-trading/strategies?"+query("strategyHash", hash, "name", "Borrowed"), other)
		round8 := func(f float64) float64 { return decimal.NewFromFloat(f).Round(8).InexactFloat64() }
		for _, st := range send(t, h, "GET", "/api/v1/copy-trading/strategies", key).list(t) {
			switch st["name"] {
			case "SMA 10/30":
				if st["totalReturn"] != round8(res.Stats.TotalReturn) || st["sharpeRatio"] != round8(res.Stats.Sharpe) {
					t.Errorf("published strategy: totalReturn %v, sharpeRatio %v; want %v, %v rounded", st["totalReturn"], st["sharpeRatio"],
						res.Stats.TotalReturn, res.Stats.Sharpe)
				}
			case "Borrowed":
				if st["totalReturn"] != nil || st["sharpeRatio"] != nil {
					t.Errorf("a strategy whose author ran no backtest shows %v, %v", st["totalReturn"], st["sharpeRatio"])
				}
			}
		}

		// An index trades its members over time.
		r = send(t, h, "POST", "/api/v1/backtests?"+query(append(def, "index", "TKXUS15")...), key)
		if r.status != 200 || r.object(t)["index"] != "TKXUS15" || len(r.object(t)["symbols"].([]any)) < 15 {
			t.Errorf("index run: %d %.300s", r.status, r.raw)
		}

		many := strings.Repeat("QNTC,", 100) + "QNTC"
		for _, c := range []struct {
			kv    []string
			field string
		}{
			{[]string{"exit", "0", "symbols", "QNTC"}, "entry"},
			{[]string{"entry", "sma(close)", "exit", "0", "symbols", "QNTC"}, "entry"},
			{[]string{"entry", "1", "exit", "0", "symbols", "NOPE"}, "symbols"},
			{[]string{"entry", "1", "exit", "0", "symbols", many}, "symbols"},
			{[]string{"entry", "1", "exit", "0"}, "symbols"},
			{[]string{"entry", "1", "exit", "0", "symbols", "QNTC", "index", "TKXUS15"}, "index"},
			{[]string{"entry", "1", "exit", "0", "index", "NOPE"}, "index"},
			{[]string{"entry", "1", "exit", "0", "symbols", "QNTC", "maxPositions", "0"}, "maxPositions"},
			{[]string{"entry", "1", "exit", "0", "symbols", "QNTC", "slippageBps", "lots"}, "slippageBps"},
			{[]string{"entry", "1", "exit", "0", "symbols", "QNTC", "cash", "0"}, "cash"},
		} {
			r := send(t, h, "POST", "/api/v1/backtests?"+query(c.kv...), key)
			fields, _ := r.body["error"].(map[string]any)["details"].(map[string]any)["fields"].([]any)
			if r.status != 400 || len(fields) != 1 || fields[0] != c.field {
				t.Errorf("%v: %d %s, want 400 naming %s", c.kv, r.status, r.raw, c.field)
			}
		}
	})
}
