package profiledb_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/ohlcv"
	"github.com/tradekit/tradekit/profiles"
	"github.com/tradekit/tradekit/profiles/profiledb"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// bars is a generated daily history as the engine takes it and as the
// market-data store keeps it.
type bars struct {
	series profiles.Asset
	prices []marketdata.Price
}

// genBars returns n weekday bars from 2016-01-04 of an asset following a
// one-factor model (r = beta*market + noise) over the market returns mkt
// (len(mkt) >= n), with prices rounded to cents.
func genBars(id uuid.UUID, n int, mkt []float64, beta float64, seed uint64) bars {
	rng := newRand(seed)
	var b bars
	b.series.ID = id.String()
	c := 50 + 50*rng.Float64()
	d := calendar.NewDate(2016, 1, 4)
	for len(b.series.Bars.Dates) < n {
		if wd := d.Weekday(); wd == time.Saturday || wd == time.Sunday {
			d = d.AddDays(1)
			continue
		}
		o := c
		c = math.Max(0.01, math.Round(c*math.Exp(beta*mkt[len(b.series.Bars.Dates)]+0.01*rng.NormFloat64())*100)/100)
		h := math.Round(math.Max(o, c)*(1+0.005*rng.Float64())*100) / 100
		l := math.Max(0.01, math.Round(math.Min(o, c)*(1-0.005*rng.Float64())*100)/100)
		b.series.Bars.Dates = append(b.series.Bars.Dates, d)
		b.series.Bars.High, b.series.Bars.Low, b.series.Bars.Close = append(b.series.Bars.High, h), append(b.series.Bars.Low, l), append(b.series.Bars.Close, c)
		b.prices = append(b.prices, marketdata.Price{AssetID: id, Date: d, Open: decimal.NewFromFloat(o),
			High: decimal.NewFromFloat(h), Low: decimal.NewFromFloat(l), Close: decimal.NewFromFloat(c), Volume: 1000})
		d = d.AddDays(1)
	}
	return b
}

// mustAsset stores an asset named symbol (on NYSE) with the bars.
func mustAsset(tb testing.TB, db bun.IDB, symbol string, b bars) marketdata.Asset {
	tb.Helper()
	ctx := context.Background()
	st := marketdata.NewStore(db)
	a := marketdata.Asset{ID: marketdata.AssetID(symbol), Symbol: symbol, Name: symbol + " Inc", Type: marketdata.Stock,
		ExchangeID: marketdata.ExchangeID("NYSE"), Currency: "USD", IsActive: true}
	if err := st.SaveAsset(ctx, &a); err != nil {
		tb.Fatal(err)
	}
	if len(b.prices) > 0 {
		if err := st.SavePrices(ctx, b.prices); err != nil {
			tb.Fatal(err)
		}
	}
	return a
}

func TestStoreRoundTrip(t *testing.T) {
	t.Parallel()
	mkt := marketReturns(400, 1)
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		st := profiledb.NewStore(db)
		a := mustAsset(t, db, "AAA", genBars(marketdata.AssetID("AAA"), 400, mkt, 1, 11))
		peerBars := genBars(marketdata.AssetID("BBB"), 400, mkt, 0.8, 12)
		b := mustAsset(t, db, "BBB", peerBars)
		c := mustAsset(t, db, "CCC", bars{}) // no prices, no profile

		own := genBars(a.ID, 400, mkt, 1, 11)
		p, err := profiles.Compute(own.series, []profiles.Asset{{ID: b.ID.String(), Symbol: "BBB",
			Bars: ohlcv.Series{Dates: peerBars.series.Bars.Dates, Close: peerBars.series.Bars.Close}}}, profiles.Config{})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Correlations) != 1 {
			t.Fatalf("fixture: want one correlation, got %v", p.Correlations)
		}
		at := time.Date(2026, 11, 22, 9, 30, 15, 123e6, time.UTC)
		rec, err := profiledb.NewRecord(a.ID, 7, p, at)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(p)
		if string(rec.JSON) != string(want) {
			t.Fatal("NewRecord's JSON is not json.Marshal of the profile")
		}
		if err := st.Save(ctx, []profiledb.Record{rec}); err != nil {
			t.Fatal(err)
		}

		got, err := st.Profile(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if string(got.JSON) != string(want) {
			t.Errorf("stored JSON differs from what was saved:\n got %s\nwant %s", got.JSON, want)
		}
		wantRec := rec
		wantRec.Symbol = "AAA"
		if diff := cmp.Diff(wantRec, got); diff != "" {
			t.Errorf("Profile() mismatch (-want +got):\n%s", diff)
		}
		back, err := got.Profile()
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(p, back); diff != "" {
			t.Errorf("decoded profile mismatch (-want +got):\n%s", diff)
		}

		// Not found: an asset without a profile, and no asset at all.
		for _, id := range []uuid.UUID{c.ID, uuid.New()} {
			if _, err := st.Profile(ctx, id); !errors.Is(err, tradekit.ErrNotFound) {
				t.Errorf("Profile(%s) error = %v, want ErrNotFound", id, err)
			}
		}

		// An older version never replaces a newer one; a newer one does.
		old, _ := profiledb.NewRecord(a.ID, 6, profiles.Profile{AsOf: calendar.NewDate(2026, 1, 2)}, at.Add(time.Hour))
		if err := st.Save(ctx, []profiledb.Record{old}); err != nil {
			t.Fatal(err)
		}
		if got, _ := st.Profile(ctx, a.ID); got.PriceVersion != 7 || string(got.JSON) != string(want) {
			t.Errorf("a record of version 6 replaced version 7: %d %.60s", got.PriceVersion, got.JSON)
		}
		newer, _ := profiledb.NewRecord(a.ID, 8, profiles.Profile{AsOf: calendar.NewDate(2026, 1, 2)}, at.Add(time.Hour))
		bRec, _ := profiledb.NewRecord(b.ID, 3, profiles.Profile{AsOf: calendar.NewDate(2026, 1, 2)}, at)
		if err := st.Save(ctx, []profiledb.Record{newer, bRec}); err != nil {
			t.Fatal(err)
		}
		if got, _ := st.Profile(ctx, a.ID); got.PriceVersion != 8 || !got.UpdatedAt.Equal(at.Add(time.Hour)) {
			t.Errorf("version 8 did not replace version 7: %d %s", got.PriceVersion, got.UpdatedAt)
		}

		// Profiles: request order, duplicates once, unknown and unbuilt left out.
		many, err := st.Profiles(ctx, []uuid.UUID{b.ID, uuid.New(), c.ID, a.ID, b.ID})
		if err != nil {
			t.Fatal(err)
		}
		var syms []string
		for _, r := range many {
			syms = append(syms, r.Symbol)
		}
		if diff := cmp.Diff([]string{"BBB", "AAA"}, syms); diff != "" {
			t.Errorf("Profiles() symbols (-want +got):\n%s", diff)
		}
		vs, err := st.Versions(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(map[uuid.UUID]int64{a.ID: 8, b.ID: 3}, vs); diff != "" {
			t.Errorf("Versions() (-want +got):\n%s", diff)
		}
	})
}

// TestStoreSaveBatches saves more records than one statement holds.
func TestStoreSaveBatches(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		n := 2*profiledb.SaveBatch + 3
		var recs []profiledb.Record
		var ids []uuid.UUID
		at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		for i := range n {
			a := mustAsset(t, db, "S"+string(rune('A'+i/26))+string(rune('A'+i%26)), bars{})
			r, _ := profiledb.NewRecord(a.ID, int64(i), profiles.Profile{AsOf: calendar.NewDate(2026, 1, 2)}, at)
			recs, ids = append(recs, r), append(ids, a.ID)
		}
		if err := profiledb.NewStore(db).Save(ctx, recs); err != nil {
			t.Fatal(err)
		}
		got, err := profiledb.NewStore(db).Profiles(ctx, ids)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != n {
			t.Fatalf("%d records back, want %d", len(got), n)
		}
		for i, r := range got {
			if r.AssetID != ids[i] || r.PriceVersion != int64(i) || r.AsOf != calendar.NewDate(2026, 1, 2) {
				t.Errorf("record %d: %v %d %v", i, r.AssetID, r.PriceVersion, r.AsOf)
			}
		}
	})
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 1)) }

// marketReturns returns n daily market log returns of a geometric
// Brownian motion (drift 0.03 %, volatility 1 % a day; index 0 unused).
func marketReturns(n int, seed uint64) []float64 {
	rng := newRand(seed)
	r := make([]float64, n)
	for t := 1; t < n; t++ {
		r[t] = 0.0003 + 0.01*rng.NormFloat64()
	}
	return r
}
