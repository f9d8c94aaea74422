package server_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tradekit/tradekit/backtest"
	"github.com/tradekit/tradekit/backtest/backtestdb"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/marketdata/calendar"
	"github.com/tradekit/tradekit/marketdata/demo"
	"github.com/tradekit/tradekit/server"
)

// TestBacktestDocument checks that backtestdb.Run, which stores the demo
// leaders' backtests, writes the document POST /api/v1/backtests writes
// for the same run, but for its id and creation time: GET
// /api/v1/backtests/:hash serves either. (The handler still builds its
// own; this keeps the two from drifting apart. The document does not
// depend on the database, so SQLite suffices.)
func TestBacktestDocument(t *testing.T) {
	ctx := context.Background()
	db := dbtest.SQLite(t)
	set, err := demo.Generate(demo.Config{Start: calendar.NewDate(2024, 1, 2)})
	if err != nil {
		t.Fatal(err)
	}
	if err := marketdata.InConnTx(ctx, db, func(ctx context.Context, st *marketdata.Store) error {
		return demo.Load(ctx, st, set)
	}); err != nil {
		t.Fatal(err)
	}
	h := server.New(server.Config{Logger: quietLogger()}, db).Handler()
	key := mustKey(t, db, "quant@example.com", "pro")
	r := send(t, h, "POST", "/api/v1/backtests?"+query("entry", "close > sma(close, 20)", "exit", "close < sma(close, 20)",
		"maxPositions", "2", "stopLossPct", "5", "commissionBps", "3", "symbols", "QNTC,NWSC", "from", "2024-03-01", "cash", "50000"), key)
	if r.status != 200 {
		t.Fatalf("run: %d %s", r.status, r.raw)
	}

	c, err := backtest.Strategy{Entry: "close > sma(close, 20)", Exit: "close < sma(close, 20)", MaxPositions: 2, StopLossPct: 5,
		CommissionBps: 3}.Compile()
	if err != nil {
		t.Fatal(err)
	}
	u := backtestdb.Universe{Symbols: []string{"QNTC", "NWSC"}}
	l, err := backtestdb.Load(ctx, marketdata.NewStore(db), u)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := backtestdb.Run(ctx, c, u, l, backtest.Config{Cash: 50000, From: calendar.NewDate(2024, 3, 1)}, userID(t, db, "quant@example.com"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var api, lib map[string]any
	if err := json.Unmarshal([]byte(r.raw), &api); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(rec.Document), &lib); err != nil {
		t.Fatal(err)
	}
	want := api["data"].(map[string]any)
	for _, k := range []string{"id", "createdAt"} {
		if lib[k] == nil || want[k] == nil {
			t.Errorf("%s missing: library %v, API %v", k, lib[k], want[k])
		}
		delete(lib, k)
		delete(want, k)
	}
	if diff := cmp.Diff(want, lib); diff != "" {
		t.Errorf("backtestdb.Run's document differs from the API's (-API +library):\n%s", diff)
	}
	if rec.TotalReturn == nil || *rec.TotalReturn != want["stats"].(map[string]any)["totalReturn"] || rec.StrategyHash != want["strategyHash"] {
		t.Errorf("record: total return %v, hash %s; the document's %v", rec.TotalReturn, rec.StrategyHash, want["stats"])
	}
}
