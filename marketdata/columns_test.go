package marketdata

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/marketdata/calendar"
)

// mustColumnsAsset stores an asset with n weekday bars of a random walk.
func mustColumnsAsset(tb testing.TB, db bun.IDB, n int) (uuid.UUID, []Price) {
	tb.Helper()
	ctx := context.Background()
	st := NewStore(db)
	a := Asset{Symbol: "COLS", Name: "Columns Test", Type: Stock, ExchangeID: ExchangeID("NYSE"), Currency: "USD", IsActive: true}
	if err := st.SaveAsset(ctx, &a); err != nil {
		tb.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	var ps []Price
	c := decimal.RequireFromString("100.00")
	for d := calendar.NewDate(2016, 1, 4); len(ps) < n; d = d.AddDays(1) {
		if wd := d.Weekday(); wd == 0 || wd == 6 {
			continue
		}
		o := c
		c = c.Add(decimal.New(int64(r.IntN(401)-200), -2)).Abs().Add(decimal.New(1, -2))
		ps = append(ps, Price{AssetID: a.ID, Date: d, Open: o, High: decimal.Max(o, c).Add(decimal.New(123456789, -9)),
			Low: decimal.Min(o, c).Sub(decimal.New(1, -3)), Close: c, Volume: int64(r.IntN(1e9))})
	}
	if err := st.SavePrices(ctx, ps); err != nil {
		tb.Fatal(err)
	}
	return a.ID, ps
}

func TestPriceColumns(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		st := NewStore(db)
		id, ps := mustColumnsAsset(t, db, 300)
		check := func(what string, ps []Price) {
			t.Helper()
			for round := 0; round < 2; round++ { // rebuilt, then from the stored copy
				c, err := st.PriceColumns(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				if c.Len() != len(ps) {
					t.Fatalf("%s, read %d: %d days, want %d", what, round, c.Len(), len(ps))
				}
				for i, p := range ps {
					want := [5]float64{p.Open.InexactFloat64(), p.High.InexactFloat64(), p.Low.InexactFloat64(), p.Close.InexactFloat64(), float64(p.Volume)}
					got := [5]float64{c.Open[i], c.High[i], c.Low[i], c.Close[i], c.Volume[i]}
					if c.Dates[i] != p.Date || got != want {
						t.Fatalf("%s, read %d, day %d: %v %v, want %v %v", what, round, i, c.Dates[i], got, p.Date, want)
					}
				}
			}
		}
		check("first", ps)

		// A price change makes the stored copy stale: the next read sees it.
		ps[17].Close = ps[17].Close.Add(decimal.RequireFromString("0.01"))
		if err := st.SavePrices(ctx, ps[17:18]); err != nil {
			t.Fatal(err)
		}
		check("after a change", ps)

		if _, err := st.PriceColumns(ctx, uuid.New()); !errors.Is(err, tradekit.ErrNotFound) {
			t.Errorf("unknown asset: error %v, want ErrNotFound", err)
		}
		empty := Asset{Symbol: "NONE", Name: "No Prices", Type: Stock, ExchangeID: ExchangeID("NYSE"), Currency: "USD"}
		if err := st.SaveAsset(ctx, &empty); err != nil {
			t.Fatal(err)
		}
		if c, err := st.PriceColumns(ctx, empty.ID); err != nil || c.Len() != 0 {
			t.Errorf("asset without prices: %d days, %v", c.Len(), err)
		}
	})
}

func TestColumnsEncoding(t *testing.T) {
	c := Columns{Dates: []calendar.Date{calendar.NewDate(1969, 12, 31), calendar.NewDate(2100, 12, 31)},
		Open: []float64{1.5, -2}, High: []float64{3, 4}, Low: []float64{0.1, 0.2}, Close: []float64{5, 6}, Volume: []float64{0, 1e12}}
	got, err := decodeColumns(encodeColumns(c))
	if err != nil {
		t.Fatal(err)
	}
	if got.Len() != 2 || got.Dates[0] != c.Dates[0] || got.Dates[1] != c.Dates[1] || got.Open[0] != 1.5 || got.Volume[1] != 1e12 {
		t.Errorf("round trip: %+v", got)
	}
	for _, bad := range [][]byte{nil, {2, 0, 0, 0, 0}, encodeColumns(c)[:20]} {
		if _, err := decodeColumns(bad); err == nil {
			t.Errorf("decodeColumns(%v) accepted", bad)
		}
	}
}

// BenchmarkPriceColumns reads ten years of one asset's prices as float64
// columns: from the price rows, and from the stored copy.
func BenchmarkPriceColumns(b *testing.B) {
	dbtest.Each(b, func(b *testing.B, db *bun.DB) {
		id, _ := mustColumnsAsset(b, db, 2520)
		st, ctx := NewStore(db), context.Background()
		b.Run("rows", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := st.readColumns(ctx, id); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("stored-copy", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := st.PriceColumns(ctx, id); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}
