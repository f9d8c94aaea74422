package server_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/server"
)

// TestAlertAgreesWithIndicatorAcrossSplit checks that an alert evaluates
// the series the adjusted indicator route shows (by default) and the one
// as traded with adjusted=false. SPLT (see mustSplitAsset and
// mustSplitActions) gets a fifth bar, close 25.2, after the alerts are
// made; its 5-day SMA is then
//
//	adjusted  (24.5 + 24.99 + 24.99 + 25 + 25.2) / 5 = 24.936
//	traded    (100 + 102 + 25.5 + 25 + 25.2) / 5     = 55.54
//
// so "sma(close, 5) < 30" holds on the adjusted series only.
func TestAlertAgreesWithIndicatorAcrossSplit(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		srv := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db)
		h := srv.Handler()
		key := mustKey(t, db, "adjalerts@example.com", "business")
		mustSplitAsset(t, db)
		mustSplitActions(t, db)
		id := spltAsset.String()
		cond := url.QueryEscape("sma(close, 5) < 30")
		made := map[string]string{} // alert id by adjusted parameter ("" for none)
		for _, adj := range []string{"", "true", "false"} {
			q := "/api/v1/alerts?assetId=" + id + "&name=low-sma&once=false&condition=" + cond
			if adj != "" {
				q += "&adjusted=" + adj
			}
			r := send(t, h, "POST", q, key)
			if r.status != 200 {
				t.Fatalf("create with adjusted=%q: %d %s", adj, r.status, r.raw)
			}
			a := r.body["data"].(map[string]any)
			if want := adj != "false"; a["adjusted"] != want {
				t.Errorf("create with adjusted=%q: adjusted %v, want %v", adj, a["adjusted"], want)
			}
			made[adj] = a["id"].(string)
		}
		c := decimal.RequireFromString("25.2")
		bar := marketdata.Price{AssetID: spltAsset, Date: calendar.NewDate(2024, 1, 8), Open: c, High: c, Low: c, Close: c, Volume: 1000}
		if err := marketdata.NewStore(db).SavePrices(ctx, []marketdata.Price{bar}); err != nil {
			t.Fatal(err)
		}
		if n, err := srv.Alerts().Evaluate(ctx); err != nil || n != 2 {
			t.Fatalf("Evaluate = %d, %v; want 2 (the adjusted alerts)", n, err)
		}
		for adj, alertID := range made {
			basis := adj
			if basis == "" {
				basis = "true" // the alerts' default
			}
			r := get(t, h, "/api/v1/indicators/asset/"+id+"?"+query("indicator", "SMA", "params", `{"period":5}`, "adjusted", basis), key)
			if r.status != 200 {
				t.Fatalf("SMA adjusted=%s: %d %s", basis, r.status, r.raw)
			}
			latest := r.list(t)[0] // newest first
			sma := latest["value"].(float64)
			a := get(t, h, "/api/v1/alerts/"+alertID, key).body["data"].(map[string]any)
			fired := len(a["firings"].([]any)) == 1
			if holds := sma < 30; fired != holds || latest["date"] != "2024-01-08" {
				t.Errorf("alert with adjusted=%q: fired %v; the route's adjusted=%s SMA(5) on %v is %v (< 30: %v)",
					adj, fired, basis, latest["date"], sma, holds)
			}
		}
	})
}
