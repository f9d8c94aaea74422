package profiledb_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/profiles/profiledb"
)

// storedJSON returns the stored profiles' JSON by asset.
func storedJSON(tb testing.TB, st *profiledb.Store, ids []uuid.UUID) map[uuid.UUID]string {
	tb.Helper()
	recs, err := st.Profiles(context.Background(), ids)
	if err != nil {
		tb.Fatal(err)
	}
	out := map[uuid.UUID]string{}
	for _, r := range recs {
		out[r.AssetID] = string(r.JSON)
	}
	return out
}

// TestBuildIncremental builds the profiles of four assets, appends a
// day to their prices and builds again: each profile is updated from its
// stored state and equals, field by field within 1e-9, what a full
// rebuild stores. Then a split is recorded for one asset, which adjusts
// its whole history, and a further day appended: that asset falls back
// to the full computation, the others are updated, and again all equal
// a full rebuild.
func TestBuildIncremental(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		const n = 300
		mkt := marketReturns(n+2, 11)
		md, st := marketdata.NewStore(db), profiledb.NewStore(db)
		var ids []uuid.UUID
		all := map[uuid.UUID]bars{}
		for i, sym := range []string{"INCA", "INCB", "INCC", "INCD"} {
			b := genBars(marketdata.AssetID(sym), n+2, mkt, 0.4+0.4*float64(i), uint64(300+i))
			head := b
			head.prices = b.prices[:n]
			a := mustAsset(t, db, sym, head)
			ids = append(ids, a.ID)
			all[a.ID] = b
		}
		build := func(cfg profiledb.BuildConfig) profiledb.BuildResult {
			t.Helper()
			res, err := profiledb.Build(ctx, md, st, cfg)
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
		appendDay := func(k int) {
			t.Helper()
			for _, id := range ids {
				if err := md.SavePrices(ctx, all[id].prices[k:k+1]); err != nil {
					t.Fatal(err)
				}
			}
		}
		// check builds incrementally, expecting want assets updated from
		// their state, then rebuilds all in full and compares.
		check := func(step string, want int) {
			t.Helper()
			res := build(profiledb.BuildConfig{})
			if res.Built != len(ids) || res.Incremental != want {
				t.Fatalf("%s: built %d, %d of them incrementally; want %d, %d", step, res.Built, res.Incremental, len(ids), want)
			}
			inc := storedJSON(t, st, ids)
			res = build(profiledb.BuildConfig{All: true})
			if res.Incremental != 0 {
				t.Fatalf("%s: a build with All updated %d profiles from their state, want 0", step, res.Incremental)
			}
			full := storedJSON(t, st, ids)
			for _, id := range ids {
				if inc[id] == "" || !sameJSON(t, full[id], inc[id]) {
					t.Errorf("%s: the incremental profile of %s differs from the full rebuild:\nfull %s\nincr %s", step, id, full[id], inc[id])
				}
			}
		}

		if res := build(profiledb.BuildConfig{}); res.Built != len(ids) || res.Incremental != 0 {
			t.Fatalf("first build: built %d, %d incrementally; want %d, 0", res.Built, res.Incremental, len(ids))
		}
		appendDay(n)
		check("one day appended", len(ids))

		split := all[ids[1]].prices[n-100].Date
		if err := md.SaveActions(ctx, []marketdata.Action{{AssetID: ids[1], Date: split, Kind: marketdata.Split,
			Value: decimal.RequireFromString("2")}}); err != nil {
			t.Fatal(err)
		}
		appendDay(n + 1)
		check("a split in the past, then one day appended", len(ids)-1)
	})
}
