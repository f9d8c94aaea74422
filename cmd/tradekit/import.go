package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/marketdata/bulk"
)

// importKinds lists the kinds of import.
const importKinds = "prices, splits, dividends, industries, assets, indexes, constituents, profiles or fundamentals"

// importUsage is the help of `tradekit import`.
const importUsage = `usage: tradekit import <kind> [flags]

kinds:
  prices --symbol SYM --file PATH [--name NAME] [--type stock] [--currency USD] [--exchange SYMBOL] [--db DSN]
         daily OHLCV of one asset from CSV, creating the asset when unknown; re-imports update
  prices --file PATH [--workers N] [--type stock] [--currency USD] [--exchange SYMBOL] [--db DSN]
         daily OHLCV of many assets: a CSV with a symbol (or ticker) column, a directory of SYMBOL.csv
         files, .csv.gz of either, or Polygon day flat files; each file all or nothing
  splits|dividends --file PATH [--db DSN]
         corporate actions: symbol,date,ratio (a 4-for-1 split is 4) / symbol,exDate,amount
  industries|assets|indexes|constituents|profiles|fundamentals --file PATH [--format csv|json] [--db DSN]
         reference data from CSV or JSON (see marketdata/IMPORT.md)

Each file is imported in one transaction: a bad record stops the import and nothing is written.
Run 'tradekit import <kind> -h' for a kind's flags.`

// importCmd runs `tradekit import`.
func (e *env) importCmd(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return errors.New("import: give a kind: " + importKinds + " (see 'tradekit import -h')")
	}
	if isHelp(args[0]) {
		return e.help(importUsage)
	}
	kind, rest := args[0], args[1:]
	if kind == "prices" {
		return e.importPrices(ctx, rest)
	}
	if kind == "splits" || kind == "dividends" {
		return e.importActions(ctx, kind, rest)
	}
	for _, k := range marketdata.ReferenceKinds() {
		if string(k) == kind {
			return e.importReference(ctx, k, rest)
		}
	}
	return fmt.Errorf("import: unknown kind %q; give a kind: %s", kind, importKinds)
}

// importPrices runs `tradekit import prices`: one CSV file of daily bars
// for one symbol, in one transaction.
func (e *env) importPrices(ctx context.Context, args []string) error {
	fs, dsn := e.flags("import prices",
		"--symbol SYM --file PATH [--name NAME] [--type stock] [--currency USD] [--exchange SYMBOL] [--db DSN]\n"+
			"   or: tradekit import prices --file PATH [--workers N] [--type stock] [--currency USD] [--exchange SYMBOL] [--db DSN]",
		"Import daily OHLCV of one asset from CSV, in one transaction, creating the asset when the symbol is\n"+
			"unknown; dates already stored are updated. CSV: a header row naming date (YYYY-MM-DD), open, high,\n"+
			"low, close and volume in any order and case; other columns are ignored.\n"+
			"Without --symbol, PATH holds many assets: a CSV with a symbol (or ticker) column, a directory of\n"+
			"SYMBOL.csv files (searched recursively), a .csv.gz of either, or Polygon-style day flat files\n"+
			"(ticker, volume, open, close, high, low, window_start, ...). Each file is imported whole or not at\n"+
			"all; a bad file is reported with its line and the others are imported. Profiles are rebuilt once.")
	symbol := fs.String("symbol", "", "the asset's ticker symbol, `SYM`; the asset is created when unknown (omit: PATH names the symbols)")
	file := fs.String("file", "", "the CSV file's or the directory's `PATH` (required)")
	workers := fs.Int("workers", 0, "`N` goroutines reading and parsing, without --symbol (default: one per core)")
	name := fs.String("name", "", "`NAME` of a new asset (default: the symbol)")
	typ := fs.String("type", "stock", "`TYPE` of a new asset: stock, etf, fx, crypto or commodity")
	currency := fs.String("currency", "USD", "`CURRENCY` of a new asset")
	exchange := fs.String("exchange", "", "exchange `SYMBOL` of a new asset (default NYSE, CRYPTO for crypto)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the import to `FILE` (for go tool pprof)")
	fs.hidden = map[string]bool{"cpuprofile": true}
	if err := e.parse(fs, args); err != nil {
		return err
	}
	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			return fmt.Errorf("import prices: --cpuprofile: %w", err)
		}
		defer stop()
	}
	if *file == "" {
		return errors.New("import prices: --file is required")
	}
	if *workers < 0 {
		return fmt.Errorf("import prices: --workers must be 1 or more, or 0 for one per core; got %d", *workers)
	}
	if !marketdata.AssetType(*typ).IsValid() {
		return fmt.Errorf("import prices: --type %q: want stock, etf, fx, crypto or commodity", *typ)
	}
	if strings.TrimSpace(*symbol) == "" {
		if *name != "" {
			return errors.New("import prices: --name needs --symbol (without it, new assets are named after their symbol)")
		}
		return e.importPricesBulk(ctx, *dsn, *file, *workers, marketdata.PriceImport{
			Type: marketdata.AssetType(*typ), Currency: *currency, Exchange: *exchange})
	}
	start := time.Now()
	f, err := os.Open(*file)
	if err != nil {
		return fmt.Errorf("import prices: %w", err)
	}
	defer f.Close()
	parsed, err := marketdata.ParsePricesCSV(f)
	if err != nil {
		return fail("import prices: "+*file+": nothing imported", err)
	}
	bars := parsed.Prices
	db, err := e.open(ctx, *dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	var res marketdata.ImportResult
	err = marketdata.InConnTx(ctx, db, func(ctx context.Context, st *marketdata.Store) error {
		res, err = marketdata.ImportPrices(ctx, st, marketdata.PriceImport{
			Symbol: *symbol, Name: *name, Type: marketdata.AssetType(*typ), Currency: *currency, Exchange: *exchange,
		}, bars)
		return err
	})
	if err != nil {
		return fail("import prices: "+*file+": nothing imported", err)
	}
	created := ""
	if res.Created {
		created = " (new asset)"
	}
	fmt.Fprintf(e.stdout, "imported %s for %s%s from %s to %s in %s\n", plural(res.Rows, "row", "rows"),
		res.Asset.Symbol, created, res.From, res.To, time.Since(start).Round(time.Millisecond))
	if !parsed.HasVolume {
		fmt.Fprintf(e.stderr, "tradekit: note: %s has no volume column: its rows are imported with volume 0\n", *file)
	}
	e.warnNonTradingDays(res)
	e.buildProfilesAfterImport(ctx, db, func(sym string) bool { return sym == res.Asset.Symbol })
	return nil
}

// importReference runs `tradekit import <kind> --file PATH`: CSV or JSON
// reference data, in one transaction.
func (e *env) importReference(ctx context.Context, kind marketdata.ReferenceKind, args []string) error {
	fs, dsn := e.flags("import "+string(kind), "--file PATH [--format csv|json] [--db DSN]",
		"Import "+string(kind)+" from CSV or JSON, in one transaction; records with a known key are updated.\n"+
			"The columns are listed in marketdata/IMPORT.md.")
	file := fs.String("file", "", "`PATH` of a CSV file (header row) or a JSON file (array of objects; a .json name) (required)")
	format := fs.String("format", "", "the file's `FORMAT`, csv or json (default: from the file name)")
	if err := e.parse(fs, args); err != nil {
		return err
	}
	if *file == "" {
		return fmt.Errorf("import %s: --file is required", kind)
	}
	ft := marketdata.FormatOf(*file)
	switch *format {
	case "":
	case "csv", "json":
		ft = marketdata.Format(*format)
	default:
		return fmt.Errorf("import %s: --format %q: want csv or json", kind, *format)
	}
	f, err := os.Open(*file)
	if err != nil {
		return fmt.Errorf("import %s: %w", kind, err)
	}
	defer f.Close()
	db, err := e.open(ctx, *dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	var n int
	// One transaction of marketdata's (InConnTx): a bad record stores
	// nothing.
	err = marketdata.InConnTx(ctx, db, func(ctx context.Context, st *marketdata.Store) error {
		n, err = marketdata.ImportReference(ctx, st, kind, f, ft)
		return err
	})
	if err != nil {
		return fail("import "+string(kind)+": "+*file+": nothing imported", err)
	}
	fmt.Fprintf(e.stdout, "imported %s of %s\n", plural(n, "record", "records"), kind)
	return nil
}

// maxListedDays is how many non-trading days the import warning lists.
const maxListedDays = 5

// warnNonTradingDays prints one warning line to stderr when the import
// stored prices dated on days the asset's exchange does not trade.
func (e *env) warnNonTradingDays(res marketdata.ImportResult) {
	days := res.NonTradingDays
	if len(days) == 0 {
		return
	}
	cal, _ := res.Exchange.Calendar()
	list := make([]string, 0, maxListedDays+1)
	for _, d := range days[:min(len(days), maxListedDays)] {
		why := d.Weekday().String()
		if h, ok := cal.Holiday(d); ok {
			why = h.Name
		}
		list = append(list, fmt.Sprintf("%s (%s)", d, why))
	}
	if len(days) > maxListedDays {
		list = append(list, "…")
	}
	fmt.Fprintf(e.stderr, "tradekit: warning: %s dated on days %s does not trade, imported all the same: %s\n",
		plural(len(days), "row is", "rows are"), res.Exchange.Symbol, strings.Join(list, ", "))
}

// warnNonTradingDaysBulk prints one warning line to stderr when a bulk
// import stored rows dated on days their asset's exchange does not
// trade, as [env.warnNonTradingDays] does for one asset.
func (e *env) warnNonTradingDaysBulk(res bulk.Result) {
	if res.NonTradingRows == 0 {
		return
	}
	list := make([]string, 0, maxListedDays+1)
	for _, d := range res.NonTradingDays[:min(len(res.NonTradingDays), maxListedDays)] {
		why := d.Date.Weekday().String()
		if cal, ok := d.Exchange.Calendar(); ok {
			if h, ok := cal.Holiday(d.Date); ok {
				why = h.Name
			}
		}
		list = append(list, fmt.Sprintf("%s %s (%s, %s)", d.Symbol, d.Date, why, d.Exchange.Symbol))
	}
	if res.NonTradingRows > len(list) {
		list = append(list, "…")
	}
	fmt.Fprintf(e.stderr, "tradekit: warning: %s dated on days the asset's exchange does not trade, imported all the same: %s\n",
		plural(res.NonTradingRows, "row is", "rows are"), strings.Join(list, ", "))
}

// plural returns n followed by one or many, as n asks: "1 row", "2 rows".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// importActions runs `tradekit import splits|dividends --file PATH`: one
// CSV of corporate actions, in one transaction.
func (e *env) importActions(ctx context.Context, kind string, args []string) error {
	columns, ak := "symbol,date,ratio (a 4-for-1 split is 4)", marketdata.Split
	if kind == "dividends" {
		columns, ak = "symbol,exDate,amount (cash per share)", marketdata.Dividend
	}
	fs, dsn := e.flags("import "+kind, "--file PATH [--db DSN]",
		"Import "+kind+" from CSV, in one transaction: "+columns+".\n"+
			"The assets must exist; an action of the same asset and date is updated. Adjusted series\n"+
			"(adjusted=true in the API) are back-adjusted from these actions; the profiles of the assets\n"+
			"whose actions changed are rebuilt afterwards.")
	file := fs.String("file", "", "`PATH` of the CSV file (header row) (required)")
	if err := e.parse(fs, args); err != nil {
		return err
	}
	if *file == "" {
		return fmt.Errorf("import %s: --file is required", kind)
	}
	f, err := os.Open(*file)
	if err != nil {
		return fmt.Errorf("import %s: %w", kind, err)
	}
	defer f.Close()
	db, err := e.open(ctx, *dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	var n int
	// One transaction of marketdata's (InConnTx): a bad row stores
	// nothing.
	err = marketdata.InConnTx(ctx, db, func(ctx context.Context, st *marketdata.Store) error {
		n, err = marketdata.ImportActions(ctx, st, ak, f)
		return err
	})
	if err != nil {
		return fmt.Errorf("import %s: %s: nothing imported: %w", kind, *file, err)
	}
	fmt.Fprintf(e.stdout, "imported %s\n", plural(n, strings.TrimSuffix(kind, "s"), kind))
	// Profiles are computed from adjusted prices: saving actions bumped
	// the price versions of the assets they changed, so this rebuilds
	// those. Actions make no asset shorter or longer: none is named.
	e.buildProfilesAfterImport(ctx, db, nil)
	return nil
}
