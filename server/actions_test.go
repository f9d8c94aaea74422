package server_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/server"
)

var spltAsset = uuid.MustParse("40000000-0000-4000-8000-0000000000a1")

// mustSplitAsset stores SPLT with four NYSE bars: closes 100, 102, 25.5
// and 25, volumes 1,000, 2,000, 8,000 and 4,000.
func mustSplitAsset(tb testing.TB, db bun.IDB) {
	tb.Helper()
	ctx := context.Background()
	st := marketdata.NewStore(db)
	a := marketdata.Asset{ID: spltAsset, Symbol: "SPLT", Name: "Split Corp", Type: marketdata.Stock,
		ExchangeID: uuid.MustParse(nyseID), Currency: "USD", IsActive: true}
	if err := st.SaveAsset(ctx, &a); err != nil {
		tb.Fatal(err)
	}
	var ps []marketdata.Price
	for _, row := range []string{"2024-01-02 100 110 90 100 1000", "2024-01-03 100 104 96 102 2000",
		"2024-01-04 25.5 26 25 25.5 8000", "2024-01-05 25 25.5 24.5 25 4000"} {
		f := strings.Fields(row)
		d, _ := calendar.ParseDate(f[0])
		var vol int64
		fmt.Sscan(f[5], &vol)
		ps = append(ps, marketdata.Price{AssetID: spltAsset, Date: d, Open: decimal.RequireFromString(f[1]),
			High: decimal.RequireFromString(f[2]), Low: decimal.RequireFromString(f[3]), Close: decimal.RequireFromString(f[4]), Volume: vol})
	}
	if err := st.SavePrices(ctx, ps); err != nil {
		tb.Fatal(err)
	}
}

// mustSplitActions stores a 4-for-1 split ex 2024-01-04 and a dividend of
// 0.51 ex 2024-01-05.
func mustSplitActions(tb testing.TB, db bun.IDB) {
	tb.Helper()
	err := marketdata.NewStore(db).SaveActions(context.Background(), []marketdata.Action{
		{AssetID: spltAsset, Date: calendar.NewDate(2024, 1, 4), Kind: marketdata.Split, Value: decimal.NewFromInt(4)},
		{AssetID: spltAsset, Date: calendar.NewDate(2024, 1, 5), Kind: marketdata.Dividend, Value: decimal.RequireFromString("0.51")},
	})
	if err != nil {
		tb.Fatal(err)
	}
}

// column returns the field of every object of list.
func column(list []map[string]any, field string) []any {
	var out []any
	for _, o := range list {
		out = append(out, o[field])
	}
	return out
}

// TestAdjustedRoutes checks /actions and adjusted=true on prices,
// indicators, custom indicators and backtests against the hand-computed
// example of docs/importing.md: a 4-for-1 split ex 2024-01-04 makes every earlier bar
// times 1/4, and a 0.51 dividend ex 2024-01-05 after a 25.50 close makes
// every earlier bar times 1 - 0.51/25.5 = 0.98. Adjusted closes:
//
//	2024-01-02  100 * 0.25 * 0.98 = 24.5
//	2024-01-03  102 * 0.25 * 0.98 = 24.99
//	2024-01-04  25.5 * 0.98       = 24.99
//	2024-01-05  25 (as traded)
//
// and volumes 1,000 * 4, 2,000 * 4, 8,000 and 4,000.
func TestAdjustedRoutes(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler()
		key := mustKey(t, db, "adjusted@example.com", "business")
		mustSplitAsset(t, db)
		id := spltAsset.String()
		approx := cmpopts.EquateApprox(0, 1e-9)
		sma := func(adjusted string) []any {
			t.Helper()
			r := get(t, h, "/api/v1/indicators/asset/"+id+"?"+query("indicator", "SMA", "params", `{"period":2}`, "adjusted", adjusted), key)
			if r.status != 200 {
				t.Fatalf("SMA: %d %s", r.status, r.raw)
			}
			return column(r.list(t), "value") // newest first
		}
		// Before any action, adjusted is as traded; this also fills the
		// caches, which the actions below must invalidate.
		traded := []any{25.25, 63.75, 101.0} // (25.5+25)/2, (102+25.5)/2, (100+102)/2
		if diff := cmp.Diff(traded, sma("true"), approx); diff != "" {
			t.Errorf("adjusted SMA without actions (-want +got):\n%s", diff)
		}
		if r := get(t, h, "/api/v1/market-data/assets/"+id+"/actions", key); r.status != 200 || len(r.list(t)) != 0 {
			t.Errorf("actions before any: %d %s", r.status, r.raw)
		}

		mustSplitActions(t, db)
		r := get(t, h, "/api/v1/market-data/assets/"+id+"/actions", key)
		want := []map[string]any{
			{"assetId": id, "date": "2024-01-04", "kind": "split", "ratio": 4.0},
			{"assetId": id, "date": "2024-01-05", "kind": "dividend", "amount": 0.51},
		}
		if diff := cmp.Diff(want, r.list(t)); diff != "" {
			t.Errorf("actions (-want +got):\n%s", diff)
		}
		if r := get(t, h, "/api/v1/market-data/assets/"+uuid.NewString()+"/actions", key); r.status != 404 {
			t.Errorf("actions of an unknown asset: %d, want 404", r.status)
		}

		prices := get(t, h, "/api/v1/market-data/prices/asset/"+id+"?adjusted=true", key).list(t)
		if diff := cmp.Diff([]any{24.5, 24.99, 24.99, 25.0}, column(prices, "close"), approx); diff != "" {
			t.Errorf("adjusted closes (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]any{4000.0, 8000.0, 8000.0, 4000.0}, column(prices, "volume")); diff != "" {
			t.Errorf("adjusted volumes (-want +got):\n%s", diff)
		}
		prices = get(t, h, "/api/v1/market-data/prices/asset/"+id, key).list(t)
		if diff := cmp.Diff([]any{100.0, 102.0, 25.5, 25.0}, column(prices, "close"), approx); diff != "" {
			t.Errorf("traded closes (-want +got):\n%s", diff)
		}

		// The same cached series, now adjusted: (24.99+25)/2, (24.99+24.99)/2, (24.5+24.99)/2.
		if diff := cmp.Diff([]any{24.995, 24.99, 24.745}, sma("true"), approx); diff != "" {
			t.Errorf("adjusted SMA after the actions (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(traded, sma("false"), approx); diff != "" {
			t.Errorf("traded SMA after the actions (-want +got):\n%s", diff)
		}
		mtf := func(adjusted string) any {
			r := get(t, h, "/api/v1/indicators/asset/"+id+"/multi-timeframe?"+query("indicators", "SMA_2", "timeframes", "1d", "adjusted", adjusted), key)
			return r.object(t)["overlays"].(map[string]any)["SMA_2"].(map[string]any)["1d"]
		}
		if got, got2 := mtf("true"), mtf("false"); !near(got.(float64), 24.995) || !near(got2.(float64), 25.25) {
			t.Errorf("multi-timeframe SMA_2: adjusted %v, traded %v; want 24.995, 25.25", got, got2)
		}
		if r := get(t, h, "/api/v1/indicators/asset/"+id+"/summary?adjusted=true", key); r.status != 200 {
			t.Errorf("summary: %d %s", r.status, r.raw)
		}

		c := send(t, h, "POST", "/api/v1/indicators/custom?"+query("name", "range", "formula", "high - low"), key).object(t)
		eval := func(adjusted string) []any {
			r := send(t, h, "POST", "/api/v1/indicators/custom/"+c["id"].(string)+"/evaluate?"+query("assetId", id, "adjusted", adjusted), key)
			var vals []map[string]any
			for _, v := range r.object(t)["values"].([]any) {
				vals = append(vals, v.(map[string]any))
			}
			return column(vals, "value")
		}
		// Adjusted ranges, newest first: 25.5-24.5, (26-25)*0.98, (104-96)*0.245, (110-90)*0.245.
		if diff := cmp.Diff([]any{1.0, 0.98, 1.96, 4.9}, eval("true"), approx); diff != "" {
			t.Errorf("adjusted custom indicator (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]any{1.0, 1.0, 8.0, 20.0}, eval("false"), approx); diff != "" {
			t.Errorf("traded custom indicator (-want +got):\n%s", diff)
		}

		// Buy at the open of 2024-01-03 and hold: adjusted, from 24.5 to
		// 25 (+2.04%); as traded, from 100 to 25 (-75%).
		for _, tt := range []struct {
			adjusted string
			want     float64
		}{{"", 25/24.5 - 1}, {"true", 25/24.5 - 1}, {"false", 25.0/100 - 1}} {
			q := []string{"entry", "close > 0", "exit", "close < 0", "symbols", "SPLT"}
			if tt.adjusted != "" {
				q = append(q, "adjusted", tt.adjusted)
			}
			r := send(t, h, "POST", "/api/v1/backtests?"+query(q...), key)
			if r.status != 200 {
				t.Fatalf("backtest: %d %s", r.status, r.raw)
			}
			got := r.object(t)
			tr := got["stats"].(map[string]any)["totalReturn"].(float64)
			if math.Abs(tr-tt.want) > 1e-3 || got["adjusted"] != (tt.adjusted != "false") {
				t.Errorf("backtest adjusted=%q: total return %v, adjusted %v; want %v, %v", tt.adjusted, tr, got["adjusted"], tt.want, tt.adjusted != "false")
			}
		}
	})
}
