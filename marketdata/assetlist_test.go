package marketdata_test

import (
	"context"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/marketdata"
)

// TestEncodedAssetsCache checks that Reads.EncodedAssets encodes the list
// once per asset list version: a second request is served from the cache,
// and saving an asset (new, or changed) makes the next request read and
// encode the list again, with the change.
func TestEncodedAssetsCache(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		st := marketdata.NewStore(db)
		r := marketdata.NewReads(marketdata.On(db))
		encodes := 0
		encode := func(as []marketdata.Asset) ([]byte, error) {
			encodes++
			var names []string
			for _, a := range as {
				names = append(names, a.Symbol+"="+a.Name)
			}
			return []byte(strings.Join(names, ",")), nil
		}
		list := func() string {
			t.Helper()
			b, _, err := r.EncodedAssets(ctx, encode)
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
		save := func(symbol, name string) {
			t.Helper()
			a := marketdata.Asset{Symbol: symbol, Name: name, Type: marketdata.Stock, ExchangeID: marketdata.ExchangeID("NYSE"), Currency: "USD", IsActive: true}
			if err := st.SaveAsset(ctx, &a); err != nil {
				t.Fatal(err)
			}
		}
		save("AAAA", "First")
		v1, err := st.AssetListVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := list(); got != "AAAA=First" || encodes != 1 {
			t.Fatalf("first list %q after %d encodings, want AAAA=First after 1", got, encodes)
		}
		if got := list(); got != "AAAA=First" || encodes != 1 {
			t.Errorf("second list %q after %d encodings, want the cached one (1 encoding)", got, encodes)
		}
		save("BBBB", "Second")
		if got := list(); got != "AAAA=First,BBBB=Second" || encodes != 2 {
			t.Errorf("list after a new asset %q after %d encodings, want both after 2", got, encodes)
		}
		save("AAAA", "Renamed")
		if got := list(); got != "AAAA=Renamed,BBBB=Second" || encodes != 3 {
			t.Errorf("list after a renamed asset %q after %d encodings, want the new name after 3", got, encodes)
		}
		if v, err := st.AssetListVersion(ctx); err != nil || v != v1+2 {
			t.Errorf("AssetListVersion = %d, %v; want %d", v, err, v1+2)
		}
	})
}
