package server_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/server"
)

// mustPriceHistory stores an asset with ten years of NYSE sessions
// (2015-2024) of a random walk and returns it.
func mustPriceHistory(tb testing.TB, db bun.IDB) marketdata.Asset {
	tb.Helper()
	ctx := context.Background()
	st := marketdata.NewStore(db)
	a := marketdata.Asset{Symbol: "BNCH", Name: "Bench", Type: marketdata.Stock, ExchangeID: marketdata.ExchangeID("NYSE"), Currency: "USD", IsActive: true}
	if err := st.SaveAsset(ctx, &a); err != nil {
		tb.Fatal(err)
	}
	nyse, _ := calendar.Lookup("NYSE")
	days, err := nyse.Sessions(calendar.Date{Year: 2015, Month: 1, Day: 1}, calendar.Date{Year: 2024, Month: 12, Day: 31})
	if err != nil {
		tb.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	p := 100.0
	ps := make([]marketdata.Price, len(days))
	for i, d := range days {
		c := p * math.Exp(0.015*rng.NormFloat64())
		o, cl := decimal.NewFromFloat(p).Round(2), decimal.NewFromFloat(c).Round(2)
		ps[i] = marketdata.Price{AssetID: a.ID, Date: d, Open: o, Close: cl,
			High: decimal.Max(o, cl).Add(decimal.New(17, -2)), Low: decimal.Min(o, cl).Sub(decimal.New(9, -2)), Volume: int64(rng.IntN(5e7))}
		p = c
	}
	if err := st.SavePrices(ctx, ps); err != nil {
		tb.Fatal(err)
	}
	return a
}

// BenchmarkPricesYear measures GET /api/v1/market-data/prices/asset/:id
// for one year (252 records) of an asset with ten years of history,
// through the whole stack (auth, rate limit, store, JSON) on a loopback
// socket, reporting p50 and p99 latency beside ns/op.
func BenchmarkPricesYear(b *testing.B) {
	dbtest.Each(b, func(b *testing.B, db *bun.DB) {
		key, _ := benchKey(b, db)
		a := mustPriceHistory(b, db)
		h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler()
		benchLoopback(b, h, "GET", "/api/v1/market-data/prices/asset/"+a.ID.String()+"?from=2024-01-01&to=2024-12-31", key)
	})
}
