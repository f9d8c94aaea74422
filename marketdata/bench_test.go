package marketdata_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/marketdata"
)

// genBars returns n weekday bars from 2016-01-04 of a random walk, prices
// rounded to cents.
func genBars(rng *rand.Rand, n int) []marketdata.Price {
	out := make([]marketdata.Price, 0, n)
	d := calendar.Date{Year: 2016, Month: 1, Day: 4}
	p := 20 + 200*rng.Float64()
	for len(out) < n {
		if wd := d.Weekday(); wd != 0 && wd != 6 {
			c := p * math.Exp(0.02*rng.NormFloat64())
			o := decimal.NewFromFloat(p).Round(2)
			cl := decimal.NewFromFloat(c).Round(2)
			hi := decimal.Max(o, cl).Add(decimal.New(int64(rng.IntN(100)), -2))
			lo := decimal.Min(o, cl).Sub(decimal.New(int64(rng.IntN(10)), -2))
			out = append(out, marketdata.Price{Date: d, Open: o, High: hi, Low: lo, Close: cl, Volume: int64(rng.IntN(1e7))})
			p = c
		}
		d = d.AddDays(1)
	}
	return out
}

// BenchmarkImport imports 10 years x 500 assets of daily bars (2,520 x 500
// = 1,260,000 rows) in one transaction, as `tradekit import` does, into an
// empty database. Run it with -benchtime=1x.
func BenchmarkImport(b *testing.B) {
	const assets, days = 500, 2520
	rng := rand.New(rand.NewPCG(1, 2))
	bars := make([][]marketdata.Price, assets)
	for i := range bars {
		bars[i] = genBars(rng, days)
	}
	for _, name := range []string{"sqlite", "postgres"} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				var db *bun.DB
				if name == "sqlite" {
					db = dbtest.SQLite(b)
				} else {
					db = dbtest.Postgres(b)
				}
				ctx := context.Background()
				b.StartTimer()
				err := marketdata.InConnTx(ctx, db, func(ctx context.Context, st *marketdata.Store) error {
					for a := range bars {
						_, err := marketdata.ImportPrices(ctx, st, marketdata.PriceImport{Symbol: fmt.Sprintf("B%03d", a)}, bars[a])
						if err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				var n int
				if err := db.NewRaw("SELECT COUNT(*) FROM prices").Scan(ctx, &n); err != nil || n != assets*days {
					b.Fatalf("%d rows (%v), want %d", n, err, assets*days)
				}
				b.ReportMetric(float64(n), "rows/op")
				b.StartTimer()
			}
		})
	}
}
