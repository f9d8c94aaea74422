package marketdata_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/marketdata"
)

// TestPriceValidateNamesColumn: a price that is not positive is named by
// its column.
func TestPriceValidateNamesColumn(t *testing.T) {
	t.Parallel()
	ok := marketdata.Price{Date: date("2024-01-02"), Open: dec("10"), High: dec("11"), Low: dec("9"), Close: dec("10.5"), Volume: 1}
	tests := []struct {
		name string
		edit func(p *marketdata.Price)
		want string
	}{
		{"zero open", func(p *marketdata.Price) { p.Open = decimal.Zero }, "2024-01-02: open 0: prices must be positive"},
		{"negative high", func(p *marketdata.Price) { p.High = dec("-11") }, "2024-01-02: high -11: prices must be positive"},
		{"zero low", func(p *marketdata.Price) { p.Low = decimal.Zero }, "2024-01-02: low 0: prices must be positive"},
		{"negative close", func(p *marketdata.Price) { p.Close = dec("-0.5") }, "2024-01-02: close -0.5: prices must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := ok
			tt.edit(&p)
			err := p.Validate()
			if !errors.Is(err, tradekit.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate() = %v, want an ErrInvalid containing %q", err, tt.want)
			}
		})
	}
}

// TestReadPricesCSVErrors: a file without bars is an error; a date of
// the right form that does not exist says so, with its line.
func TestReadPricesCSVErrors(t *testing.T) {
	t.Parallel()
	const head = "date,open,high,low,close,volume\n"
	tests := []struct {
		name, in string
		line     int
		want     string
	}{
		{"header only", head, 0, "no rows after the header row"},
		{"header and blank lines", head + "\n\n", 0, "no rows after the header row"},
		{"30 February", head + "2024-01-02,1,1,1,1,1\n2024-02-30,1,1,1,1,1\n", 3, `date "2024-02-30": no such date`},
		{"29 February of a common year", head + "2023-02-29,1,1,1,1,1\n", 2, `date "2023-02-29": no such date`},
		{"month 13", head + "2024-13-01,1,1,1,1,1\n", 2, `date "2024-13-01": no such date`},
		{"day 00", head + "2024-01-00,1,1,1,1,1\n", 2, `date "2024-01-00": no such date`},
		{"another form", head + "03/01/2024,1,1,1,1,1\n", 2, `date "03/01/2024": want YYYY-MM-DD`},
		{"no zero padding", head + "2024-1-02,1,1,1,1,1\n", 2, `date "2024-1-02": want YYYY-MM-DD`},
		{"zero low", head + "2024-01-02,1,1,0,1,1\n", 2, "2024-01-02: low 0: prices must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bars, err := marketdata.ReadPricesCSV(strings.NewReader(tt.in))
			var pe *marketdata.ParseError
			if !errors.As(err, &pe) || !errors.Is(err, tradekit.ErrInvalid) {
				t.Fatalf("ReadPricesCSV = %v, %v; want a *ParseError", bars, err)
			}
			if pe.Line != tt.line || !strings.Contains(pe.Msg, tt.want) {
				t.Errorf("error %q (line %d), want line %d and %q", err, pe.Line, tt.line, tt.want)
			}
		})
	}
}

// TestImportPricesNoBars: importing no bars is an error and creates no
// asset.
func TestImportPricesNoBars(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		err := marketdata.InConnTx(ctx, db, func(ctx context.Context, st *marketdata.Store) error {
			_, err := marketdata.ImportPrices(ctx, st, marketdata.PriceImport{Symbol: "NONE"}, nil)
			return err
		})
		if !errors.Is(err, tradekit.ErrInvalid) {
			t.Errorf("ImportPrices(no bars) = %v, want ErrInvalid", err)
		}
		// Not even outside a transaction.
		st := marketdata.NewStore(db)
		if _, err := marketdata.ImportPrices(ctx, st, marketdata.PriceImport{Symbol: "NONE"}, []marketdata.Price{}); !errors.Is(err, tradekit.ErrInvalid) {
			t.Errorf("ImportPrices(empty bars) = %v, want ErrInvalid", err)
		}
		if n, err := st.CountAssets(ctx); err != nil || n != 0 {
			t.Errorf("%d assets (%v) after importing no bars, want 0", n, err)
		}
	})
}

// TestImportPricesNonTradingDays: the result lists the dates on which
// the asset's exchange does not trade, in date order; the bars are
// stored all the same.
func TestImportPricesNonTradingDays(t *testing.T) {
	t.Parallel()
	bar := func(d string) marketdata.Price {
		return marketdata.Price{Date: date(d), Open: dec("1"), High: dec("1"), Low: dec("1"), Close: dec("1"), Volume: 1}
	}
	// NYSE: 2024-01-01 is New Year's Day, 2024-01-06 a Saturday; LSE
	// trades on 2024-07-04 (Independence Day in the US).
	days := []string{"2024-01-06", "2024-01-02", "2024-01-01", "2024-07-04", "2024-01-05"}
	tests := []struct {
		name string
		spec marketdata.PriceImport
		want []calendar.Date
	}{
		{"NYSE", marketdata.PriceImport{Symbol: "NY"}, []calendar.Date{date("2024-01-01"), date("2024-01-06"), date("2024-07-04")}},
		{"LSE", marketdata.PriceImport{Symbol: "LN", Exchange: "LSE"}, []calendar.Date{date("2024-01-01"), date("2024-01-06")}},
		{"CRYPTO trades every day", marketdata.PriceImport{Symbol: "CC", Type: marketdata.Crypto}, nil},
	}
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				bars := make([]marketdata.Price, len(days))
				for i, d := range days {
					bars[i] = bar(d)
				}
				var res marketdata.ImportResult
				err := marketdata.InConnTx(ctx, db, func(ctx context.Context, st *marketdata.Store) error {
					var err error
					res, err = marketdata.ImportPrices(ctx, st, tt.spec, bars)
					return err
				})
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, res.NonTradingDays); diff != "" {
					t.Errorf("NonTradingDays (-want +got):\n%s", diff)
				}
				if res.Exchange.ID != res.Asset.ExchangeID || res.Exchange.Symbol == "" {
					t.Errorf("Exchange %+v, want the asset's", res.Exchange)
				}
				if n, _ := marketdata.NewStore(db).CountPrices(ctx, res.Asset.ID); n != len(days) || res.Rows != len(days) {
					t.Errorf("%d rows stored, %d reported; want %d", n, res.Rows, len(days))
				}
			})
		}
	})
}

// TestImportReferenceEmpty: a file with no records, CSV or JSON, is an
// error for every kind, and writes nothing.
func TestImportReferenceEmpty(t *testing.T) {
	t.Parallel()
	headers := map[marketdata.ReferenceKind]string{
		marketdata.RefIndustries:   "name,level,parent",
		marketdata.RefAssets:       "symbol,name,type,exchange,currency",
		marketdata.RefIndexes:      "symbol,name,description",
		marketdata.RefConstituents: "index,symbol,from,to",
		marketdata.RefProfiles:     "symbol,description,sector,industry,market_cap,website,logo_url",
		marketdata.RefFundamentals: "symbol,peRatio,eps,revenue,marketCap,dividendYield,beta,updatedAt",
	}
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		st := marketdata.NewStore(db)
		for _, kind := range marketdata.ReferenceKinds() {
			for _, in := range []struct {
				f         marketdata.Format
				body, msg string
			}{
				{marketdata.CSV, headers[kind] + "\n", "no rows after the header row"},
				{marketdata.CSV, headers[kind] + "\r\n\r\n", "no rows after the header row"},
				{marketdata.JSON, "[]", "no records in the JSON array"},
				{marketdata.JSON, "null", "no records in the JSON array"},
			} {
				n, err := marketdata.ImportReference(ctx, st, kind, strings.NewReader(in.body), in.f)
				var pe *marketdata.ParseError
				if !errors.As(err, &pe) || !strings.Contains(err.Error(), in.msg) {
					t.Errorf("%s from %s %q: %d, %v; want a *ParseError saying %q", kind, in.f, in.body, n, err, in.msg)
				}
			}
		}
		if n, _ := st.CountAssets(ctx); n != 0 {
			t.Errorf("%d assets", n)
		}
	})
}

// TestParsePricesCSVWithoutVolume checks that a file without a volume
// column reads with volume 0 and says so, and one with it says so too.
func TestParsePricesCSVWithoutVolume(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		csv       string
		hasVolume bool
		volume    int64
	}{
		{"Date,Open,High,Low,Close\n2026-01-20,1.1,1.2,1.0,1.15\n", false, 0},
		{"Date,Open,High,Low,Close,Volume\n2026-01-20,1.1,1.2,1.0,1.15,42\n", true, 42},
	} {
		p, err := marketdata.ParsePricesCSV(strings.NewReader(tt.csv))
		if err != nil || p.HasVolume != tt.hasVolume || len(p.Prices) != 1 || p.Prices[0].Volume != tt.volume {
			t.Errorf("ParsePricesCSV(%q) = %+v, %v; want HasVolume %v, volume %d", tt.csv, p, err, tt.hasVolume, tt.volume)
		}
	}
	if _, err := marketdata.ReadPricesCSV(strings.NewReader("Date,Open,High,Low,Close,Volume\n2026-01-20,1.1,1.2,1.0,1.15,\n")); err == nil {
		t.Error("an empty volume in a volume column was accepted")
	}
}
