package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/marketdata/feed"
	"github.com/tradekit/tradekit/marketdata/feed/feedtest"
	"github.com/tradekit/tradekit/marketdata/feed/massive"
	"github.com/tradekit/tradekit/server"
)

// TestFeedList: GET /api/v1/market-data/feeds shows an administrator the
// last runs, a failed day and the next run; another key gets 403.
func TestFeedList(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		from, to := calendar.NewDate(2026, 11, 23), calendar.NewDate(2026, 11, 25)
		srv := feedtest.NewMassive(t, feedtest.NewMarket(5, from, to))
		srv.Fail("/v2/aggs/grouped/locale/us/market/stocks/2026-11-25", 404, 1, "")
		p, err := massive.New(massive.Config{BaseURL: srv.URL, APIKey: srv.Key})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := (&feed.Runner{DB: db, Provider: p, Instance: "host-1"}).Run(ctx, from, to); err != nil {
			t.Fatal(err)
		}
		next := time.Date(2026, 11, 25, 23, 0, 0, 0, time.UTC)
		if err := feed.NewStore(db).SetNextRun(ctx, "massive", next, time.Now()); err != nil {
			t.Fatal(err)
		}
		h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler()
		admin := mustAccount(t, db, "ops", "free", 1)

		r := get(t, h, "/api/v1/market-data/feeds", admin[1]) // a member
		if r.status != 403 || r.errorCode() != "FORBIDDEN" {
			t.Errorf("member: %d %s, want 403 FORBIDDEN", r.status, r.raw)
		}
		r = get(t, h, "/api/v1/market-data/feeds", admin[0])
		if r.status != 200 {
			t.Fatalf("admin: %d %s", r.status, r.raw)
		}
		data := r.body["data"].(map[string]any)
		runs := data["runs"].([]any)
		run := runs[0].(map[string]any)
		if len(runs) != 1 || run["outcome"] != "partial" || run["days"] != 2.0 || run["failedDays"] != 1.0 || run["rows"] != 10.0 ||
			run["from"] != "2026-11-23" || run["instance"] != nil {
			t.Errorf("runs = %v, want one partial run of 2 days, 10 rows, without its instance", runs)
		}
		providers := data["providers"].([]any)
		m := providers[0].(map[string]any)
		failed := m["failedDays"].([]any)
		if m["provider"] != "massive" || m["nextRunAt"] != "2026-11-25T23:00:00Z" || len(failed) != 1 ||
			failed[0].(map[string]any)["date"] != "2026-11-25" {
			t.Errorf("providers = %v, want massive's next run and its failed day", providers)
		}
		if a := providers[1].(map[string]any); a["provider"] != "alpaca" || a["nextRunAt"] != nil {
			t.Errorf("alpaca = %v, want no next run", a)
		}
	})
}
