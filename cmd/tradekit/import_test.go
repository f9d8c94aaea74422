package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/database"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/marketdata"
)

// writeFile writes content to name in a temporary directory.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// storeOf opens dsn for checks and returns its market-data store.
func storeOf(t *testing.T, dsn string) *marketdata.Store {
	t.Helper()
	db, err := database.Open(context.Background(), dsn, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return marketdata.NewStore(db)
}

// storeDB opens the database of dsn for a test's own queries.
func storeDB(t *testing.T, dsn string) *bun.DB {
	t.Helper()
	db, err := database.Open(context.Background(), dsn, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// bar is a price row as text, for comparisons.
type bar struct {
	Date, Open, High, Low, Close string
	Volume                       int64
}

func bars(t *testing.T, st *marketdata.Store, symbol string) []bar {
	t.Helper()
	ctx := context.Background()
	a, err := st.AssetBySymbol(ctx, symbol)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := st.Prices(ctx, a.ID, calendar.Date{}, calendar.Date{})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]bar, len(ps))
	for i, p := range ps {
		out[i] = bar{p.Date.String(), p.Open.String(), p.High.String(), p.Low.String(), p.Close.String(), p.Volume}
	}
	return out
}

func TestImportPrices(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, csv string
		want      []bar
	}{
		{"plain", "date,open,high,low,close,volume\n2024-01-02,10,11,9.5,10.5,1000\n2024-01-03,10.5,10.75,10.01,10.02,0\n",
			[]bar{{"2024-01-02", "10", "11", "9.5", "10.5", 1000}, {"2024-01-03", "10.5", "10.75", "10.01", "10.02", 0}}},
		{"yahoo header with adj close and CRLF", "Date,Open,High,Low,Close,Adj Close,Volume\r\n2024-01-02,187.149994,188.440002,183.889999,185.639999,184.938217,82488700\r\n",
			[]bar{{"2024-01-02", "187.149994", "188.440002", "183.889999", "185.639999", 82488700}}},
		{"reordered upper-case columns, BOM, blank line", "\ufeffVOLUME,CLOSE,LOW,HIGH,OPEN,DATE\n5,2,1,3,2,2024-02-29\n\n",
			[]bar{{"2024-02-29", "2", "3", "1", "2", 5}}},
		{"volume written as a whole decimal", "date,open,high,low,close,volume\n2024-01-02,1,1,1,1,1200.0\n",
			[]bar{{"2024-01-02", "1", "1", "1", "1", 1200}}},
	}
	dbtest.EachDSN(t, func(t *testing.T, dsn string) {
		env := map[string]string{"TRADEKIT_DB": dsn}
		st := storeOf(t, dsn)
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				sym := "T" + string(rune('A'+i))
				out, err := cli(t, env, "import", "prices", "--symbol", strings.ToLower(sym), "--file", writeFile(t, "p.csv", tt.csv))
				if err != nil {
					t.Fatal(err)
				}
				if !strings.HasPrefix(out, "imported "+plural(len(tt.want), "row", "rows")+" for "+sym+" (new asset)") {
					t.Errorf("summary %q", out)
				}
				if diff := cmp.Diff(tt.want, bars(t, st, sym)); diff != "" {
					t.Errorf("stored bars (-want +got):\n%s", diff)
				}
			})
		}
		t.Run("new asset flags", func(t *testing.T) {
			_, err := cli(t, env, "import", "prices", "--symbol", "zz-usd", "--name", "Zed", "--type", "crypto", "--currency", "usd",
				"--file", writeFile(t, "p.csv", "date,open,high,low,close,volume\n2024-01-06,1,1,1,1,1\n"))
			if err != nil {
				t.Fatal(err)
			}
			a, err := st.AssetBySymbol(context.Background(), "ZZ-USD")
			if err != nil {
				t.Fatal(err)
			}
			if a.Name != "Zed" || a.Type != marketdata.Crypto || a.Currency != "USD" || a.ExchangeID != marketdata.ExchangeID("CRYPTO") {
				t.Errorf("asset %+v", a)
			}
		})
	})
}

func TestImportPricesBadRow(t *testing.T) {
	t.Parallel()
	head := "date,open,high,low,close,volume\n2024-01-02,10,11,9,10,100\n"
	tests := []struct{ name, csv, wantMsg string }{
		{"high below close", head + "2024-01-03,10,10.5,9,11,100\n", "line 3: "},
		{"low above open", head + "2024-01-03,10,12,10.5,11,100\n", "line 3: "},
		{"negative volume", head + "2024-01-03,10,12,9,11,-1\n", "line 3: "},
		{"zero price", head + "2024-01-03,0,12,0,11,1\n", "line 3: 2024-01-03: open 0: prices must be positive"},
		{"zero low", head + "2024-01-03,10,12,0,11,1\n", "line 3: 2024-01-03: low 0: prices must be positive"},
		{"bad date", head + "2024-01-03,10,12,9,11,1\n03/01/2024,10,12,9,11,1\n", `line 4: date "03/01/2024": want YYYY-MM-DD`},
		{"impossible date", head + "2024-02-30,10,12,9,11,1\n", `line 3: date "2024-02-30": no such date`},
		{"not a number", head + "2024-01-03,10,12,nine,11,1\n", "line 3: low"},
		{"null row", head + "2024-01-03,null,null,null,null,null\n", "line 3: "},
		{"duplicate date", head + "2024-01-02,10,12,9,11,1\n", "line 3: date 2024-01-02 repeats line 2"},
		{"missing field", head + "2024-01-03,10,12,9,11\n", "line 3: "},
		{"missing column", "date,open,high,low,volume\n2024-01-02,1,1,1,1\n", "line 1: header has no \"close\" column"},
		{"empty file", "", "line 1: empty file"},
		{"header only", "date,open,high,low,close,volume\n", "p.csv: nothing imported: no rows after the header row"},
		{"header and blank lines", "Date,Open,High,Low,Close,Adj Close,Volume\r\n\r\n\r\n", "no rows after the header row"},
	}
	dbtest.EachDSN(t, func(t *testing.T, dsn string) {
		env := map[string]string{"TRADEKIT_DB": dsn}
		st := storeOf(t, dsn)
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := cli(t, env, "import", "prices", "--symbol", "BAD", "--file", writeFile(t, "p.csv", tt.csv))
				if err == nil || !strings.Contains(err.Error(), tt.wantMsg) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantMsg)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error is not one line: %q", err)
				}
				if n, _ := st.CountAssets(context.Background()); n != 0 {
					t.Errorf("%d assets after a failed import, want 0", n)
				}
			})
		}
	})
}

func TestImportPricesUpsert(t *testing.T) {
	t.Parallel()
	dbtest.EachDSN(t, func(t *testing.T, dsn string) {
		env := map[string]string{"TRADEKIT_DB": dsn}
		st := storeOf(t, dsn)
		ctx := context.Background()
		first := "date,open,high,low,close,volume\n2024-01-02,10,11,9,10,100\n2024-01-03,10,11,9,10,100\n"
		if _, err := cli(t, env, "import", "prices", "--symbol", "UPS", "--file", writeFile(t, "a.csv", first)); err != nil {
			t.Fatal(err)
		}
		a, _ := st.AssetBySymbol(ctx, "UPS")
		before, err := st.LatestPrice(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		// The second file repeats 2024-01-03 with new values and adds a day.
		second := "date,open,high,low,close,volume\n2024-01-03,20,21,19,20.5,200\n2024-01-04,1,2,0.5,1.5,7\n"
		out, err := cli(t, env, "import", "prices", "--symbol", "ups", "--file", writeFile(t, "b.csv", second))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(out, "imported 2 rows for UPS from 2024-01-03 to 2024-01-04") {
			t.Errorf("summary %q", out)
		}
		want := []bar{{"2024-01-02", "10", "11", "9", "10", 100}, {"2024-01-03", "20", "21", "19", "20.5", 200}, {"2024-01-04", "1", "2", "0.5", "1.5", 7}}
		if diff := cmp.Diff(want, bars(t, st, "UPS")); diff != "" {
			t.Errorf("after re-import (-want +got):\n%s", diff)
		}
		after, err := st.Price(ctx, before.ID)
		if err != nil || after.Date != before.Date {
			t.Errorf("the updated record lost its id: %v %v", after, err)
		}
		// Importing the same file again changes nothing.
		if _, err := cli(t, env, "import", "prices", "--symbol", "UPS", "--file", writeFile(t, "b.csv", second)); err != nil {
			t.Fatal(err)
		}
		if n, _ := st.CountPrices(ctx, a.ID); n != 3 {
			t.Errorf("%d rows after importing twice, want 3", n)
		}
	})
}

func TestImportReference(t *testing.T) {
	t.Parallel()
	files := []struct{ kind, name, content string }{
		{"industries", "industries.csv", "name,level,parent\nApplication Software,industry,Software\nSoftware,industry_group,Technology\nTechnology,sector,\n"},
		{"assets", "assets.json", `[{"symbol":"abc","name":"ABC Corp","type":"stock","exchange":"nasdaq","currency":"USD","industry":"Application Software"},
			{"symbol":"XYZ","name":"XYZ plc","type":"stock","exchange":"LSE","currency":"GBP","isActive":false}]`},
		{"indexes", "indexes.csv", "symbol,name,description\nTK2,Two,Two stocks\n"},
		{"constituents", "members.csv", "index,symbol,from,to\nTK2,ABC,2020-01-02,\nTK2,XYZ,2020-01-02,2023-06-01\n"},
		{"profiles", "profiles.csv", "symbol,description,sector,industry,market_cap,website,logo_url\nABC,Makes ABCs.,Technology,Application Software,1500000000,https://abc.example,https://abc.example/l.png\n"},
		{"fundamentals", "f.json", `[{"symbol":"ABC","peRatio":18.5,"eps":"2.10","revenue":730000000,"marketCap":1500000000,"dividendYield":0.012,"beta":1.1,"updatedAt":"2026-10-30"}]`},
	}
	dbtest.EachDSN(t, func(t *testing.T, dsn string) {
		env := map[string]string{"TRADEKIT_DB": dsn}
		st := storeOf(t, dsn)
		ctx := context.Background()
		for _, f := range files {
			if _, err := cli(t, env, "import", f.kind, "--file", writeFile(t, f.name, f.content)); err != nil {
				t.Fatalf("import %s: %v", f.kind, err)
			}
		}
		abc, err := st.AssetBySymbol(ctx, "ABC")
		if err != nil {
			t.Fatal(err)
		}
		sector, _ := st.IndustryByName(ctx, marketdata.Sector, "technology")
		if n, err := st.Industry(ctx, sector.ID); err != nil || n.AssetCount != 1 {
			t.Errorf("sector %+v, %v: want an asset count of 1", n, err)
		}
		x, _ := st.IndexBySymbol(ctx, "tk2")
		for date, want := range map[string]int{"2021-01-01": 2, "2023-06-01": 1, "2019-01-01": 0} {
			d, _ := calendar.ParseDate(date)
			as, err := st.IndexAssets(ctx, x.ID, d)
			if err != nil || len(as) != want {
				t.Errorf("constituents on %s: %d (%v), want %d", date, len(as), err, want)
			}
		}
		f, err := st.Fundamentals(ctx, abc.ID)
		if err != nil || !f.EPS.Equal(decimal.RequireFromString("2.1")) || !f.DividendYield.Equal(decimal.RequireFromString("0.012")) {
			t.Errorf("fundamentals %+v %v", f, err)
		}
		xyz, _ := st.AssetBySymbol(ctx, "xyz")
		if xyz.IsActive || xyz.Currency != "GBP" {
			t.Errorf("XYZ %+v", xyz)
		}

		// One record: the summary says so.
		out, err := cli(t, env, "import", "indexes", "--file", writeFile(t, "one.csv", "symbol,name\nTK1,One\n"))
		if err != nil || out != "imported 1 record of indexes\n" {
			t.Errorf("one index: %v, summary %q", err, out)
		}

		// A file with no records is an error, of every kind.
		for _, f := range files {
			for name, content := range map[string]string{
				"empty.csv":  strings.SplitAfter(f.content, "\n")[0],
				"empty.json": "[]",
			} {
				if strings.HasSuffix(f.name, ".json") && name == "empty.csv" {
					continue // the JSON files have no header row
				}
				_, err := cli(t, env, "import", f.kind, "--file", writeFile(t, name, content))
				if err == nil || !strings.Contains(err.Error(), "nothing imported: no r") {
					t.Errorf("import %s of %s %q: error %v, want no rows or records", f.kind, name, content, err)
				}
			}
		}

		// A bad record names its line and writes nothing.
		_, err = cli(t, env, "import", "assets", "--file", writeFile(t, "a.csv",
			"symbol,name,type,exchange,currency\nNEW1,New One,stock,NYSE,USD\nNEW2,New Two,stock,MOON,USD\n"))
		if err == nil || !strings.Contains(err.Error(), "line 3: exchange \"MOON\"") {
			t.Errorf("error %v, want line 3 and the exchange", err)
		}
		if _, err := st.AssetBySymbol(ctx, "NEW1"); err == nil {
			t.Error("NEW1 was written by a failed import")
		}
		_, err = cli(t, env, "import", "fundamentals", "--file", writeFile(t, "f.json", `[{"symbol":"ABC","peRatio":"x","eps":1,"revenue":1,"marketCap":1,"dividendYield":0,"beta":1,"updatedAt":"2026-10-30"}]`))
		if err == nil || !strings.Contains(err.Error(), "record 1: peratio") {
			t.Errorf("error %v, want record 1 and the field", err)
		}
	})
}

// TestImportPricesNonTradingDays: rows dated on days the asset's exchange
// does not trade are imported, with one warning line on stderr that
// counts them and lists the first few; an exchange that trades every day
// gives no warning.
func TestImportPricesNonTradingDays(t *testing.T) {
	t.Parallel()
	head := "date,open,high,low,close,volume\n"
	row := func(d string) string { return d + ",10,11,9,10,100\n" }
	tests := []struct {
		name  string
		args  []string
		csv   string
		want  string // the warning line; "" for none
		wantN int
	}{
		{"NYSE weekend and holiday", []string{"--symbol", "WKND"},
			head + row("2024-01-02") + row("2024-01-06") + row("2024-12-25") + row("2024-01-07"),
			"tradekit: warning: 3 rows are dated on days NYSE does not trade, imported all the same: " +
				"2024-01-06 (Saturday), 2024-01-07 (Sunday), 2024-12-25 (Christmas Day)\n", 4},
		{"one row", []string{"--symbol", "ONE", "--exchange", "LSE"}, head + row("2024-12-26"),
			"tradekit: warning: 1 row is dated on days LSE does not trade, imported all the same: 2024-12-26 (Boxing Day)\n", 1},
		{"more than five", []string{"--symbol", "MANY"},
			head + row("2024-01-06") + row("2024-01-07") + row("2024-01-13") + row("2024-01-14") + row("2024-01-20") + row("2024-01-21") + row("2024-01-22"),
			"tradekit: warning: 6 rows are dated on days NYSE does not trade, imported all the same: " +
				"2024-01-06 (Saturday), 2024-01-07 (Sunday), 2024-01-13 (Saturday), 2024-01-14 (Sunday), 2024-01-20 (Saturday), …\n", 7},
		{"trading days only", []string{"--symbol", "WEEK"}, head + row("2024-01-02") + row("2024-01-03"), "", 2},
		{"crypto trades every day", []string{"--symbol", "COIN", "--type", "crypto"}, head + row("2024-01-06") + row("2024-12-25"), "", 2},
	}
	dbtest.EachDSN(t, func(t *testing.T, dsn string) {
		env := map[string]string{"TRADEKIT_DB": dsn}
		st := storeOf(t, dsn)
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				args := append([]string{"import", "prices", "--file", writeFile(t, "p.csv", tt.csv)}, tt.args...)
				stdout, stderr, err := cli2(t, env, args...)
				if err != nil {
					t.Fatal(err)
				}
				warnings := ""
				for _, line := range strings.SplitAfter(stderr, "\n") {
					if strings.Contains(line, "warning") {
						warnings += line
					}
				}
				if warnings != tt.want {
					t.Errorf("warnings on stderr:\n%q\nwant\n%q", warnings, tt.want)
				}
				if !strings.HasPrefix(stdout, "imported "+plural(tt.wantN, "row", "rows")+" for ") {
					t.Errorf("summary %q", stdout)
				}
				if got := bars(t, st, tt.args[1]); len(got) != tt.wantN {
					t.Errorf("%d rows stored, want %d", len(got), tt.wantN)
				}
			})
		}
	})
}

// TestSeed seeds twice through the CLI: the second run changes nothing;
// and serve's seeding loads an empty database only (that serve then warns
// about synthetic prices is TestServeWarnsAboutDemoData's).
func TestSeed(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("loads the whole demo data set")
	}
	// The two databases in parallel: SQLite's load runs in this process
	// and PostgreSQL's mostly in the server's.
	dbtest.EachDSNParallel(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		vars := map[string]string{"TRADEKIT_DB": dsn}
		var log bytes.Buffer
		e := &env{getenv: func(k string) string { return vars[k] }, stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}
		if err := e.seedIfEmpty(ctx, dsn, slog.New(slog.NewTextHandler(&log, nil))); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(log.String(), "demo data loaded") {
			t.Errorf("serve's log does not say it loaded the demo data:\n%s", log.String())
		}
		st := storeOf(t, dsn)
		n, err := st.CountAssets(ctx)
		if err != nil || n < 60 {
			t.Fatalf("%d assets after seeding (%v)", n, err)
		}
		a, err := st.AssetBySymbol(ctx, "HLXI")
		if err != nil {
			t.Fatal(err)
		}
		before, _ := st.LatestPrice(ctx, a.ID)
		count, _ := st.CountPrices(ctx, a.ID)

		out, err := cli(t, vars, "seed")
		if err != nil {
			t.Fatal(err)
		}
		if want := "the demo data set is loaded already: nothing to do (its prices are SYNTHETIC)\n"; out != want {
			t.Errorf("seed on a seeded database printed %q, want %q", out, want)
		}
		after, _ := st.LatestPrice(ctx, a.ID)
		count2, _ := st.CountPrices(ctx, a.ID)
		if n2, _ := st.CountAssets(ctx); n2 != n || count2 != count || !cmp.Equal(before, after) {
			t.Errorf("seeding again changed the data: %d/%d assets, %d/%d prices, %v/%v", n, n2, count, count2, before, after)
		}
		log.Reset()
		if err := e.seedIfEmpty(ctx, dsn, slog.New(slog.NewTextHandler(&log, nil))); err != nil || log.Len() != 0 {
			t.Errorf("seedIfEmpty on a seeded database: %v, log %q", err, log.String())
		}
	})
}

func TestImportPricesBulkCLI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := "date,open,high,low,close,volume\n2024-01-02,10,11,9,10.5,100\n"
	for name, content := range map[string]string{"AAA.csv": good, "BBB.csv": good + "2024-01-03,10,11,9,x,1\n", "CCC.csv": good} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dbtest.EachDSN(t, func(t *testing.T, dsn string) {
		stdout, stderr, err := cli2(t, nil, "import", "prices", "--file", dir, "--db", dsn)
		if err == nil || !strings.Contains(err.Error(), "1 of 3 files not imported") {
			t.Fatalf("err = %v, want 1 of 3 files not imported", err)
		}
		if want := filepath.Join(dir, "BBB.csv") + ": nothing imported from this file: line 3: close \"x\": want a decimal number"; !strings.Contains(stderr, want) {
			t.Errorf("stderr %q lacks %q", stderr, want)
		}
		if !strings.HasPrefix(stdout, "imported 2 rows for 2 assets (2 new) from 2 files from 2024-01-02 to 2024-01-02 in ") {
			t.Errorf("stdout %q", stdout)
		}
		st := storeOf(t, dsn)
		if diff := cmp.Diff([]bar{{"2024-01-02", "10", "11", "9", "10.5", 100}}, bars(t, st, "CCC")); diff != "" {
			t.Errorf("CCC mismatch (-want +got):\n%s", diff)
		}
	})
}

// TestImportSnags runs the imports a newcomer tries (issue 40, point 10)
// and compares their stdout and stderr: the bulk form warns about rows on
// exchange holidays as --symbol does; a semicolon-separated file gets one
// error naming the delimiter, the same in every mode, and no summary of
// nothing imported; a file without volumes imports with volume 0 and
// says so once; --workers below 0 is refused.
func TestImportSnags(t *testing.T) {
	t.Parallel()
	semi := "symbol;date;open;high;low;close;volume\nSEMI;2026-01-20;1;2;0.5;1;5\n"
	semiHeader := `the header "symbol;date;open;high;low;close;volume" is one column: ` +
		`the file seems separated by ";", not commas; save it as comma-separated CSV`
	semiFile := writeFile(t, "semi.csv", semi)
	semiDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(semiDir, "SEMI.csv"), []byte(semi), 0o644); err != nil {
		t.Fatal(err)
	}
	dbtest.EachDSN(t, func(t *testing.T, dsn string) {
		env := map[string]string{"TRADEKIT_DB": dsn}
		for _, tt := range []struct {
			name        string
			args        []string
			path, named string // --file, and the file the error names
		}{
			{"--symbol", []string{"--symbol", "SEMI"}, semiFile, semiFile},
			{"bulk file", nil, semiFile, semiFile},
			{"bulk directory", nil, semiDir, filepath.Join(semiDir, "SEMI.csv")},
		} {
			stdout, stderr, status := cliMain(t, env, "", append([]string{"import", "prices", "--file", tt.path}, tt.args...)...)
			want := "tradekit: import prices: " + tt.named + ": nothing imported: line 1: " + semiHeader + "\n"
			if status != 1 || stdout != "" || stderr != want {
				t.Errorf("%s: status %d, stdout %q, stderr %q; want 1, nothing and %q", tt.name, status, stdout, stderr, want)
			}
		}

		// 2026-01-19 is Martin Luther King Jr. Day; no volume column.
		hol := writeFile(t, "hol.csv", "symbol,date,open,high,low,close\nHOL,2026-01-19,1,2,0.5,1\nHOL,2026-01-20,1,2,0.5,1\n")
		stdout, stderr, status := cliMain(t, env, "", "import", "prices", "--file", hol)
		wantErr := []string{
			"tradekit: note: 1 file has no volume column: its rows are imported with volume 0",
			"tradekit: warning: 1 row is dated on days the asset's exchange does not trade, imported all the same: " +
				"HOL 2026-01-19 (Martin Luther King Jr. Day, NYSE)",
			"profiles: 0 built, 0 up to date, 1 too short for a profile (HOL: 2 daily bars, 253 needed); done in ",
		}
		if status != 0 || !strings.HasPrefix(stdout, "imported 2 rows for 1 asset (1 new) from 1 file from 2026-01-19 to 2026-01-20 in ") ||
			!linesStartWith(stderr, wantErr) {
			t.Errorf("bulk: status %d, stdout %q, stderr:\n%s\nwant lines starting with:\n%s", status, stdout, stderr, strings.Join(wantErr, "\n"))
		}
		one := writeFile(t, "fx.csv", "date,open,high,low,close\n2026-01-19,1.1,1.2,1.0,1.15\n")
		_, stderr, status = cliMain(t, env, "", "import", "prices", "--symbol", "EURUSD", "--file", one)
		wantErr = []string{
			"tradekit: note: " + one + " has no volume column: its rows are imported with volume 0",
			"tradekit: warning: 1 row is dated on days NYSE does not trade, imported all the same: 2026-01-19 (Martin Luther King Jr. Day)",
			// HOL is short too, but not this import's: counted, not named.
			"profiles: 0 built, 0 up to date, 2 too short for a profile (EURUSD: 1 daily bars, 253 needed, and 1 more that 'tradekit profiles build' lists); done in ",
		}
		if status != 0 || !linesStartWith(stderr, wantErr) {
			t.Errorf("--symbol: status %d, stderr:\n%s\nwant lines starting with:\n%s", status, stderr, strings.Join(wantErr, "\n"))
		}
		for _, sym := range []string{"HOL", "EURUSD"} {
			var vols []int64
			if err := storeDB(t, dsn).NewRaw("SELECT p.volume FROM prices p JOIN assets a ON a.id = p.asset_id WHERE a.symbol = ?", sym).
				Scan(context.Background(), &vols); err != nil {
				t.Fatal(err)
			}
			if len(vols) == 0 || slices.ContainsFunc(vols, func(v int64) bool { return v != 0 }) {
				t.Errorf("%s volumes %v, want zeros", sym, vols)
			}
		}

		_, stderr, status = cliMain(t, env, "", "import", "prices", "--file", hol, "--workers", "-3")
		if want := "tradekit: import prices: --workers must be 1 or more, or 0 for one per core; got -3\n"; status != 1 || stderr != want {
			t.Errorf("--workers -3: status %d, stderr %q, want %q", status, stderr, want)
		}
	})
}

// linesStartWith reports whether text has as many lines as prefixes, each
// starting with its prefix.
func linesStartWith(text string, prefixes []string) bool {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) != len(prefixes) {
		return false
	}
	for i, p := range prefixes {
		if !strings.HasPrefix(lines[i], p) {
			return false
		}
	}
	return true
}
