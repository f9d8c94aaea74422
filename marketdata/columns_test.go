package marketdata

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/ohlcv"
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
	t.Parallel()
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
				mustEqualColumns(t, c, PriceSeries(ps))
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

// TestPriceColumnsOldFormat writes a copy in format 1 (raw int32 days and
// float64 bits) by hand: PriceColumns must not take it, but rebuild the
// columns from the prices and store them again in the current format.
func TestPriceColumnsOldFormat(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		st := NewStore(db)
		id, ps := mustColumnsAsset(t, db, 300)
		want, err := readColumns(ctx, st, id)
		if err != nil {
			t.Fatal(err)
		}
		var version int64
		if err := db.NewRaw("SELECT prices_version FROM assets WHERE id = ?", id).Scan(ctx, &version); err != nil {
			t.Fatal(err)
		}
		old := encodeColumnsV1(want)
		for i := 0; i*columnsChunk < len(old); i++ {
			_, err := db.ExecContext(ctx, "INSERT INTO price_columns (asset_id, chunk, version, data) VALUES (?, ?, ?, ?)",
				id, i, version, old[i*columnsChunk:min((i+1)*columnsChunk, len(old))])
			if err != nil {
				t.Fatal(err)
			}
		}
		if got := mustStoredColumns(t, db, id); got[0] != 1 || len(got) != len(old) {
			t.Fatalf("format 1 copy not in place: %d bytes, format %d", len(got), got[0])
		}

		got, err := st.PriceColumns(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		mustEqualColumns(t, got, want)
		if got.Len() != len(ps) {
			t.Fatalf("%d days, want %d", got.Len(), len(ps))
		}

		stored := mustStoredColumns(t, db, id)
		if stored[0] != columnsFormat {
			t.Fatalf("stored copy after the read has format %d, want %d", stored[0], columnsFormat)
		}
		dec, err := decodeColumns(stored)
		if err != nil {
			t.Fatalf("stored copy after the read: %v", err)
		}
		mustEqualColumns(t, dec, want)
		if len(stored) >= len(old)/2 {
			t.Errorf("stored copy is %d bytes, format 1 was %d", len(stored), len(old))
		}
	})
}

// mustStoredColumns returns the asset's stored copy, its chunks joined.
func mustStoredColumns(tb testing.TB, db bun.IDB, id uuid.UUID) []byte {
	tb.Helper()
	var chunks [][]byte
	err := db.NewRaw("SELECT data FROM price_columns WHERE asset_id = ? ORDER BY chunk", id).Scan(context.Background(), &chunks)
	if err != nil {
		tb.Fatal(err)
	}
	var b []byte
	for i, c := range chunks {
		if i < len(chunks)-1 && len(c) != columnsChunk {
			tb.Fatalf("chunk %d of %d is %d bytes", i, len(chunks), len(c))
		}
		b = append(b, c...)
	}
	if len(b) == 0 {
		tb.Fatal("no stored copy")
	}
	return b
}

// encodeColumnsV1 is format 1, as encodeColumns wrote it before format 2:
// the format byte 1, n as a uint32, n int32 days since 1970-01-01, then
// the five columns as n float64 bits each; little endian.
func encodeColumnsV1(c ohlcv.Series) []byte {
	b := binary.LittleEndian.AppendUint32([]byte{1}, uint32(c.Len()))
	for _, d := range c.Dates {
		b = binary.LittleEndian.AppendUint32(b, uint32(int32(d.Sub(epoch))))
	}
	for _, col := range [][]float64{c.Open, c.High, c.Low, c.Close, c.Volume} {
		for _, x := range col {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
		}
	}
	return b
}

// mustEqualColumns fails unless got and want have the same dates and the
// same float64 bits in every column.
func mustEqualColumns(tb testing.TB, got, want ohlcv.Series) {
	tb.Helper()
	if got.Len() != want.Len() {
		tb.Fatalf("%d days, want %d", got.Len(), want.Len())
	}
	gc := [][]float64{got.Open, got.High, got.Low, got.Close, got.Volume}
	wc := [][]float64{want.Open, want.High, want.Low, want.Close, want.Volume}
	for j := range gc {
		if len(gc[j]) != want.Len() {
			tb.Fatalf("column %d has %d values, want %d", j, len(gc[j]), want.Len())
		}
	}
	for i := range want.Dates {
		if got.Dates[i] != want.Dates[i] {
			tb.Fatalf("day %d: date %v, want %v", i, got.Dates[i], want.Dates[i])
		}
		for j := range wc {
			if g, w := gc[j][i], wc[j][i]; math.Float64bits(g) != math.Float64bits(w) {
				tb.Fatalf("day %d, column %d: %v (%#x), want %v (%#x)", i, j, g, math.Float64bits(g), w, math.Float64bits(w))
			}
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
				if _, err := readColumns(ctx, st, id); err != nil {
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

// TestStoreClock checks that a price write stamps the asset's prices with
// the store's clock.
func TestStoreClock(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		id, ps := mustColumnsAsset(t, db, 3)
		at := time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)
		st := NewStore(db).WithClock(func() time.Time { return at })
		ps[0].Close = ps[0].Close.Add(decimal.New(1, -2)) // a change, so a new version
		if err := st.SavePrices(ctx, ps[:1]); err != nil {
			t.Fatal(err)
		}
		v, err := st.PriceVersion(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if !v.UpdatedAt.Equal(at) {
			t.Errorf("prices updated at %s, want the store's clock's %s", v.UpdatedAt, at)
		}
	})
}

// readColumns reads every price record of the asset as columns, as
// PriceColumns does when it rebuilds a copy.
func readColumns(ctx context.Context, st *Store, id uuid.UUID) (ohlcv.Series, error) {
	got, err := st.recordColumns(ctx, []uuid.UUID{id}, calendar.Date{})
	return got[id], err
}
