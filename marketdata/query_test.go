package marketdata_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/marketdata"
)

// TestAssetReadsForOtherPackages checks the reads other packages use
// instead of naming the assets and prices tables: AssetsOf and
// LastPriceDate, and the pieces JoinAsset, AssetJSONBySymbol and
// AssetVersionsOf run inside a statement of the caller's.
func TestAssetReadsForOtherPackages(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		st := marketdata.NewStore(db)
		if _, ok, err := st.LastPriceDate(ctx); ok || err != nil {
			t.Errorf("LastPriceDate with no prices = _, %t, %v; want false, nil", ok, err)
		}
		a, b := mustAsset(t, st, "QA"), mustAsset(t, st, "QB")
		err := st.SavePrices(ctx, []marketdata.Price{
			{AssetID: a.ID, Date: date("2024-01-02"), Open: dec("1"), High: dec("2"), Low: dec("1"), Close: dec("2"), Volume: 10},
			{AssetID: a.ID, Date: date("2024-01-03"), Open: dec("2"), High: dec("3"), Low: dec("2"), Close: dec("3"), Volume: 10},
		})
		if err != nil {
			t.Fatal(err)
		}
		va, err := st.PriceVersion(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if va.Version == 0 {
			t.Fatal("saving prices left the version at 0")
		}
		if d, ok, err := st.LastPriceDate(ctx); !ok || err != nil || d != date("2024-01-03") {
			t.Errorf("LastPriceDate = %v, %t, %v; want 2024-01-03, true, nil", d, ok, err)
		}

		unknown := uuid.New()
		got, err := st.AssetsOf(ctx, []uuid.UUID{a.ID, unknown, b.ID})
		if err != nil {
			t.Fatal(err)
		}
		want := map[uuid.UUID]marketdata.VersionedAsset{a.ID: {Asset: a, PricesVersion: va.Version}, b.ID: {Asset: b}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("AssetsOf (-want +got):\n%s", diff)
		}
		if got, err := st.AssetsOf(ctx, nil); err != nil || len(got) != 0 {
			t.Errorf("AssetsOf(nil) = %v, %v; want none", got, err)
		}

		// JoinAsset: the asset and its version, or NULLs.
		type joined struct {
			Asset   marketdata.Asset `bun:"embed:x_"`
			Version *int64           `bun:"x_prices_version"`
		}
		for _, tt := range []struct {
			id      uuid.UUID
			want    marketdata.Asset
			version *int64
		}{{a.ID, a, &va.Version}, {unknown, marketdata.Asset{}, nil}} {
			var j joined
			err := db.NewSelect().TableExpr("(SELECT 1 AS one) AS base").Apply(marketdata.JoinAsset("x", tt.id)).Scan(ctx, &j)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(joined{tt.want, tt.version}, j); diff != "" {
				t.Errorf("JoinAsset of %s (-want +got):\n%s", tt.id, diff)
			}
		}

		// AssetJSONBySymbol: the object, or NULL.
		var doc *string
		if err := db.NewRaw("SELECT "+marketdata.AssetJSONBySymbol(db.Dialect().Name()), "QA").Scan(ctx, &doc); err != nil {
			t.Fatal(err)
		}
		var obj struct {
			ID            uuid.UUID            `json:"id"`
			Type          marketdata.AssetType `json:"type"`
			PricesVersion int64                `json:"prices_version"`
		}
		if doc == nil {
			t.Fatal("AssetJSONBySymbol(QA) is NULL")
		}
		if err := json.Unmarshal([]byte(*doc), &obj); err != nil || obj.ID != a.ID || obj.Type != a.Type || obj.PricesVersion != va.Version {
			t.Errorf("AssetJSONBySymbol(QA) = %s (%v); want id %s, type %s, version %d", *doc, err, a.ID, a.Type, va.Version)
		}
		doc = nil
		if err := db.NewRaw("SELECT "+marketdata.AssetJSONBySymbol(db.Dialect().Name()), "NONE").Scan(ctx, &doc); err != nil || doc != nil {
			t.Errorf("AssetJSONBySymbol(NONE) = %v, %v; want NULL", doc, err)
		}

		// AssetVersionsOf: the versions of the ids a CTE gives; unknown
		// ids drop out.
		var rows []struct {
			ID      uuid.UUID `bun:"id"`
			Version int64     `bun:"prices_version"`
		}
		id := "?"
		if db.Dialect().Name() == dialect.PG {
			id = "CAST(? AS uuid)"
		}
		err = db.NewRaw("WITH ids(id) AS (SELECT "+id+" UNION ALL SELECT "+id+" UNION ALL SELECT "+id+") "+
			marketdata.AssetVersionsOf("ids", "ids.id")+" ORDER BY assets.symbol", a.ID, b.ID, unknown).Scan(ctx, &rows)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 2 || rows[0].ID != a.ID || rows[0].Version != va.Version || rows[1].ID != b.ID || rows[1].Version != 0 {
			t.Errorf("AssetVersionsOf = %+v; want QA at %d, QB at 0", rows, va.Version)
		}
	})
}
