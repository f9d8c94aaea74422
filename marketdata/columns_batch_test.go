package marketdata

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/ohlcv"
)

// TestPriceColumnsOf reads several assets at once, with a stale copy, a
// fresh one, none, no prices and no asset: each as PriceColumns reads it,
// with the asset's price version.
func TestPriceColumnsOf(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		st := NewStore(db)
		stale, ps := mustColumnsAsset(t, db, 300)
		if _, err := st.PriceColumns(ctx, stale); err != nil { // stores a copy
			t.Fatal(err)
		}
		ps[17].Close = ps[17].Close.Add(decimal.RequireFromString("0.01"))
		if err := st.SavePrices(ctx, ps[17:18]); err != nil {
			t.Fatal(err)
		}
		fresh := Asset{Symbol: "FRSH", Name: "Fresh", Type: Stock, ExchangeID: ExchangeID("NYSE"), Currency: "USD"}
		empty := Asset{Symbol: "NONE", Name: "No Prices", Type: Stock, ExchangeID: ExchangeID("NYSE"), Currency: "USD"}
		for _, a := range []*Asset{&fresh, &empty} {
			if err := st.SaveAsset(ctx, a); err != nil {
				t.Fatal(err)
			}
		}
		var fps []Price
		for _, p := range ps[:40] {
			p.AssetID = fresh.ID
			fps = append(fps, p)
		}
		if err := st.SavePrices(ctx, fps); err != nil {
			t.Fatal(err)
		}
		if _, err := st.PriceColumns(ctx, fresh.ID); err != nil {
			t.Fatal(err)
		}
		unknown := uuid.New()
		got, err := st.PriceColumnsOf(ctx, []uuid.UUID{stale, fresh.ID, empty.ID, unknown})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := got[unknown]; ok || len(got) != 3 {
			t.Errorf("PriceColumnsOf gave %d assets, an unknown one %v; want 3, no", len(got), ok)
		}
		for _, id := range []uuid.UUID{stale, fresh.ID, empty.ID} {
			v, err := st.PriceVersion(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			want, err := st.PriceColumns(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if got[id].Version != v.Version {
				t.Errorf("%s: version %d, want %d", id, got[id].Version, v.Version)
			}
			mustEqualColumns(t, got[id].Bars, want)
		}
		mustEqualColumns(t, got[stale].Bars, PriceSeries(ps))
		if n, err := st.PriceColumnsOf(ctx, nil); err != nil || len(n) != 0 {
			t.Errorf("no assets: %v, %v", n, err)
		}
	})
}

// TestPriceColumnsOfCatchUp brings a stale copy up to date from the
// records written since it was stored: after appended days, after a
// revised old day, and across several imports; it rebuilds the copy
// whole when what changed is not recorded (corporate actions, a copy
// from before prices_changed_from). Each read equals the columns of
// every record.
func TestPriceColumnsOfCatchUp(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		st := NewStore(db)
		id, ps := mustColumnsAsset(t, db, 300)
		if _, err := st.PriceColumns(ctx, id); err != nil { // stores a copy
			t.Fatal(err)
		}
		if from := mustChangedFrom(t, db, id); from != "" {
			t.Fatalf("prices_changed_from %q after storing a copy, want NULL", from)
		}
		day := ps[len(ps)-1].Date
		next := func() Price { // a bar on the next day, as a day's import writes
			last := ps[len(ps)-1]
			day = day.AddDays(1)
			p := last
			p.Date, p.Open, p.Close = day, last.Close, last.Close.Add(decimal.RequireFromString("0.37"))
			ps = append(ps, p)
			return p
		}
		check := func(what string, wantFrom string) {
			t.Helper()
			if from := mustChangedFrom(t, db, id); from != wantFrom {
				t.Errorf("%s: prices_changed_from %q, want %q", what, from, wantFrom)
			}
			got, err := st.PriceColumnsOf(ctx, []uuid.UUID{id})
			if err != nil {
				t.Fatal(err)
			}
			v, err := st.PriceVersion(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if got[id].Version != v.Version {
				t.Errorf("%s: version %d, want %d", what, got[id].Version, v.Version)
			}
			want, err := readColumns(ctx, st, id)
			if err != nil {
				t.Fatal(err)
			}
			mustEqualColumns(t, got[id].Bars, want)
		}

		// Two days' imports: the copy is caught up from the first new day.
		first := next()
		for _, p := range []Price{first, next()} {
			if err := st.SavePrices(ctx, []Price{p}); err != nil {
				t.Fatal(err)
			}
		}
		check("two appended days", first.Date.String())

		// A revised old day lowers the date to catch up from.
		ps[17].Close = ps[17].Close.Add(decimal.RequireFromString("0.01"))
		if err := st.SavePrices(ctx, []Price{ps[17], next()}); err != nil {
			t.Fatal(err)
		}
		check("a revised day", ps[17].Date.String())

		// The copy's bars before that date are kept, not read again: a
		// record changed behind the store's back (no version, no date)
		// stays unseen until the copy is rebuilt.
		if _, err := db.ExecContext(ctx, "UPDATE prices SET volume = volume + 1 WHERE asset_id = ? AND date = ?", id, SQLDate(ps[3].Date)); err != nil {
			t.Fatal(err)
		}
		got, err := st.PriceColumnsOf(ctx, []uuid.UUID{id})
		if err != nil {
			t.Fatal(err)
		}
		if v := got[id].Bars.Volume[3]; v != float64(ps[3].Volume) {
			t.Errorf("day 3 read again from the records: volume %v, want the copy's %d", v, ps[3].Volume)
		}

		// Storing a copy at the current version clears the date.
		if _, err := st.PriceColumns(ctx, id); err != nil {
			t.Fatal(err)
		}
		if from := mustChangedFrom(t, db, id); from != "" {
			t.Errorf("prices_changed_from %q after PriceColumns, want NULL", from)
		}
		mustEqualColumns(t, mustColumns(t, st, id), PriceSeries(ps))

		// Corporate actions bump the version without a date: the copy is
		// rebuilt whole, and sees the changes made behind its back.
		if _, err := db.ExecContext(ctx, "UPDATE prices SET volume = volume + 1 WHERE asset_id = ? AND date = ?", id, SQLDate(ps[5].Date)); err != nil {
			t.Fatal(err)
		}
		ps[3].Volume++
		ps[5].Volume++
		if err := st.SaveActions(ctx, []Action{{AssetID: id, Date: ps[100].Date, Kind: Split, Value: decimal.NewFromInt(2)}}); err != nil {
			t.Fatal(err)
		}
		check("a corporate action", "")
		mustEqualColumns(t, mustColumns(t, st, id), PriceSeries(ps))

		// A catch-up past refreshAfter records stores the copy.
		if err := st.SavePrices(ctx, ps[len(ps)-60:]); err != nil { // unchanged: no new version
			t.Fatal(err)
		}
		var batch []Price
		for range refreshAfter(id) {
			batch = append(batch, next())
		}
		if err := st.SavePrices(ctx, batch); err != nil {
			t.Fatal(err)
		}
		check("many new days", batch[0].Date.String())
		if from := mustChangedFrom(t, db, id); from != "" {
			t.Errorf("prices_changed_from %q after a long catch-up, want NULL: the copy stored", from)
		}
	})
}

// mustChangedFrom returns the asset's prices_changed_from, "" for NULL.
func mustChangedFrom(tb testing.TB, db bun.IDB, id uuid.UUID) string {
	tb.Helper()
	var d SQLDate
	if err := db.NewRaw("SELECT prices_changed_from FROM assets WHERE id = ?", id).Scan(context.Background(), &d); err != nil {
		tb.Fatal(err)
	}
	if (d == SQLDate{}) {
		return ""
	}
	return calendar.Date(d).String()
}

// mustColumns returns PriceColumns of the asset.
func mustColumns(tb testing.TB, st *Store, id uuid.UUID) ohlcv.Series {
	tb.Helper()
	c, err := st.PriceColumns(context.Background(), id)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// TestPriceTailsOf reads the latest bars of several assets at once: of
// one with more bars than asked, one with fewer, one with none and one
// that does not exist; each tail is the end of the asset's whole
// columns, with its version. Back-adjusted (AdjustedColumnsOf), a tail
// with a split and a dividend after its start, and one before it, is the
// end of the adjusted history.
func TestPriceTailsOf(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		st := NewStore(db)
		long, ps := mustColumnsAsset(t, db, 300)
		short := Asset{Symbol: "SHRT", Name: "Short", Type: Stock, ExchangeID: ExchangeID("NYSE"), Currency: "USD"}
		empty := Asset{Symbol: "NONE", Name: "No Prices", Type: Stock, ExchangeID: ExchangeID("NYSE"), Currency: "USD"}
		for _, a := range []*Asset{&short, &empty} {
			if err := st.SaveAsset(ctx, a); err != nil {
				t.Fatal(err)
			}
		}
		var sps []Price
		for _, p := range ps[:30] {
			p.AssetID = short.ID
			sps = append(sps, p)
		}
		if err := st.SavePrices(ctx, sps); err != nil {
			t.Fatal(err)
		}
		const bars = 55
		got, err := st.PriceTailsOf(ctx, []uuid.UUID{long, short.ID, empty.ID, uuid.New()}, bars)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 {
			t.Errorf("PriceTailsOf gave %d assets, want 3 (not the unknown one)", len(got))
		}
		for _, id := range []uuid.UUID{long, short.ID, empty.ID} {
			v, err := st.PriceVersion(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			whole := mustColumns(t, st, id)
			if got[id].Version != v.Version {
				t.Errorf("%s: version %d, want %d", id, got[id].Version, v.Version)
			}
			mustEqualColumns(t, got[id].Bars, whole.Slice(max(0, whole.Len()-bars), whole.Len()))
		}
		if _, err := st.PriceTailsOf(ctx, []uuid.UUID{long}, 0); err == nil {
			t.Error("a tail of 0 bars gave no error")
		}

		acts := []Action{
			{AssetID: long, Date: ps[100].Date, Kind: Split, Value: decimal.NewFromInt(2)},
			{AssetID: long, Date: ps[260].Date, Kind: Dividend, Value: decimal.RequireFromString("0.37")},
			{AssetID: long, Date: ps[280].Date, Kind: Split, Value: decimal.RequireFromString("0.5")},
		}
		if err := st.SaveActions(ctx, acts); err != nil {
			t.Fatal(err)
		}
		tails, err := st.PriceTailsOf(ctx, []uuid.UUID{long}, bars)
		if err != nil {
			t.Fatal(err)
		}
		adjTail, err := st.AdjustedColumnsOf(ctx, tails)
		if err != nil {
			t.Fatal(err)
		}
		adjWhole, err := st.AdjustedPriceColumns(ctx, long)
		if err != nil {
			t.Fatal(err)
		}
		mustEqualColumns(t, adjTail[long].Bars, adjWhole.Slice(adjWhole.Len()-bars, adjWhole.Len()))
		mustEqualColumns(t, tails[long].Bars, PriceSeries(ps[len(ps)-bars:]))
	})
}
