package marketdata

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/internal/dbtest"
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
