package demo_test

import (
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/marketdata/demo"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

func mustGenerate(tb testing.TB, cfg demo.Config) *demo.Set {
	tb.Helper()
	set, err := demo.Generate(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return set
}

// defaultSet is the set of the default configuration, generated once for
// the tests that only read it (a generation takes seconds under the race
// detector).
var defaultSet = sync.OnceValues(func() (*demo.Set, error) { return demo.Generate(demo.Config{}) })

// mustDefault returns [defaultSet]; the caller must not change it.
func mustDefault(tb testing.TB) *demo.Set {
	tb.Helper()
	set, err := defaultSet()
	if err != nil {
		tb.Fatal(err)
	}
	return set
}

// diff is cmp.Diff(a, b) but quick when a and b are deeply equal, as a
// passing test's are: cmp.Diff of the whole set took 9 s of CPU, most of
// the package's run, reflect.DeepEqual a fraction of a second. Values
// deeply equal are equal to cmp too; others get cmp's verdict (decimals
// of the same value but another exponent are equal to it).
func diff(a, b any) string {
	if reflect.DeepEqual(a, b) {
		return ""
	}
	return cmp.Diff(a, b)
}

func TestDeterministic(t *testing.T) {
	t.Parallel()
	a := mustDefault(t)
	b := mustGenerate(t, demo.Config{Rand: rand.New(rand.NewPCG(demo.Seed1, demo.Seed2))})
	if diff := diff(a, b); diff != "" {
		t.Fatalf("two generations differ (-first +second):\n%s", diff)
	}
	// Another seed, over a short range (a generation of the whole range
	// takes seconds, more under the race detector).
	start := calendar.Date{Year: 2026, Month: 9, Day: 1}
	d := mustGenerate(t, demo.Config{Start: start})
	c := mustGenerate(t, demo.Config{Start: start, Rand: rand.New(rand.NewPCG(1, 2))})
	if cmp.Equal(d.Prices[:100], c.Prices[:100]) {
		t.Error("another seed gave the same prices")
	}
}

func TestUniverse(t *testing.T) {
	t.Parallel()
	set := mustDefault(t)
	if len(set.Assets) < 60 {
		t.Errorf("%d assets, want at least 60", len(set.Assets))
	}
	types := map[marketdata.AssetType]int{}
	exchanges := map[uuid.UUID]bool{}
	for _, a := range set.Assets {
		types[a.Type]++
		exchanges[a.ExchangeID] = true
	}
	for _, typ := range marketdata.AssetTypes() {
		if types[typ] == 0 {
			t.Errorf("no %s", typ)
		}
	}
	for _, e := range calendar.Exchanges() {
		if !exchanges[marketdata.ExchangeID(e.Symbol)] {
			t.Errorf("no asset on %s", e.Symbol)
		}
	}
	levels := map[marketdata.Level]int{}
	for _, n := range set.Industries {
		levels[n.Level]++
	}
	if levels[marketdata.Sector] < 10 || levels[marketdata.IndustryGroup] < 15 || levels[marketdata.IndustryLevel] < 30 {
		t.Errorf("industry tree %v is not full", levels)
	}
	if len(set.Indexes) < 3 {
		t.Errorf("%d indexes, want at least 3", len(set.Indexes))
	}
	stocks := types[marketdata.Stock]
	if len(set.Profiles) != stocks || len(set.Fundamentals) != stocks {
		t.Errorf("%d profiles and %d fundamentals for %d stocks", len(set.Profiles), len(set.Fundamentals), stocks)
	}
}

// TestPrices checks every bar: OHLC consistency, ticks, trading days only,
// at least ten years per asset, and volatility in a realistic range with
// clustering.
func TestPrices(t *testing.T) {
	t.Parallel()
	set := mustDefault(t)
	byAsset := map[uuid.UUID][]marketdata.Price{}
	for _, p := range set.Prices {
		if err := p.Validate(); err != nil {
			t.Fatalf("bar %+v: %v", p, err)
		}
		byAsset[p.AssetID] = append(byAsset[p.AssetID], p)
	}
	exSymbol := map[uuid.UUID]string{}
	for _, e := range calendar.Exchanges() {
		exSymbol[marketdata.ExchangeID(e.Symbol)] = e.Symbol
	}
	for _, a := range set.Assets {
		ps := byAsset[a.ID]
		if len(ps) == 0 {
			t.Errorf("%s has no prices", a.Symbol)
			continue
		}
		first, last := ps[0].Date, ps[len(ps)-1].Date
		if last != demo.End || last.Sub(first) < 3652 {
			t.Errorf("%s: prices from %s to %s, want 10 years ending %s", a.Symbol, first, last, demo.End)
		}
		cal, _ := calendar.Lookup(exSymbol[a.ExchangeID])
		// Returns are measured on the split-adjusted closes: a split's
		// cliff is not a return.
		var splits []marketdata.Action
		for _, act := range set.Actions {
			if act.AssetID == a.ID && act.Kind == marketdata.Split {
				splits = append(splits, act)
			}
		}
		adj := marketdata.Adjust(ps, splits)
		var rets []float64
		for i, p := range ps {
			if i > 0 && !p.Date.After(ps[i-1].Date) {
				t.Fatalf("%s: dates out of order at %s", a.Symbol, p.Date)
			}
			switch a.Type {
			case marketdata.FX:
				if wd := p.Date.Weekday(); wd == time.Saturday || wd == time.Sunday {
					t.Fatalf("%s: FX bar on a weekend %s", a.Symbol, p.Date)
				}
			default:
				if !cal.IsTradingDay(p.Date) {
					t.Fatalf("%s: bar on %s, not a %s trading day", a.Symbol, p.Date, exSymbol[a.ExchangeID])
				}
			}
			if i > 0 {
				rets = append(rets, math.Log(adj[i].Close.InexactFloat64()/adj[i-1].Close.InexactFloat64()))
			}
		}
		if a.Type != marketdata.FX && a.Type != marketdata.Crypto {
			if n, _ := cal.Sessions(first, last); len(n) != len(ps) {
				t.Errorf("%s: %d bars for %d sessions", a.Symbol, len(ps), len(n))
			}
		}
		perYear := 252.0
		if a.Type == marketdata.Crypto {
			perYear = 365
		}
		vol := stddev(rets) * math.Sqrt(perYear)
		if vol < 0.03 || vol > 1.6 {
			t.Errorf("%s: annualised volatility %.3f out of range", a.Symbol, vol)
		}
		if a.Type == marketdata.Stock || a.Type == marketdata.Crypto {
			if ac := sqAutocorr(rets); ac < 0.02 {
				t.Errorf("%s: autocorrelation of squared returns %.3f: no volatility clustering", a.Symbol, ac)
			}
		}
	}
	// Weekend and holiday checks against dates known independently:
	// 2024-12-25 (Wednesday) is Christmas, a closure everywhere but on
	// CRYPTO and in Tokyo (JPX trades on 25 December); 2024-01-06 is a
	// Saturday.
	for _, p := range set.Prices {
		if ex := exSymbol[assetExchange(set, p.AssetID)]; p.Date == (calendar.Date{Year: 2024, Month: 12, Day: 25}) &&
			ex != "CRYPTO" && ex != "JPX" {
			t.Fatalf("bar on Christmas 2024: %+v", p)
		}
	}
	orbit := byAsset[marketdata.AssetID("ORBT-USD")]
	if !hasDate(orbit, calendar.Date{Year: 2024, Month: 1, Day: 6}) {
		t.Error("crypto has no bar on Saturday 2024-01-06")
	}
}

func assetExchange(set *demo.Set, id uuid.UUID) uuid.UUID {
	for _, a := range set.Assets {
		if a.ID == id {
			return a.ExchangeID
		}
	}
	return uuid.Nil
}

func hasDate(ps []marketdata.Price, d calendar.Date) bool {
	for _, p := range ps {
		if p.Date == d {
			return true
		}
	}
	return false
}

func stddev(x []float64) float64 {
	var m float64
	for _, v := range x {
		m += v
	}
	m /= float64(len(x))
	var s float64
	for _, v := range x {
		s += (v - m) * (v - m)
	}
	return math.Sqrt(s / float64(len(x)-1))
}

// sqAutocorr is the lag-1 autocorrelation of squared returns.
func sqAutocorr(r []float64) float64 {
	sq := make([]float64, len(r))
	var m float64
	for i, v := range r {
		sq[i] = v * v
		m += sq[i]
	}
	m /= float64(len(sq))
	var num, den float64
	for i := range sq {
		den += (sq[i] - m) * (sq[i] - m)
		if i > 0 {
			num += (sq[i] - m) * (sq[i-1] - m)
		}
	}
	return num / den
}

// TestIndexMembershipChanges checks that every index changes over time and
// has its stated size on every rebalance.
func TestIndexMembershipChanges(t *testing.T) {
	t.Parallel()
	set := mustDefault(t)
	for _, x := range set.Indexes {
		var periods []marketdata.Constituent
		for _, c := range set.Constituents {
			if c.IndexID == x.ID {
				periods = append(periods, c)
			}
		}
		closed := 0
		for _, c := range periods {
			if c.To != (calendar.Date{}) {
				closed++
			}
		}
		if closed == 0 {
			t.Errorf("%s: membership never changes", x.Symbol)
		}
		count := func(d calendar.Date) int {
			n := 0
			for _, c := range periods {
				if c.Contains(d) {
					n++
				}
			}
			return n
		}
		if a, b := count(calendar.Date{Year: 2017, Month: 6, Day: 1}), count(demo.End); a != b || a == 0 {
			t.Errorf("%s: %d members in 2017, %d at the end", x.Symbol, a, b)
		}
	}
}

func dump(t *testing.T, db *bun.DB) map[string][]map[string]any {
	t.Helper()
	out := map[string][]map[string]any{}
	for _, table := range []string{"industries", "assets", "asset_profiles", "asset_fundamentals", "market_indexes", "index_constituents"} {
		var rows []map[string]any
		if err := db.NewRaw("SELECT * FROM "+table+" ORDER BY 1, 2").Scan(context.Background(), &rows); err != nil {
			t.Fatal(err)
		}
		out[table] = rows
	}
	var prices []map[string]any
	if err := db.NewRaw("SELECT asset_id, date, open, high, low, close, volume FROM prices ORDER BY asset_id, date").Scan(context.Background(), &prices); err != nil {
		t.Fatal(err)
	}
	out["prices"] = prices
	return out
}

// TestLoadIdempotent loads a shortened set twice: the second load changes
// nothing.
func TestLoadIdempotent(t *testing.T) {
	t.Parallel()
	set := mustGenerate(t, demo.Config{Start: calendar.Date{Year: 2026, Month: 1, Day: 1}})
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		load := func() {
			err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
				return demo.Load(ctx, marketdata.NewStore(tx), set)
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		load()
		first := dump(t, db)
		load()
		if diff := diff(first, dump(t, db)); diff != "" {
			t.Errorf("second load changed the database (-first +second):\n%s", diff)
		}
		if n := len(first["prices"]); n != len(set.Prices) {
			t.Errorf("%d price rows, want %d", n, len(set.Prices))
		}
	})
}

// TestIsLoaded: false on an empty database and on one whose index only
// shares a demo symbol; true once the demo set is loaded.
func TestIsLoaded(t *testing.T) {
	t.Parallel()
	set := mustGenerate(t, demo.Config{Start: calendar.Date{Year: 2026, Month: 10, Day: 1}})
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		st := marketdata.NewStore(db)
		isLoaded := func() bool {
			t.Helper()
			ok, err := demo.IsLoaded(ctx, st)
			if err != nil {
				t.Fatal(err)
			}
			return ok
		}
		if isLoaded() {
			t.Error("IsLoaded on an empty database")
		}
		real := marketdata.Index{Symbol: "TKXUS15", Name: "Someone's own index"}
		if err := st.SaveIndex(ctx, &real); err != nil {
			t.Fatal(err)
		}
		if isLoaded() {
			t.Error("IsLoaded with an index that only shares a demo symbol")
		}
		err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			return demo.Load(ctx, marketdata.NewStore(tx), set)
		})
		if err != nil {
			t.Fatal(err)
		}
		if !isLoaded() {
			t.Error("IsLoaded is false after Load")
		}
	})
}

// TestActions checks the demo's corporate actions: SHPX's 3-for-1 split is
// a cliff in the traded closes and none in the adjusted ones, and the
// dividend payers pay every quarter.
func TestActions(t *testing.T) {
	t.Parallel()
	set := mustDefault(t)
	bySymbol := map[string][]marketdata.Action{}
	prices := map[uuid.UUID][]marketdata.Price{}
	for _, p := range set.Prices {
		prices[p.AssetID] = append(prices[p.AssetID], p)
	}
	sym := map[uuid.UUID]string{}
	for _, a := range set.Assets {
		sym[a.ID] = a.Symbol
	}
	for _, a := range set.Actions {
		if err := a.Validate(); err != nil {
			t.Fatal(err)
		}
		bySymbol[sym[a.AssetID]] = append(bySymbol[sym[a.AssetID]], a)
	}
	split := bySymbol["SHPX"]
	if len(split) != 1 || split[0].Kind != marketdata.Split || split[0].Date != calendar.NewDate(2021, 6, 1) || split[0].Value.String() != "3" {
		t.Fatalf("SHPX actions %+v, want a 3-for-1 split ex 2021-06-01", split)
	}
	if n := len(bySymbol["WSFT"]); n != 1 {
		t.Errorf("WSFT has %d actions, want 1 split", n)
	}
	// 2016 to 2026-10-30: 43 quarters (the November 2026 one is after the end).
	for _, s := range []string{"NRGD", "TKUS"} {
		if n := len(bySymbol[s]); n != 43 {
			t.Errorf("%s has %d dividends, want 43", s, n)
		}
	}
	ps := prices[split[0].AssetID]
	i := slices.IndexFunc(ps, func(p marketdata.Price) bool { return p.Date == split[0].Date })
	move := func(ps []marketdata.Price) float64 {
		return ps[i].Close.InexactFloat64() / ps[i-1].Close.InexactFloat64()
	}
	if m := move(ps); m < 0.25 || m > 0.45 {
		t.Errorf("SHPX traded close moves by %v at the split, want about 1/3", m)
	}
	if m := move(marketdata.Adjust(ps, split)); m < 0.85 || m > 1.15 {
		t.Errorf("SHPX adjusted close moves by %v at the split, want no cliff", m)
	}
}
