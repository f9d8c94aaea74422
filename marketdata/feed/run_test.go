package feed_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/marketdata/feed"
	"github.com/tradekit/tradekit/marketdata/feed/feedtest"
	"github.com/tradekit/tradekit/marketdata/feed/massive"
)

// november is the range of the end-to-end tests: 2026-11-02 (a Monday) to
// 2026-11-30, with four weekends and Thanksgiving (Thursday 26th).
var (
	novFrom = calendar.NewDate(2026, 11, 2)
	novTo   = calendar.NewDate(2026, 11, 30)
)

func mustMassive(t testing.TB, srv *feedtest.Server, waits *[]time.Duration) *massive.Client {
	t.Helper()
	c, err := massive.New(massive.Config{BaseURL: srv.URL, APIKey: srv.Key, Sleep: func(_ context.Context, d time.Duration) error {
		if waits != nil {
			*waits = append(*waits, d)
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRunMonth is the "done when": a month of grouped daily bars
// for 500 tickers with one split and one dividend lands (see
// BenchmarkRunMonth for the time), adjusted prices reflect the split, a
// rerun changes nothing, the holiday and the weekends are skipped, and a
// 429 with Retry-After is honoured.
func TestRunMonth(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		m := feedtest.NewMarket(500, novFrom, novTo)
		m.Unknown["S0499"] = true // trades, but no reference lists it
		srv := feedtest.NewMassive(t, m)
		srv.PageSize = 200 // the tickers list comes in three pages
		srv.Fail("/v2/aggs/", 429, 1, "3")
		var waits []time.Duration
		r := &feed.Runner{DB: db, Provider: mustMassive(t, srv, &waits), Instance: "test"}
		res, err := r.Run(ctx, novFrom, novTo)
		if err != nil {
			t.Fatal(err)
		}
		if err := res.Err(); err != nil {
			t.Fatal(err)
		}
		// 20 sessions: 29 days less 8 weekend days and Thanksgiving.
		if res.Days != 20 || res.Fetched != 20 || res.Rows != 20*500 || len(res.NewAssets) != 500 || res.Actions != 2 {
			t.Errorf("result = %s, want 20 days fetched, 10000 rows, 500 new assets, 2 actions", res)
		}
		grouped := srv.Requests("/v2/aggs/grouped/")
		for _, q := range grouped {
			for _, skipped := range []string{"2026-11-07", "2026-11-08", "2026-11-26"} {
				if strings.Contains(q, skipped) {
					t.Errorf("request %s for a day NYSE does not trade", q)
				}
			}
		}
		if len(grouped) != 21 { // 20 days and the retry of the 429
			t.Errorf("%d grouped-daily requests, want 21", len(grouped))
		}
		if len(waits) != 1 || waits[0] != 3*time.Second {
			t.Errorf("waits = %v, want the 429's Retry-After of 3s", waits)
		}
		if n := len(srv.Requests("/v3/reference/tickers")); n != 3 {
			t.Errorf("%d tickers requests, want 3 pages", n)
		}

		md := marketdata.NewStore(db)
		a, err := md.AssetBySymbol(ctx, "S0001")
		if err != nil {
			t.Fatal(err)
		}
		if a.Name != "Synthetic Company 1 Inc." || a.Type != marketdata.Stock {
			t.Errorf("new asset = %+v, want the reference's name", a)
		}
		if u, err := md.AssetBySymbol(ctx, "S0499"); err != nil || u.Name != "S0499" {
			t.Errorf("unknown to the reference: asset = %+v, %v; want one named after its symbol", u, err)
		}
		// The split (4 for 1 on the 6th session, 2026-11-09): raw prices
		// before it are about 4 times those after; adjusted ones are
		// divided by 4.
		split := m.Splits[0].Date
		raw, err := md.Prices(ctx, a.ID, novFrom, novTo)
		if err != nil {
			t.Fatal(err)
		}
		adj, err := md.AdjustedPrices(ctx, a.ID, novFrom, novTo)
		if err != nil {
			t.Fatal(err)
		}
		for i := range raw {
			want := raw[i].Close
			if raw[i].Date.Before(split) {
				want = want.Div(decimal.NewFromInt(4))
			}
			if !adj[i].Close.Sub(want).Abs().LessThan(decimal.New(1, -5)) {
				t.Errorf("%s: adjusted close %s, want %s (raw %s)", raw[i].Date, adj[i].Close, want, raw[i].Close)
			}
		}
		acts, err := md.Actions(ctx, a.ID)
		if err != nil || len(acts) != 1 || !acts[0].Value.Equal(decimal.NewFromInt(4)) {
			t.Errorf("actions of S0001 = %v, %v; want the split", acts, err)
		}

		// A rerun changes nothing, sends no request for the stored days and
		// says so.
		before := len(srv.Requests(""))
		res2, err := r.Run(ctx, novFrom, novTo)
		if err != nil {
			t.Fatal(err)
		}
		if !res2.Unchanged() || res2.Stored != 20 || res2.Fetched != 0 || !strings.Contains(res2.String(), "nothing changed") {
			t.Errorf("rerun = %s, want nothing changed", res2)
		}
		if after := len(srv.Requests("")); after != before {
			t.Errorf("rerun sent %d requests, want none", after-before)
		}
		runs, err := feed.NewStore(db).Runs(ctx, "massive", 10)
		if err != nil || len(runs) != 1 || runs[0].Outcome != feed.OutcomeOK || runs[0].Rows != 10000 {
			t.Errorf("runs = %+v, %v; want one ok run of 10000 rows", runs, err)
		}
	})
}

// TestRunFailedDay: a day the provider fails is reported and recorded,
// the others kept; the next run fetches only that day. Refetching a stored
// day through the import path changes nothing.
func TestRunFailedDay(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		from, to := calendar.NewDate(2026, 11, 23), calendar.NewDate(2026, 11, 30) // Thanksgiving week
		m := feedtest.NewMarket(20, from, to)
		srv := feedtest.NewMassive(t, m)
		srv.Fail("/v2/aggs/grouped/locale/us/market/stocks/2026-11-24", 503, 6, "") // the request and its 5 retries
		r := &feed.Runner{DB: db, Provider: mustMassive(t, srv, nil)}
		res, err := r.Run(ctx, from, to)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Failed) != 1 || res.Failed[0].Date != calendar.NewDate(2026, 11, 24) || res.Fetched != 4 {
			t.Fatalf("result = %s, failed %v; want 2026-11-24 failed, 4 days stored", res, res.Failed)
		}
		if err := res.Err(); err == nil || !strings.Contains(err.Error(), "2026-11-24") || !strings.Contains(err.Error(), "503") {
			t.Errorf("Err() = %v, want the day and the provider's status", err)
		}
		runs, _ := feed.NewStore(db).Runs(ctx, "massive", 1)
		if len(runs) != 1 || runs[0].Outcome != feed.OutcomePartial || runs[0].FailedDays != 1 {
			t.Errorf("run = %+v, want partial with 1 failed day", runs)
		}
		before := len(srv.Requests("/v2/aggs/"))
		res, err = r.Run(ctx, from, to)
		if err != nil {
			t.Fatal(err)
		}
		if got := srv.Requests("/v2/aggs/")[before:]; len(got) != 1 || !strings.Contains(got[0], "2026-11-24") {
			t.Errorf("second run asked %v, want only 2026-11-24", got)
		}
		if res.Stored != 4 || res.Fetched != 1 || len(res.Failed) != 0 || res.Rows != 20 {
			t.Errorf("second run = %s, want 2026-11-24 fetched, 4 days already stored", res)
		}
	})
}

// TestRunAuthReportedOnce: refused credentials stop the run at the first
// request and fail every day with that one error.
func TestRunAuthReportedOnce(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		m := feedtest.NewMarket(5, novFrom, novTo)
		srv := feedtest.NewMassive(t, m)
		srv.Fail("/v2/aggs/", 403, 1, "")
		r := &feed.Runner{DB: db, Provider: mustMassive(t, srv, nil)}
		res, err := r.Run(ctx, novFrom, novTo)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(srv.Requests("")); n != 1 {
			t.Errorf("%d requests, want 1", n)
		}
		if len(res.Failed) != 20 || !errors.Is(res.Err(), feed.ErrAuth) ||
			!strings.Contains(res.Err().Error(), "You are not entitled to this data") {
			t.Errorf("result = %s, Err %v; want 20 days failed with the provider's 403 message", res, res.Err())
		}
		runs, _ := feed.NewStore(db).Runs(ctx, "massive", 1)
		if len(runs) != 1 || runs[0].Outcome != feed.OutcomeFailed {
			t.Errorf("run = %+v, want failed", runs)
		}
	})
}

func TestLease(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		st := feed.NewStore(db)
		now := time.Date(2026, 11, 27, 23, 0, 0, 0, time.UTC)
		for _, step := range []struct {
			holder string
			at     time.Time
			want   bool
		}{
			{"a", now, true},
			{"b", now.Add(time.Minute), false},    // a's lease runs
			{"a", now.Add(2 * time.Minute), true}, // a renews
			{"b", now.Add(8 * time.Minute), true}, // a's lapsed
			{"a", now.Add(9 * time.Minute), false},
		} {
			got, err := st.Acquire(ctx, "feed:massive", step.holder, step.at, 5*time.Minute)
			if err != nil || got != step.want {
				t.Errorf("Acquire(%s at %s) = %v, %v; want %v", step.holder, step.at.Format("15:04"), got, err, step.want)
			}
		}
		if err := st.Release(ctx, "feed:massive", "b"); err != nil {
			t.Fatal(err)
		}
		if got, _ := st.Acquire(ctx, "feed:massive", "a", now.Add(10*time.Minute), 5*time.Minute); !got {
			t.Error("after b's release, a did not get the lease")
		}
	})
}

// TestRunEmptyDay: a session the provider has no bars for yet (an empty
// grouped-daily answer) is not recorded as stored: the next run fetches it
// once the provider has it.
func TestRunEmptyDay(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		from, to := calendar.NewDate(2026, 11, 23), calendar.NewDate(2026, 11, 24)
		m := feedtest.NewMarket(10, from, to)
		late := m.Bars[to]
		m.Bars[to] = nil
		srv := feedtest.NewMassive(t, m)
		r := &feed.Runner{DB: db, Provider: mustMassive(t, srv, nil)}
		res, err := r.Run(ctx, from, to)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Failed) != 1 || res.Failed[0].Date != to || !strings.Contains(res.Failed[0].Error(), "no bars for this day") {
			t.Fatalf("result = %s, failed %v; want %s failed with no bars", res, res.Failed, to)
		}
		for _, b := range late {
			m.SetBar(to, b)
		}
		res, err = r.Run(ctx, from, to)
		if err != nil || res.Fetched != 1 || res.Rows != 10 || len(res.Failed) != 0 {
			t.Errorf("second run = %s, %v; want %s fetched", res, err, to)
		}
	})
}

// TestRunProviderSpelling: a ticker Massive spells in mixed case (a
// preferred share, KIMpL) is stored upper case and still gets its name from
// the reference, asked with the provider's spelling.
func TestRunProviderSpelling(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		from, to := calendar.NewDate(2026, 11, 23), calendar.NewDate(2026, 11, 24)
		m := feedtest.NewMarket(2, from, to)
		m.Symbols = append(m.Symbols, "KIMpL")
		m.Names["KIMpL"] = "Kimco Realty Corp. Class L Depositary Shares"
		for _, d := range m.Days {
			m.SetBar(d, feed.Bar{Symbol: "KIMpL", Open: decimal.RequireFromString("26.07"), High: decimal.RequireFromString("26.25"),
				Low: decimal.RequireFromString("25.91"), Close: decimal.RequireFromString("25.9102"), Volume: 4369})
		}
		srv := feedtest.NewMassive(t, m)
		if _, err := (&feed.Runner{DB: db, Provider: mustMassive(t, srv, nil)}).Run(ctx, from, to); err != nil {
			t.Fatal(err)
		}
		a, err := marketdata.NewStore(db).AssetBySymbol(ctx, "KIMPL")
		if err != nil || a.Name != "Kimco Realty Corp. Class L Depositary Shares" {
			t.Errorf("asset = %+v, %v; want KIMPL with the reference's name", a, err)
		}
	})
}
