package studies_test

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/ohlcv"
	"github.com/tradekit/tradekit/studies"
)

// bars is how many daily bars the test asset has: closes 1, 2, …, bars
// on consecutive weekdays, each bar's high and low equal to its close.
const bars = 30

// mustAsset stores an asset with its bars and returns it and the dates
// of its bars.
func mustAsset(tb testing.TB, db bun.IDB) (marketdata.Asset, []calendar.Date) {
	tb.Helper()
	ctx := context.Background()
	md := marketdata.NewStore(db)
	a := marketdata.Asset{Symbol: "WIDG", Name: "Widgets", Type: marketdata.Stock, ExchangeID: marketdata.ExchangeID("NYSE"), Currency: "USD", IsActive: true}
	if err := md.SaveAsset(ctx, &a); err != nil {
		tb.Fatal(err)
	}
	var ps []marketdata.Price
	var dates []calendar.Date
	for d := calendar.NewDate(2026, 1, 5); len(ps) < bars; d = d.AddDays(1) {
		if wd := d.Weekday(); wd == 0 || wd == 6 {
			continue
		}
		c := decimal.NewFromInt(int64(len(ps) + 1))
		ps = append(ps, marketdata.Price{AssetID: a.ID, Date: d, Open: c, High: c, Low: c, Close: c, Volume: 100})
		dates = append(dates, d)
	}
	if err := md.SavePrices(ctx, ps); err != nil {
		tb.Fatal(err)
	}
	return a, dates
}

// near reports whether a and b agree to 1e-9.
func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// TestServiceSeries runs indicators over stored prices: the values are
// the prices', a change of prices is seen at once (the cache is keyed by
// the price version), adjusted series follow the corporate actions, and
// an unknown asset is not found.
func TestServiceSeries(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		a, dates := mustAsset(t, db)
		svc := studies.New(db, studies.Config{})
		sma3 := studies.Spec{Kind: studies.SMA, Period: 3}

		o, v, err := svc.Series(ctx, a.ID, false, sma3, ohlcv.Daily)
		if err != nil {
			t.Fatal(err)
		}
		if len(o.Dates) != bars || len(o.Value) != bars || o.Dates[bars-1] != dates[bars-1] {
			t.Fatalf("SMA(3): %d dates, %d values, last %v; want %d up to %v", len(o.Dates), len(o.Value), o.Dates[len(o.Dates)-1], bars, dates[bars-1])
		}
		// The mean of the last three closes, 28, 29 and 30; undefined
		// before the third bar.
		if !math.IsNaN(o.Value[1]) || !near(o.Value[2], 2) || !near(o.Value[bars-1], 29) {
			t.Errorf("SMA(3) = %v…%v, want NaN, NaN, 2 … 29", o.Value[:3], o.Value[bars-1])
		}
		if v.Version == 0 {
			t.Errorf("price version %+v, want one", v)
		}
		if got, err := svc.PriceVersion(ctx, a.ID); err != nil || got.Version != v.Version {
			t.Errorf("PriceVersion() = %+v, %v; want %+v", got, err, v)
		}

		// A new last close (60 instead of 30) is served at once.
		c := decimal.NewFromInt(60)
		if err := marketdata.NewStore(db).SavePrices(ctx, []marketdata.Price{{AssetID: a.ID, Date: dates[bars-1], Open: c, High: c, Low: c, Close: c, Volume: 100}}); err != nil {
			t.Fatal(err)
		}
		o2, v2, err := svc.Series(ctx, a.ID, false, sma3, ohlcv.Daily)
		if err != nil || v2.Version == v.Version || !near(o2.Value[bars-1], (28+29+60)/3.0) {
			t.Errorf("after the close moved to 60: SMA(3) %v at version %d (%v); want 39 at a new version", o2.Value[bars-1], v2.Version, err)
		}

		// A 2-for-1 split on the last day halves the adjusted prices
		// before it; the prices as traded are unchanged.
		if err := marketdata.NewStore(db).SaveActions(ctx, []marketdata.Action{{AssetID: a.ID, Date: dates[bars-1], Kind: marketdata.Split, Value: decimal.NewFromInt(2)}}); err != nil {
			t.Fatal(err)
		}
		adj, _, err := svc.Bars(ctx, a.ID, true)
		if err != nil || !near(adj.Close[0], 0.5) || !near(adj.Close[bars-1], 60) {
			t.Errorf("adjusted closes %v … %v (%v), want 0.5 … 60", adj.Close[0], adj.Close[bars-1], err)
		}
		traded, _, err := svc.Bars(ctx, a.ID, false)
		if err != nil || !near(traded.Close[0], 1) {
			t.Errorf("closes as traded start at %v (%v), want 1", traded.Close[0], err)
		}
		oa, _, err := svc.Series(ctx, a.ID, true, sma3, ohlcv.Daily)
		if err != nil || !near(oa.Value[bars-1], (14+14.5+60)/3) {
			t.Errorf("adjusted SMA(3) at the last bar = %v (%v), want %v", oa.Value[bars-1], err, (14+14.5+60)/3)
		}

		if _, _, err := svc.Series(ctx, uuid.New(), false, sma3, ohlcv.Daily); !errors.Is(err, tradekit.ErrNotFound) {
			t.Errorf("an unknown asset: %v, want not found", err)
		}
	})
}

// TestServiceLatest checks the latest values of several indicators in
// several timeframes at once.
func TestServiceLatest(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		a, dates := mustAsset(t, db)
		svc := studies.New(db, studies.Config{})
		specs := []studies.Spec{{Kind: studies.SMA, Period: 20}, {Kind: studies.SMA, Period: 50}, {Kind: studies.BB, Period: 20, K: 2}}
		out, _, err := svc.Latest(ctx, a.ID, false, specs, []ohlcv.Timeframe{ohlcv.Daily, ohlcv.Weekly})
		if err != nil {
			t.Fatal(err)
		}
		if len(out) != 2 || len(out[0]) != 3 || len(out[1]) != 3 {
			t.Fatalf("Latest() is %d × %d, want 2 × 3", len(out), len(out[0]))
		}
		d := out[0]
		// SMA(20) of closes 11…30 is 20.5; 50 bars are more than there are.
		if d[0].Date != dates[bars-1] || !near(d[0].Value, 20.5) || !math.IsNaN(d[1].Value) || d[1].Spec != specs[1] {
			t.Errorf("daily SMA(20), SMA(50) = %+v, %+v; want 20.5 on %v and NaN", d[0], d[1], dates[bars-1])
		}
		// The bands are symmetric about the mean, at 2 population
		// standard deviations of 11…30: sqrt((20²−1)/12).
		sd := math.Sqrt((20*20 - 1) / 12.0)
		if !near(d[2].Value, 20.5) || !near(d[2].Upper, 20.5+2*sd) || !near(d[2].Lower, 20.5-2*sd) {
			t.Errorf("daily BB(20, 2) = %+v, want 20.5 ± %v", d[2], 2*sd)
		}
		// Six weeks of bars: too few for SMA(20) on weekly bars.
		if w := out[1][0]; w.Date != dates[bars-1] || !math.IsNaN(w.Value) {
			t.Errorf("weekly SMA(20) = %+v, want NaN dated on the last bar", w)
		}
	})
}

// TestServiceEvaluate runs custom indicators: a formula gives the same
// values as the named indicator it spells, and a bad one is refused
// naming the formula.
func TestServiceEvaluate(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		a, _ := mustAsset(t, db)
		svc := studies.New(db, studies.Config{})
		got, _, err := svc.Evaluate(ctx, studies.CustomIndicator{Name: "x", Formula: "sma(close, 3) - close"}, a.ID, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Value) != bars || !math.IsNaN(got.Value[1]) || !near(got.Value[bars-1], -1) {
			t.Errorf("sma(close, 3) - close = %v, want %d values, NaN first, -1 last", got.Value, bars)
		}
		_, _, err = svc.Evaluate(ctx, studies.CustomIndicator{Name: "x", Formula: "sma(close)"}, a.ID, false)
		wantParam(t, "a formula with an argument missing", err, "formula")
		if _, _, err := svc.Evaluate(ctx, studies.CustomIndicator{Name: "x", Formula: "close"}, uuid.New(), false); !errors.Is(err, tradekit.ErrNotFound) {
			t.Errorf("an unknown asset: %v, want not found", err)
		}
	})
}
