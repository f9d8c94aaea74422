package profiledb_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/internal/testkit"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/ohlcv"
	"github.com/tradekit/tradekit/profiles"
	"github.com/tradekit/tradekit/profiles/profiledb"
)

// buildFixture is a small stored universe: five assets of 300 bars, one
// of 100 bars (too short) and one with no prices.
type buildFixture struct {
	full    []marketdata.Asset
	bars    map[uuid.UUID]bars
	short   marketdata.Asset
	empty   marketdata.Asset
	mdStore *marketdata.Store
	store   *profiledb.Store
}

func mustBuildFixture(tb testing.TB, db bun.IDB) buildFixture {
	tb.Helper()
	mkt := marketReturns(300, 5)
	f := buildFixture{bars: map[uuid.UUID]bars{}, mdStore: marketdata.NewStore(db), store: profiledb.NewStore(db)}
	for i, sym := range []string{"ALFA", "BRAV", "CHAR", "DELT", "ECHO"} {
		b := genBars(marketdata.AssetID(sym), 300, mkt, 0.5+0.3*float64(i), uint64(100+i))
		a := mustAsset(tb, db, sym, b)
		f.full = append(f.full, a)
		f.bars[a.ID] = b
	}
	sb := genBars(marketdata.AssetID("SHRT"), 100, mkt, 1, 200)
	f.short = mustAsset(tb, db, "SHRT", sb)
	f.bars[f.short.ID] = sb
	f.empty = mustAsset(tb, db, "NONE", bars{})
	return f
}

// expected computes an asset's profile straight with the engine, against
// every other asset with prices as peers: what the builder must store.
func (f buildFixture) expected(tb testing.TB, id uuid.UUID) string {
	tb.Helper()
	var peers []profiles.Asset
	for _, a := range append(append([]marketdata.Asset{}, f.full...), f.short) {
		b := f.bars[a.ID]
		peers = append(peers, profiles.Asset{ID: a.ID.String(), Symbol: a.Symbol, Bars: ohlcv.Series{Dates: b.series.Bars.Dates, Close: b.series.Bars.Close}})
	}
	p, err := profiles.Compute(f.bars[id].series, peers, profiles.Config{})
	if err != nil {
		tb.Fatal(err)
	}
	b, _ := json.Marshal(p)
	return string(b)
}

// sameJSON reports whether the JSON documents a and b hold the same
// values, numbers within 1e-9: a build computes the correlations on the
// calendar as a matrix product, whose rounding differs from the pairwise
// merge of profiles.Compute in the last bits.
func sameJSON(tb testing.TB, a, b string) bool {
	tb.Helper()
	var x, y any
	if err := json.Unmarshal([]byte(a), &x); err != nil {
		tb.Fatal(err)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		tb.Fatal(err)
	}
	return cmp.Equal(x, y, cmpopts.EquateApprox(0, 1e-9))
}

// updatedAt returns the stored profiles' UpdatedAt by symbol.
func (f buildFixture) updatedAt(tb testing.TB) map[string]time.Time {
	tb.Helper()
	var ids []uuid.UUID
	for _, a := range f.full {
		ids = append(ids, a.ID)
	}
	ids = append(ids, f.short.ID, f.empty.ID)
	recs, err := f.store.Profiles(context.Background(), ids)
	if err != nil {
		tb.Fatal(err)
	}
	out := map[string]time.Time{}
	for _, r := range recs {
		out[r.Symbol] = r.UpdatedAt
	}
	return out
}

func TestBuild(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		f := mustBuildFixture(t, db)
		// The clock moves one minute forward before each build but the first.
		clk := testkit.NewClock(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
		cfg := profiledb.BuildConfig{Workers: 3, Now: clk.Now}

		// First build: every asset with enough bars; the short ones reported.
		res, err := profiledb.Build(ctx, f.mdStore, f.store, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if res.Assets != 7 || res.Built != 5 || res.UpToDate != 0 || len(res.Failed) != 0 {
			t.Errorf("first build: %+v", res)
		}
		wantShort := []profiledb.Skipped{
			{AssetID: f.empty.ID, Symbol: "NONE", Bars: 0, Reason: "0 daily bars, 253 needed"},
			{AssetID: f.short.ID, Symbol: "SHRT", Bars: 100, Reason: "100 daily bars, 253 needed"},
		}
		if diff := cmp.Diff(wantShort, res.Short); diff != "" {
			t.Errorf("short assets (-want +got):\n%s", diff)
		}
		if s := res.String(); !strings.Contains(s, "5 built, 0 up to date, 2 too short (NONE: 0 daily bars, 253 needed, SHRT: 100 daily bars") {
			t.Errorf("summary: %s", s)
		}
		for _, a := range f.full {
			rec, err := f.store.Profile(ctx, a.ID)
			if err != nil {
				t.Fatal(err)
			}
			if want := f.expected(t, a.ID); !sameJSON(t, string(rec.JSON), want) {
				t.Errorf("%s: stored profile differs from the engine's:\n got %.300s\nwant %.300s", a.Symbol, rec.JSON, want)
			}
			v, _ := f.mdStore.PriceVersion(ctx, a.ID)
			if rec.PriceVersion != v.Version || !rec.UpdatedAt.Equal(clk.Now()) || rec.AsOf != f.bars[a.ID].series.Bars.Dates[299] {
				t.Errorf("%s: version %d (want %d), updated %s, as of %s", a.Symbol, rec.PriceVersion, v.Version, rec.UpdatedAt, rec.AsOf)
			}
		}
		for _, a := range []marketdata.Asset{f.short, f.empty} {
			if _, err := f.store.Profile(ctx, a.ID); !errors.Is(err, tradekit.ErrNotFound) {
				t.Errorf("%s has a profile: %v", a.Symbol, err)
			}
		}
		first := f.updatedAt(t)

		// Second build: nothing changed, nothing rebuilt.
		clk.Add(time.Minute)
		res, err = profiledb.Build(ctx, f.mdStore, f.store, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if res.Built != 0 || res.UpToDate != 5 || len(res.Short) != 2 {
			t.Errorf("second build: %+v", res)
		}
		if diff := cmp.Diff(first, f.updatedAt(t)); diff != "" {
			t.Errorf("second build touched profiles (-before +after):\n%s", diff)
		}

		// Change one close of CHAR: only CHAR is rebuilt.
		char := f.full[2]
		p := f.bars[char.ID].prices[150]
		p.Close = p.Close.Add(decimal.RequireFromString("0.01"))
		p.High = p.High.Add(decimal.RequireFromString("0.01"))
		if err := f.mdStore.SavePrices(ctx, []marketdata.Price{p}); err != nil {
			t.Fatal(err)
		}
		clk.Add(time.Minute)
		res, err = profiledb.Build(ctx, f.mdStore, f.store, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if res.Built != 1 || res.UpToDate != 4 {
			t.Errorf("build after changing CHAR: %+v", res)
		}
		after := f.updatedAt(t)
		for sym, at := range after {
			if changed := !at.Equal(first[sym]); changed != (sym == "CHAR") {
				t.Errorf("%s: updated %s, before %s", sym, at, first[sym])
			}
		}
		rec, _ := f.store.Profile(ctx, char.ID)
		if sameJSON(t, string(rec.JSON), f.expected(t, char.ID)) {
			t.Error("CHAR's profile did not change with its prices")
		}

		// All: every asset again.
		clk.Add(time.Minute)
		res, err = profiledb.Build(ctx, f.mdStore, f.store, profiledb.BuildConfig{All: true, Now: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		if res.Built != 5 || res.UpToDate != 0 {
			t.Errorf("build --all: %+v", res)
		}
	})
}

// TestBuildShards checks that shards split the assets: each is built by
// exactly one shard, and the shards together build them all.
func TestBuildShards(t *testing.T) {
	t.Parallel()
	db := dbtest.SQLite(t)
	ctx := context.Background()
	f := mustBuildFixture(t, db)
	const n = 3
	built := 0
	for shard := range n {
		res, err := profiledb.Build(ctx, f.mdStore, f.store, profiledb.BuildConfig{Shard: shard, Shards: n})
		if err != nil {
			t.Fatal(err)
		}
		built += res.Built
		if res.Built+res.OtherShards+len(res.Short) != 7 {
			t.Errorf("shard %d: %+v", shard, res)
		}
	}
	if built != 5 {
		t.Errorf("the shards built %d profiles, want 5", built)
	}
	// After the last shard, every full asset has exactly one profile.
	if got := f.updatedAt(t); len(got) != 5 {
		t.Errorf("profiles after all shards: %v", got)
	}
	for _, bad := range []profiledb.BuildConfig{{Shard: 3, Shards: 3}, {Shard: -1, Shards: 2}, {Shards: -1},
		{Config: profiles.Config{TrendWindow: -1}}} {
		if _, err := profiledb.Build(ctx, f.mdStore, f.store, bad); !errors.Is(err, tradekit.ErrInvalid) {
			t.Errorf("Build(%+v) error = %v, want ErrInvalid", bad, err)
		}
	}
}

// TestBuildCancelled checks that a cancelled context stops the build with
// its error.
func TestBuildCancelled(t *testing.T) {
	t.Parallel()
	db := dbtest.SQLite(t)
	f := mustBuildFixture(t, db)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := profiledb.Build(ctx, f.mdStore, f.store, profiledb.BuildConfig{}); !errors.Is(err, context.Canceled) {
		t.Errorf("error = %v, want context.Canceled", err)
	}
}

func TestShardOf(t *testing.T) {
	t.Parallel()
	// Over many ids every shard gets its share (a binomial count of 1000
	// draws with p = 1/4 is within 250 ± 60 with overwhelming odds).
	counts := make([]int, 4)
	for i := range 1000 {
		counts[profiledb.ShardOf(marketdata.AssetID("SYM"+string(rune('A'+i%26))+decimal.NewFromInt(int64(i)).String()), 4)]++
	}
	for s, c := range counts {
		if c < 190 || c > 310 {
			t.Errorf("shard %d has %d of 1000 ids", s, c)
		}
	}
	id := uuid.MustParse("20000000-0000-4000-8000-000000000001")
	if profiledb.ShardOf(id, 1) != 0 {
		t.Error("one shard must hold every id")
	}
}

// mustBenchUniverse stores m assets of n daily bars from a one-factor
// model, as a loaded database holds them.
func mustBenchUniverse(b *testing.B, db bun.IDB, m, n int) {
	b.Helper()
	mkt := marketReturns(n, 77)
	for i := range m {
		sym := "B" + string(rune('A'+i/676%26)) + string(rune('A'+i/26%26)) + string(rune('A'+i%26))
		mustAsset(b, db, sym, genBars(marketdata.AssetID(sym), n, mkt, 0.3+1.4*float64(i%100)/100, uint64(1000+i)))
	}
}

// BenchmarkBuild builds, end to end (load every asset's prices, prepare
// the universe, compute, store), the profiles of 500 assets of 10 years
// of daily bars (2,520 each) stored in SQLite and in PostgreSQL, with
// All set so every iteration rebuilds them all. Run it with
// -benchtime=1x: one iteration is the figure.
func BenchmarkBuild(b *testing.B) {
	dbtest.Each(b, func(b *testing.B, db *bun.DB) {
		b.Run("500x10y", func(b *testing.B) {
			mustBenchUniverse(b, db, 500, 2520)
			md, st := marketdata.NewStore(db), profiledb.NewStore(db)
			ctx := context.Background()
			var load time.Duration
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				res, err := profiledb.Build(ctx, md, st, profiledb.BuildConfig{All: true})
				if err != nil {
					b.Fatal(err)
				}
				if res.Built != 500 {
					b.Fatalf("built %d profiles, want 500: %s", res.Built, res)
				}
				load += res.Load
			}
			b.ReportMetric(load.Seconds()/float64(b.N), "load-s/op")
		})
	})
}
