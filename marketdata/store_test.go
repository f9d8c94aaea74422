package marketdata_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/marketdata"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

func date(s string) calendar.Date {
	d, err := calendar.ParseDate(s)
	if err != nil {
		panic(err)
	}
	return d
}

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func mustAsset(tb testing.TB, st *marketdata.Store, symbol string) marketdata.Asset {
	tb.Helper()
	a := marketdata.Asset{Symbol: symbol, Name: symbol + " Inc", Type: marketdata.Stock, ExchangeID: marketdata.ExchangeID("NYSE"), Currency: "USD", IsActive: true}
	if err := st.SaveAsset(context.Background(), &a); err != nil {
		tb.Fatal(err)
	}
	return a
}

// TestExchangesMatchCalendar: the migration's rows are calendar.Exchanges.
func TestExchangesMatchCalendar(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		got, err := marketdata.NewStore(db).Exchanges(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		bySymbol := map[string]marketdata.Exchange{}
		for _, e := range got {
			bySymbol[e.Symbol] = e
		}
		for _, c := range calendar.Exchanges() {
			want := marketdata.Exchange{ID: marketdata.ExchangeID(c.Symbol), Symbol: c.Symbol, MIC: c.MIC, Name: c.Name,
				TimeZone: c.TimeZone, Country: c.Country, Currency: c.Currency, OpenTime: c.Open, CloseTime: c.Close}
			if diff := cmp.Diff(want, bySymbol[c.Symbol]); diff != "" {
				t.Errorf("%s (-calendar +stored):\n%s", c.Symbol, diff)
			}
		}
		if len(got) != len(calendar.Exchanges()) {
			t.Errorf("%d exchanges stored, %d in the calendar", len(got), len(calendar.Exchanges()))
		}
	})
}

// TestPricesRoundTrip stores decimals of many shapes and reads them back
// unchanged, in date order, with their ids.
func TestPricesRoundTrip(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		st := marketdata.NewStore(db)
		a := mustAsset(t, st, "RT")
		in := []marketdata.Price{
			{AssetID: a.ID, Date: date("2024-03-01"), Open: dec("0.000000000000000001"), High: dec("99999999999999999999.999999999999999999"), Low: dec("0.000000000000000001"), Close: dec("1"), Volume: 0},
			{AssetID: a.ID, Date: date("2023-12-29"), Open: dec("187.149994"), High: dec("188.440002"), Low: dec("183.889999"), Close: dec("185.639999"), Volume: 82488700},
			{AssetID: a.ID, Date: date("2024-01-02"), Open: dec("1.10"), High: dec("1.20"), Low: dec("1.00"), Close: dec("1.15"), Volume: 1 << 62},
		}
		if err := st.SavePrices(ctx, in); err != nil {
			t.Fatal(err)
		}
		got, err := st.Prices(ctx, a.ID, calendar.Date{}, calendar.Date{})
		if err != nil {
			t.Fatal(err)
		}
		want := []marketdata.Price{in[1], in[2], in[0]}
		for i := range want {
			want[i].ID = marketdata.PriceID(a.ID, want[i].Date)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("round trip (-want +got):\n%s", diff)
		}
		for _, p := range want {
			if got, err := st.Price(ctx, p.ID); err != nil || !cmp.Equal(got, p) {
				t.Errorf("Price(%s) = %+v, %v", p.ID, got, err)
			}
		}
		latest, err := st.LatestPrice(ctx, a.ID)
		if err != nil || latest.Date != date("2024-03-01") {
			t.Errorf("LatestPrice = %v, %v", latest.Date, err)
		}
		if _, err := st.Prices(ctx, a.ID, date("2024-02-01"), date("2024-01-01")); !errors.Is(err, tradekit.ErrInvalid) {
			t.Errorf("from after to: %v", err)
		}
		if _, err := st.Prices(ctx, uuid.New(), calendar.Date{}, calendar.Date{}); !errors.Is(err, tradekit.ErrNotFound) {
			t.Errorf("unknown asset: %v", err)
		}
	})
}

func TestPriceID(t *testing.T) {
	t.Parallel()
	a := uuid.MustParse("6fa459ea-ee8a-5ca4-894e-db77e160355e")
	id := marketdata.PriceID(a, date("2024-01-02"))
	// 2024-01-02 is day 45291 after 1900-01-01 (0x0000b0eb), and the
	// version nibble becomes 8.
	if got, want := id.String(), "6fa459ea-ee8a-8ca4-894e-db770000b0eb"; got != want {
		t.Errorf("PriceID = %s, want %s", got, want)
	}
	if id.Version() != 8 || id.Variant() != uuid.RFC4122 {
		t.Errorf("version %d variant %v", id.Version(), id.Variant())
	}
}

func TestSaveAssetCollidingPriceIDs(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		st := marketdata.NewStore(db)
		a := marketdata.Asset{ID: uuid.MustParse("11111111-2222-4333-8444-555555555555"), Symbol: "ONE", Name: "One", Type: marketdata.Stock,
			ExchangeID: marketdata.ExchangeID("NYSE"), Currency: "USD"}
		if err := st.SaveAsset(ctx, &a); err != nil {
			t.Fatal(err)
		}
		b := a
		b.ID, b.Symbol = uuid.MustParse("11111111-2222-5333-8444-555566666666"), "TWO"
		if err := st.SaveAsset(ctx, &b); !errors.Is(err, tradekit.ErrConflict) {
			t.Errorf("colliding id: %v, want ErrConflict", err)
		}
	})
}

func TestSaveValidation(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		st := marketdata.NewStore(db)
		sector := marketdata.Industry{Name: "Tech", Level: marketdata.Sector}
		if err := st.SaveIndustry(ctx, &sector); err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name string
			err  error
			want error
		}{
			{"asset without a name", st.SaveAsset(ctx, &marketdata.Asset{Symbol: "X", Type: marketdata.Stock, ExchangeID: marketdata.ExchangeID("NYSE"), Currency: "USD"}), tradekit.ErrInvalid},
			{"asset of unknown type", st.SaveAsset(ctx, &marketdata.Asset{Symbol: "X", Name: "X", Type: "bond", ExchangeID: marketdata.ExchangeID("NYSE"), Currency: "USD"}), tradekit.ErrInvalid},
			{"asset on unknown exchange", st.SaveAsset(ctx, &marketdata.Asset{Symbol: "X", Name: "X", Type: marketdata.Stock, ExchangeID: uuid.New(), Currency: "USD"}), tradekit.ErrInvalid},
			{"asset with a bad currency", st.SaveAsset(ctx, &marketdata.Asset{Symbol: "X", Name: "X", Type: marketdata.Stock, ExchangeID: marketdata.ExchangeID("NYSE"), Currency: "dollars"}), tradekit.ErrInvalid},
			{"sector with a parent", st.SaveIndustry(ctx, &marketdata.Industry{Name: "S2", Level: marketdata.Sector, ParentID: &sector.ID}), tradekit.ErrInvalid},
			{"industry under a sector", st.SaveIndustry(ctx, &marketdata.Industry{Name: "I", Level: marketdata.IndustryLevel, ParentID: &sector.ID}), tradekit.ErrInvalid},
			{"group without a parent", st.SaveIndustry(ctx, &marketdata.Industry{Name: "G", Level: marketdata.IndustryGroup}), tradekit.ErrInvalid},
			{"unknown level", st.SaveIndustry(ctx, &marketdata.Industry{Name: "G", Level: "division"}), tradekit.ErrInvalid},
			{"profile of unknown asset", st.SaveProfile(ctx, marketdata.Profile{AssetID: uuid.New()}), tradekit.ErrNotFound},
			{"constituent period backwards", st.SaveConstituent(ctx, marketdata.Constituent{IndexID: uuid.New(), AssetID: uuid.New(), From: date("2024-01-02"), To: date("2024-01-02")}), tradekit.ErrInvalid},
		}
		for _, tt := range tests {
			if !errors.Is(tt.err, tt.want) {
				t.Errorf("%s: %v, want %v", tt.name, tt.err, tt.want)
			}
		}
	})
}

// TestSymbolsIgnoreCase saves and finds symbols in any case, and a second
// save of a symbol updates the asset instead of adding one. Lookups trim
// nothing: a symbol with spaces around it is another symbol.
func TestSymbolsIgnoreCase(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		st := marketdata.NewStore(db)
		a := mustAsset(t, st, "brk.b")
		if a.Symbol != "BRK.B" {
			t.Errorf("stored symbol %q", a.Symbol)
		}
		b := marketdata.Asset{Symbol: "Brk.B", Name: "Renamed", Type: marketdata.Stock, ExchangeID: marketdata.ExchangeID("nyse"), Currency: "usd"}
		if err := st.SaveAsset(ctx, &b); err != nil || b.ID != a.ID {
			t.Fatalf("update: %v, id %s want %s", err, b.ID, a.ID)
		}
		got, err := st.AssetBySymbol(ctx, "bRk.b")
		if err != nil || got.Name != "Renamed" {
			t.Errorf("AssetBySymbol = %+v, %v", got, err)
		}
		if _, err := st.AssetBySymbol(ctx, " bRk.b "); !errors.Is(err, tradekit.ErrNotFound) {
			t.Errorf("AssetBySymbol(%q) error %v, want ErrNotFound", " bRk.b ", err)
		}
		if n, _ := st.CountAssets(ctx); n != 1 {
			t.Errorf("%d assets, want 1", n)
		}
		if e, err := st.ExchangeBySymbol(ctx, "xetra"); err != nil || e.MIC != "XETR" {
			t.Errorf("ExchangeBySymbol(xetra) = %+v, %v", e, err)
		}
	})
}

// TestPointInTimeConstituents follows one index through joins and leaves.
func TestPointInTimeConstituents(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		st := marketdata.NewStore(db)
		a, b, c := mustAsset(t, st, "AAA"), mustAsset(t, st, "BBB"), mustAsset(t, st, "CCC")
		x := marketdata.Index{Symbol: "pit", Name: "Point in time"}
		if err := st.SaveIndex(ctx, &x); err != nil {
			t.Fatal(err)
		}
		for _, m := range []marketdata.Constituent{
			{IndexID: x.ID, AssetID: a.ID, From: date("2018-01-02")},
			{IndexID: x.ID, AssetID: b.ID, From: date("2018-01-02"), To: date("2020-01-02")},
			{IndexID: x.ID, AssetID: b.ID, From: date("2022-01-03")}, // rejoins
			{IndexID: x.ID, AssetID: c.ID, From: date("2020-01-02"), To: date("2022-01-03")},
		} {
			if err := st.SaveConstituent(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
		tests := []struct {
			asOf string
			want []string
		}{
			{"2017-12-29", nil},
			{"2018-01-02", []string{"AAA", "BBB"}},
			{"2020-01-01", []string{"AAA", "BBB"}},
			{"2020-01-02", []string{"AAA", "CCC"}},
			{"2022-01-02", []string{"AAA", "CCC"}},
			{"2022-01-03", []string{"AAA", "BBB"}},
			{"2030-06-30", []string{"AAA", "BBB"}},
		}
		for _, tt := range tests {
			as, err := st.IndexAssets(ctx, x.ID, date(tt.asOf))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, a := range as {
				got = append(got, a.Symbol)
			}
			if !cmp.Equal(got, tt.want) {
				t.Errorf("constituents on %s = %v, want %v", tt.asOf, got, tt.want)
			}
			xi, err := st.Index(ctx, x.ID, date(tt.asOf))
			if err != nil || xi.AssetCount != len(tt.want) {
				t.Errorf("Index on %s: count %d (%v), want %d", tt.asOf, xi.AssetCount, err, len(tt.want))
			}
		}
		cs, err := st.Constituents(ctx, x.ID)
		if err != nil || len(cs) != 4 {
			t.Errorf("Constituents = %d periods, %v", len(cs), err)
		}
	})
}

func TestHolidaysFilter(t *testing.T) {
	t.Parallel()
	// LSE 2024 from the bank holidays of England and Wales (gov.uk/bank-holidays):
	// eight closures; half days on Christmas Eve and New Year's Eve.
	lse := marketdata.Exchange{ID: marketdata.ExchangeID("LSE"), Symbol: "LSE"}
	closed, err := marketdata.Holidays(lse, "", 2024)
	if err != nil || len(closed) != 8 {
		t.Fatalf("LSE 2024 closures: %d, %v", len(closed), err)
	}
	early, _ := marketdata.Holidays(lse, marketdata.HolidaysEarlyClose, 2024)
	var dates []string
	for _, h := range early {
		dates = append(dates, h.Date.String()+" "+h.Close)
	}
	if want := "2024-12-24 12:30,2024-12-31 12:30"; strings.Join(dates, ",") != want {
		t.Errorf("LSE 2024 early closes %v, want %s", dates, want)
	}
	all, _ := marketdata.Holidays(lse, marketdata.HolidaysAll, 2024, 2025)
	if len(all) != 8+2+8+2 {
		t.Errorf("LSE 2024-2025, all kinds: %d", len(all))
	}
	if _, err := marketdata.Holidays(lse, "half", 2024); !errors.Is(err, tradekit.ErrInvalid) {
		t.Errorf("bad filter: %v", err)
	}
	if _, err := marketdata.Holidays(lse, "", 1989); !errors.Is(err, tradekit.ErrInvalid) {
		t.Errorf("year 1989: %v", err)
	}
	if _, err := marketdata.Holidays(marketdata.Exchange{Symbol: "MOON"}, "", 2024); !errors.Is(err, tradekit.ErrNotFound) {
		t.Errorf("no calendar: %v", err)
	}
}

func TestPriceValidate(t *testing.T) {
	t.Parallel()
	ok := marketdata.Price{Date: date("2024-01-02"), Open: dec("10"), High: dec("11"), Low: dec("9"), Close: dec("10.5"), Volume: 1}
	tests := []struct {
		name string
		edit func(p *marketdata.Price)
		ok   bool
	}{
		{"good", func(p *marketdata.Price) {}, true},
		{"flat bar", func(p *marketdata.Price) { p.Open, p.High, p.Low, p.Close = dec("5"), dec("5"), dec("5"), dec("5") }, true},
		{"high below open", func(p *marketdata.Price) { p.High = dec("9.99") }, false},
		{"high below close", func(p *marketdata.Price) { p.High = dec("10.4") }, false},
		{"low above close", func(p *marketdata.Price) { p.Low = dec("10.6"); p.Open = dec("10.7") }, false},
		{"low above open", func(p *marketdata.Price) { p.Low = dec("10.01") }, false},
		{"zero low", func(p *marketdata.Price) { p.Low = decimal.Zero }, false},
		{"negative volume", func(p *marketdata.Price) { p.Volume = -1 }, false},
		{"zero date", func(p *marketdata.Price) { p.Date = calendar.Date{} }, false},
	}
	for _, tt := range tests {
		p := ok
		tt.edit(&p)
		if err := p.Validate(); (err == nil) != tt.ok || err != nil && !errors.Is(err, tradekit.ErrInvalid) {
			t.Errorf("%s: Validate() = %v", tt.name, err)
		}
	}
}

func TestReadPricesCSV(t *testing.T) {
	t.Parallel()
	got, err := marketdata.ReadPricesCSV(strings.NewReader("Date,Open,High,Low,Close,Adj Close,Volume\n2024-01-02,1,2,0.5,1.5,1.4,10\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []marketdata.Price{{Date: date("2024-01-02"), Open: dec("1"), High: dec("2"), Low: dec("0.5"), Close: dec("1.5"), Volume: 10}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	_, err = marketdata.ReadPricesCSV(strings.NewReader("date,open,high,low,close,volume\n2024-01-02,1,2,0.5,1.5,10\n\"2024-01-03,1,2,0.5,1.5,10\n"))
	var pe *marketdata.ParseError
	if !errors.As(err, &pe) || pe.Line != 3 || !errors.Is(err, tradekit.ErrInvalid) {
		t.Errorf("broken quote: %v", err)
	}
}

// TestIndustryCounts: a node counts the assets attached to it and below.
func TestIndustryCounts(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		st := marketdata.NewStore(db)
		s := marketdata.Industry{Name: "Energy", Level: marketdata.Sector}
		must(t, st.SaveIndustry(ctx, &s))
		g := marketdata.Industry{Name: "Fuels", Level: marketdata.IndustryGroup, ParentID: &s.ID}
		must(t, st.SaveIndustry(ctx, &g))
		i1 := marketdata.Industry{Name: "Oil", Level: marketdata.IndustryLevel, ParentID: &g.ID}
		must(t, st.SaveIndustry(ctx, &i1))
		i2 := marketdata.Industry{Name: "Gas", Level: marketdata.IndustryLevel, ParentID: &g.ID}
		must(t, st.SaveIndustry(ctx, &i2))
		for i, parent := range []*uuid.UUID{&i1.ID, &i1.ID, &i2.ID, &g.ID} {
			a := marketdata.Asset{Symbol: string(rune('A' + i)), Name: "x", Type: marketdata.Stock, ExchangeID: marketdata.ExchangeID("NYSE"), Currency: "USD", IndustryID: parent}
			must(t, st.SaveAsset(ctx, &a))
		}
		ns, err := st.Industries(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		for _, n := range ns {
			got[n.Name] = n.AssetCount
		}
		if want := map[string]int{"Energy": 4, "Fuels": 4, "Oil": 2, "Gas": 1}; !cmp.Equal(got, want) {
			t.Errorf("counts %v, want %v", got, want)
		}
		as, _ := st.IndustryAssets(ctx, g.ID)
		if len(as) != 4 {
			t.Errorf("%d assets below the group, want 4", len(as))
		}
	})
}

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}

// TestInConnTx: an error rolls everything back (prices written with COPY
// on PostgreSQL included); a success commits; a Store on a bare
// connection still saves prices.
func TestInConnTx(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		bars := []marketdata.Price{{Date: date("2024-01-02"), Open: dec("1"), High: dec("2"), Low: dec("0.5"), Close: dec("1.5"), Volume: 1}}
		errBoom := errors.New("boom")
		err := marketdata.InConnTx(ctx, db, func(ctx context.Context, st *marketdata.Store) error {
			if _, err := marketdata.ImportPrices(ctx, st, marketdata.PriceImport{Symbol: "TX"}, bars); err != nil {
				return err
			}
			return errBoom
		})
		if !errors.Is(err, errBoom) {
			t.Fatalf("InConnTx = %v, want the function's error", err)
		}
		st := marketdata.NewStore(db)
		if n, _ := st.CountAssets(ctx); n != 0 {
			t.Fatalf("%d assets after a rollback", n)
		}
		err = marketdata.InConnTx(ctx, db, func(ctx context.Context, st *marketdata.Store) error {
			_, err := marketdata.ImportPrices(ctx, st, marketdata.PriceImport{Symbol: "TX"}, bars)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		a, err := st.AssetBySymbol(ctx, "tx")
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := st.CountPrices(ctx, a.ID); n != 1 {
			t.Errorf("%d prices after a commit, want 1", n)
		}
		conn, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		more := []marketdata.Price{{AssetID: a.ID, Date: date("2024-01-03"), Open: dec("1"), High: dec("1"), Low: dec("1"), Close: dec("1"), Volume: 0}}
		if err := marketdata.NewStore(conn).SavePrices(ctx, more); err != nil {
			t.Fatal(err)
		}
		if n, _ := st.CountPrices(ctx, a.ID); n != 2 {
			t.Errorf("%d prices after saving on a bare connection, want 2", n)
		}
	})
}
