package client_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/billing"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/client"
	"github.com/tradekit/tradekit/internal/database"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/server"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// seed stores a user on the pro plan with an API key, and the asset ACME
// with 300 weekdays of prices from 2025-01-06. It returns the key and the
// asset's id.
func seed(ctx context.Context, db bun.IDB) (key string, asset uuid.UUID, err error) {
	bs := billing.NewStore(db)
	plan, err := bs.Plan(ctx, "pro")
	if err != nil {
		return "", uuid.Nil, err
	}
	u := billing.User{Email: "client@example.com", Name: "Client", PlanID: plan.ID}
	if err := bs.CreateUser(ctx, &u, time.Now()); err != nil {
		return "", uuid.Nil, err
	}
	if _, key, err = bs.CreateKey(ctx, u.ID, "client tests", time.Now()); err != nil {
		return "", uuid.Nil, err
	}
	ms := marketdata.NewStore(db)
	a := marketdata.Asset{Symbol: "ACME", Name: "Acme Corp", Type: marketdata.Stock,
		ExchangeID: marketdata.ExchangeID("NYSE"), Currency: "USD", IsActive: true}
	if err := ms.SaveAsset(ctx, &a); err != nil {
		return "", uuid.Nil, err
	}
	var ps []marketdata.Price
	for d, i := calendar.NewDate(2025, 1, 6), 0; len(ps) < 300; d, i = d.AddDays(1), i+1 {
		if wd := d.Weekday(); wd == time.Saturday || wd == time.Sunday {
			continue
		}
		c := decimal.NewFromFloat(100 + 10*math.Sin(float64(i)/9)).Round(2)
		ps = append(ps, marketdata.Price{AssetID: a.ID, Date: d, Open: c, High: c.Add(decimal.NewFromInt(1)),
			Low: c.Sub(decimal.NewFromInt(1)), Close: c, Volume: 1000})
	}
	return key, a.ID, ms.SavePrices(ctx, ps)
}

// startServer serves a Tradekit server on db over a loopback socket, seeded
// by seed, until the test ends.
func startServer(t *testing.T, db *bun.DB) (url, key string, asset uuid.UUID) {
	t.Helper()
	key, asset, err := seed(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(server.New(server.Config{Logger: slog.New(slog.DiscardHandler)}, db).Handler())
	t.Cleanup(srv.Close)
	return srv.URL, key, asset
}

// TestClient runs the client against a real server on both databases:
// typed results, errors as *client.Error, a custom indicator's lifecycle.
func TestClient(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		url, key, asset := startServer(t, db)
		c, err := client.New(url, key, client.Options{})
		if err != nil {
			t.Fatal(err)
		}

		a, err := client.Check(c.GetAssetBySymbolWithResponse(ctx, "acme"))
		if err != nil || a.JSON200.Data.Name != "Acme Corp" || a.JSON200.Data.Id != asset {
			t.Fatalf("asset by symbol: %+v, %v", a, err)
		}
		params := `{"period":14}`
		from := client.From{Time: time.Date(2025, 6, 2, 0, 0, 0, 0, time.UTC)}
		rsi, err := client.Check(c.GetIndicatorSeriesWithResponse(ctx, asset,
			&client.GetIndicatorSeriesParams{Indicator: client.RSI, Params: &params, From: &from}))
		if err != nil {
			t.Fatal(err)
		}
		pts := rsi.JSON200.Data
		if len(pts) < 100 || !pts[0].Date.After(pts[len(pts)-1].Date.Time) || pts[len(pts)-1].Date.Before(from.Time) {
			t.Errorf("RSI from %s: %d points, %v … %v", from, len(pts), pts[0].Date, pts[len(pts)-1].Date)
		}

		// A custom indicator, evaluated, renamed and deleted.
		ci, err := client.Check(c.CreateCustomIndicatorWithResponse(ctx, &client.CreateCustomIndicatorParams{
			Name: "range", Formula: "high - low"}))
		if err != nil {
			t.Fatal(err)
		}
		id := ci.JSON200.Data.Id
		ev, err := client.Check(c.EvaluateCustomIndicatorWithResponse(ctx, id, &client.EvaluateCustomIndicatorParams{AssetId: asset}))
		if err != nil || len(ev.JSON200.Data.Values) != 300 || ev.JSON200.Data.Values[0].Value != 2 {
			t.Fatalf("evaluate: %+v, %v", ev, err)
		}
		if _, err := client.Check(c.DeleteCustomIndicatorWithResponse(ctx, id)); err != nil {
			t.Fatal(err)
		}

		// A backtest, kept under its strategy hash: the days are the NYSE
		// sessions, fewer than the fixture's weekday bars.
		symbols := "acme"
		bt, err := client.Check(c.RunBacktestWithResponse(ctx, &client.RunBacktestParams{
			Entry: "close > sma(close, 20)", Exit: "close < sma(close, 20)", Symbols: &symbols}))
		if err != nil {
			t.Fatal(err)
		}
		run := bt.JSON200.Data
		if len(run.StrategyHash) != 64 || run.Stats.Trades != len(run.Trades) || len(run.Equity) < 250 || run.Stats.TotalReturn == nil {
			t.Errorf("backtest: hash %q, %d trades listed %d, %d days, total return %v", run.StrategyHash, run.Stats.Trades,
				len(run.Trades), len(run.Equity), run.Stats.TotalReturn)
		}
		if got, err := client.Check(c.GetBacktestWithResponse(ctx, run.StrategyHash)); err != nil || got.JSON200.Data.Id != run.Id {
			t.Errorf("the stored backtest: %+v, %v", got, err)
		}

		// The paginated lists, empty here, through their iterators.
		n := 0
		for _, err := range c.Leaders(ctx, client.ListLeadersParams{}) {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		for _, err := range c.Orders(ctx, client.ListOrdersParams{}) {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		for _, err := range c.Notifications(ctx, client.ListNotificationsParams{}) {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		if n != 0 {
			t.Errorf("%d leaders, orders and notifications on a fresh server", n)
		}

		// Errors are values with the API's code, message and details.
		_, err = client.Check(c.GetAssetWithResponse(ctx, uuid.New()))
		var e *client.Error
		if !errors.As(err, &e) || e.Status != 404 || e.Code != "NOT_FOUND" || e.RequestID == "" {
			t.Errorf("unknown asset: %v (%#v)", err, e)
		}
		_, err = client.Check(c.CreateCustomIndicatorWithResponse(ctx, &client.CreateCustomIndicatorParams{Name: "bad", Formula: "sma(close)"}))
		if !errors.As(err, &e) || e.Code != "VALIDATION_ERROR" || fmt.Sprint(e.Details["fields"]) != "[formula]" {
			t.Errorf("bad formula: %v (%#v)", err, e)
		}
		anon, _ := client.New(url, "tk_live_not-a-key", client.Options{})
		_, err = client.Check(anon.ListAssetsWithResponse(ctx, nil))
		if !errors.As(err, &e) || e.Status != 401 || e.Code != "UNAUTHORIZED" {
			t.Errorf("bad key: %v", err)
		}
	})
}

// exampleServer starts a Tradekit server on a fresh SQLite database seeded
// by seed, for the examples. stop shuts it down and removes the database.
func exampleServer() (url, key string, stop func()) {
	dir, err := os.MkdirTemp("", "tradekit-example")
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	db, err := database.Open(ctx, "sqlite:"+filepath.Join(dir, "example.db"), database.Options{})
	if err != nil {
		panic(err)
	}
	if _, err := database.Migrate(ctx, db); err != nil {
		panic(err)
	}
	key, _, err = seed(ctx, db)
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(server.New(server.Config{Logger: slog.New(slog.DiscardHandler)}, db).Handler())
	return srv.URL, key, func() { srv.Close(); db.Close(); os.RemoveAll(dir) }
}

func ExampleNew() {
	baseURL, key, stop := exampleServer() // a real server with the asset ACME
	defer stop()

	ctx := context.Background()
	c, err := client.New(baseURL, key, client.Options{})
	if err != nil {
		panic(err)
	}
	a, err := client.Check(c.GetAssetBySymbolWithResponse(ctx, "ACME"))
	if err != nil {
		panic(err)
	}
	fmt.Println(a.JSON200.Data.Symbol, a.JSON200.Data.Name, a.JSON200.Data.Type)

	params := `{"period":14}`
	rsi, err := client.Check(c.GetIndicatorSeriesWithResponse(ctx, a.JSON200.Data.Id,
		&client.GetIndicatorSeriesParams{Indicator: client.RSI, Params: &params}))
	if err != nil {
		panic(err)
	}
	latest := rsi.JSON200.Data[0] // newest first
	fmt.Printf("RSI(14) on %s: %.2f\n", latest.Date, latest.Value)

	_, err = client.Check(c.GetAssetBySymbolWithResponse(ctx, "NOPE"))
	var e *client.Error
	if errors.As(err, &e) {
		fmt.Println(e.Status, e.Code)
	}
	// Output:
	// ACME Acme Corp stock
	// RSI(14) on 2026-02-27: 63.42
	// 404 NOT_FOUND
}
