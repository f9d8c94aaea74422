package bulk_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/database"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/marketdata/bulk"
)

// writeFiles writes name → content under a new temporary directory and
// returns it; names ending in .gz are gzipped.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		data := []byte(content)
		if strings.HasSuffix(name, ".gz") {
			var b bytes.Buffer
			zw := gzip.NewWriter(&b)
			zw.Write(data)
			zw.Close()
			data = b.Bytes()
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// stored returns the stored prices of symbol as "date open high low close volume" lines.
func stored(t *testing.T, db *bun.DB, symbol string) []string {
	t.Helper()
	ctx := context.Background()
	st := marketdata.NewStore(db)
	a, err := st.AssetBySymbol(ctx, symbol)
	if err != nil {
		t.Fatalf("asset %s: %v", symbol, err)
	}
	ps, err := st.Prices(ctx, a.ID, calendar.Date{}, calendar.Date{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range ps {
		out = append(out, strings.Join([]string{p.Date.String(), p.Open.String(), p.High.String(), p.Low.String(),
			p.Close.String(), strconv.FormatInt(p.Volume, 10)}, " "))
	}
	return out
}

const (
	multiCSV = "Symbol,Date,Open,High,Low,Close,Volume\n" +
		"acme,2024-01-02,10.50,11,10,10.75,100\n" +
		"BOLT,2024-01-02,5,5.5,4.5,5.25,200\n" +
		"ACME,2024-01-03,10.75,12,10.5,11.5,300\n"
	// A Polygon day flat file: 2024-01-02 05:00 UTC (midnight in New York).
	polygonCSV = "ticker,volume,open,close,high,low,window_start,transactions\n" +
		"ACME,1000,10,10.5,11,9.5,1704171600000000000,12\n" +
		"BOLT,2000,5,5.1,5.2,4.9,1704171600000000000,7\n"
)

func TestImportPricesBulk(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		files map[string]string
		path  string // under the directory; "" is the directory
		want  map[string][]string
	}{
		{"multi-symbol file", map[string]string{"all.csv": multiCSV}, "all.csv", map[string][]string{
			"ACME": {"2024-01-02 10.5 11 10 10.75 100", "2024-01-03 10.75 12 10.5 11.5 300"},
			"BOLT": {"2024-01-02 5 5.5 4.5 5.25 200"},
		}},
		{"gzipped multi-symbol file", map[string]string{"all.csv.gz": multiCSV}, "all.csv.gz", map[string][]string{
			"ACME": {"2024-01-02 10.5 11 10 10.75 100", "2024-01-03 10.75 12 10.5 11.5 300"},
			"BOLT": {"2024-01-02 5 5.5 4.5 5.25 200"},
		}},
		{"directory of SYMBOL.csv, one gzipped, one nested, other files ignored", map[string]string{
			"acme.csv":         "Date,Open,High,Low,Close,Adj Close,Volume\r\n2024-01-02,10,11,9,10.5,10.4,100\r\n",
			"sub/BRK.B.csv.gz": "date,open,high,low,close,volume\n2024-01-02,400,410,395,405,7\n\n",
			"README.txt":       "not prices",
		}, "", map[string][]string{
			"ACME":  {"2024-01-02 10 11 9 10.5 100"},
			"BRK.B": {"2024-01-02 400 410 395 405 7"},
		}},
		{"Polygon day flat files", map[string]string{
			"2024/01/2024-01-02.csv.gz": polygonCSV,
			"2024/01/2024-01-03.csv.gz": strings.ReplaceAll(polygonCSV, "1704171600000000000", "1704258000000000000"),
		}, "", map[string][]string{
			"ACME": {"2024-01-02 10 11 9.5 10.5 1000", "2024-01-03 10 11 9.5 10.5 1000"},
			"BOLT": {"2024-01-02 5 5.2 4.9 5.1 2000", "2024-01-03 5 5.2 4.9 5.1 2000"},
		}},
	}
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				dir := writeFiles(t, tt.files)
				if _, err := db.ExecContext(context.Background(), "DELETE FROM prices"); err != nil {
					t.Fatal(err)
				}
				res, err := bulk.Import(context.Background(), db, filepath.Join(dir, tt.path), bulk.Options{Workers: 3})
				if err != nil {
					t.Fatal(err)
				}
				rows := 0
				for sym, want := range tt.want {
					if diff := cmp.Diff(want, stored(t, db, sym)); diff != "" {
						t.Errorf("%s prices mismatch (-want +got):\n%s", sym, diff)
					}
					rows += len(want)
				}
				if res.Rows != int64(rows) || res.Assets != len(tt.want) {
					t.Errorf("result %+v, want %d rows of %d assets", res, rows, len(tt.want))
				}
			})
		}
	})
}

func TestImportPricesBulkBadRow(t *testing.T) {
	t.Parallel()
	good := "date,open,high,low,close,volume\n2024-01-02,10,11,9,10.5,100\n2024-01-03,10,11,9,10.5,100\n"
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		files := map[string]string{}
		for _, s := range []string{"A", "B", "C", "D", "E", "F"} {
			files[s+".csv"] = good
		}
		// The bad row comes after a good one: the file is rolled back whole,
		// and its new asset with it.
		files["C.csv"] = good + "2024-01-04,10,9,9,10.5,100\n"
		files["E.csv"] = good + "2024-01-02,10,11,9,10.5,100\n" // a repeated date
		dir := writeFiles(t, files)
		res, err := bulk.Import(ctx, db, dir, bulk.Options{Workers: 2})
		if !errors.Is(err, tradekit.ErrInvalid) {
			t.Fatalf("err = %v, want ErrInvalid", err)
		}
		var got []string
		for _, f := range res.Failed {
			var pe *marketdata.ParseError
			if !errors.As(f, &pe) {
				t.Errorf("%v: not a *ParseError", f)
			}
			got = append(got, filepath.Base(f.File)+": "+f.Err.Error())
		}
		want := []string{
			"C.csv: line 4: 2024-01-04: high 9 is below open 10 or close 10.5",
			"E.csv: line 4: E 2024-01-02 repeats an earlier row of the file",
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("failed files mismatch (-want +got):\n%s", diff)
		}
		if res.Files != 4 || res.Rows != 8 {
			t.Errorf("imported %d files, %d rows; want 4, 8", res.Files, res.Rows)
		}
		st := marketdata.NewStore(db)
		for _, s := range []string{"C", "E"} {
			if _, err := st.AssetBySymbol(ctx, s); !errors.Is(err, tradekit.ErrNotFound) {
				t.Errorf("asset %s: err = %v, want ErrNotFound (its file failed)", s, err)
			}
		}
		if got := stored(t, db, "F"); len(got) != 2 {
			t.Errorf("F: %d rows, want 2", len(got))
		}
	})
}

// TestImportPricesBulkVersions checks that a re-import of the same rows
// changes no price version, and a changed row raises its asset's only.
func TestImportPricesBulkVersions(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		dir := writeFiles(t, map[string]string{"all.csv": multiCSV})
		path := filepath.Join(dir, "all.csv")
		if _, err := bulk.Import(ctx, db, path, bulk.Options{}); err != nil {
			t.Fatal(err)
		}
		version := func(sym string) int64 {
			var v int64
			if err := db.NewRaw("SELECT prices_version FROM assets WHERE symbol = ?", sym).Scan(ctx, &v); err != nil {
				t.Fatal(err)
			}
			return v
		}
		a, b := version("ACME"), version("BOLT")
		res, err := bulk.Import(ctx, db, path, bulk.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Changed != 0 || version("ACME") != a || version("BOLT") != b {
			t.Errorf("re-import changed %d assets, versions %d %d, want 0 and %d %d", res.Changed, version("ACME"), version("BOLT"), a, b)
		}
		os.WriteFile(path, []byte(strings.Replace(multiCSV, "BOLT,2024-01-02,5,5.5,4.5,5.25", "BOLT,2024-01-02,5,5.5,4.5,5.3", 1)), 0o644)
		if res, err = bulk.Import(ctx, db, path, bulk.Options{}); err != nil {
			t.Fatal(err)
		}
		if version("BOLT") != b+1 {
			t.Errorf("BOLT version %d, want %d", version("BOLT"), b+1)
		}
		if db.Dialect().Name().String() == "pg" && version("ACME") != a {
			t.Errorf("ACME version %d, want %d (unchanged)", version("ACME"), a)
		}
	})
}

func TestFastDec(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"10", "10.50", "0.05", ".5", "5.", "007.250", "123456789012345", "1.000000000000000000"} {
		// The text must be decimal's canonical text.
		p := bulk.ExportParseFastDec(s)
		if p == "" {
			t.Errorf("fastDec(%q) refused", s)
			continue
		}
		if want := mustDecimal(t, s); p != want {
			t.Errorf("fastDec(%q) = %q, want %q", s, p, want)
		}
	}
	for _, s := range []string{"", ".", "-1", "1e3", "1234567890123456", "1,5"} {
		if p := bulk.ExportParseFastDec(s); p != "" {
			t.Errorf("fastDec(%q) = %q, want refused", s, p)
		}
	}
}

func mustDecimal(t *testing.T, s string) string {
	t.Helper()
	return decimal.RequireFromString(s).String()
}

// TestImportPricesBulkSameAssetTwice checks the two write paths on
// PostgreSQL meeting in one run: rows of a new asset are copied straight
// into prices in the first file that has it, and a later file with an
// overlapping date updates it (the later file wins); an asset stored
// without prices is copied straight too, and one with prices is upserted.
func TestImportPricesBulkSameAssetTwice(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		// OLD has prices before the run; BARE is stored without any.
		first := writeFiles(t, map[string]string{"old.csv": "symbol,date,open,high,low,close,volume\nOLD,2024-01-02,1,1,1,1,1\n"})
		if _, err := bulk.Import(ctx, db, filepath.Join(first, "old.csv"), bulk.Options{}); err != nil {
			t.Fatal(err)
		}
		st := marketdata.NewStore(db)
		bare := marketdata.Asset{Symbol: "BARE", Name: "Bare", Type: marketdata.Stock, Currency: "USD",
			ExchangeID: marketdata.ExchangeID("NYSE"), IsActive: true}
		if err := st.SaveAsset(ctx, &bare); err != nil {
			t.Fatal(err)
		}
		dir := writeFiles(t, map[string]string{
			"1.csv": "symbol,date,open,high,low,close,volume\nNEW,2024-01-02,10,11,9,10,100\nNEW,2024-01-03,10,11,9,10,100\n" +
				"BARE,2024-01-02,5,5,5,5,5\nOLD,2024-01-02,2,2,2,2,2\nOLD,2024-01-03,3,3,3,3,3\n",
			"2.csv": "symbol,date,open,high,low,close,volume\nNEW,2024-01-03,20,21,19,20,200\nNEW,2024-01-04,20,21,19,20,200\n",
		})
		res, err := bulk.Import(ctx, db, dir, bulk.Options{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		if res.Rows != 7 || res.Files != 2 {
			t.Errorf("imported %d rows from %d files, want 7 from 2", res.Rows, res.Files)
		}
		for sym, want := range map[string][]string{
			"NEW":  {"2024-01-02 10 11 9 10 100", "2024-01-03 20 21 19 20 200", "2024-01-04 20 21 19 20 200"},
			"BARE": {"2024-01-02 5 5 5 5 5"},
			"OLD":  {"2024-01-02 2 2 2 2 2", "2024-01-03 3 3 3 3 3"},
		} {
			if diff := cmp.Diff(want, stored(t, db, sym)); diff != "" {
				t.Errorf("%s closes mismatch (-want +got):\n%s", sym, diff)
			}
		}
	})
}

// TestImportPricesBulkPostgresRoles checks the import on PostgreSQL both as
// a superuser, which may turn the foreign-key triggers of prices off for
// its transactions, and as a role that may not, for which they run: the
// rows are the same, and the connection's session_replication_role is
// back to its default after the run.
func TestImportPricesBulkPostgresRoles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	adminDSN := dbtest.PostgresDSN(t)
	admin := dbtest.MustOpen(t, adminDSN)
	role := "tk_importer_" + strconv.FormatInt(time.Now().UnixNano()%1e9, 10)
	for _, q := range []string{
		"CREATE ROLE " + role + " LOGIN",
		"GRANT ALL ON SCHEMA public TO " + role,
		"GRANT ALL ON ALL TABLES IN SCHEMA public TO " + role,
	} {
		if _, err := admin.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	u, err := url.Parse(adminDSN)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(role)
	userDB, err := database.Open(ctx, u.String(), database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		userDB.Close()
		admin.ExecContext(ctx, "DROP OWNED BY "+role)
		admin.ExecContext(ctx, "DROP ROLE "+role)
	})
	for _, tt := range []struct {
		name string
		db   *bun.DB
		file string
	}{
		{"superuser", admin, multiCSV},
		{"ordinary role", userDB, strings.NewReplacer("acme", "ACNE", "ACME", "ACNE", "BOLT", "BOLU").Replace(multiCSV)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.db.SetMaxOpenConns(1) // the import's connection is the one checked after
			dir := writeFiles(t, map[string]string{"all.csv": tt.file})
			res, err := bulk.Import(ctx, tt.db, filepath.Join(dir, "all.csv"), bulk.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Rows != 3 || len(res.Created) != 2 {
				t.Errorf("imported %d rows, created %v; want 3 rows, 2 assets", res.Rows, res.Created)
			}
			want := []string{"2024-01-02 10.5 11 10 10.75 100", "2024-01-03 10.75 12 10.5 11.5 300"}
			if diff := cmp.Diff(want, stored(t, tt.db, res.Created[0])); diff != "" {
				t.Errorf("%s prices mismatch (-want +got):\n%s", res.Created[0], diff)
			}
			var mode string
			if err := tt.db.NewRaw("SHOW session_replication_role").Scan(ctx, &mode); err != nil || mode != "origin" {
				t.Errorf("session_replication_role after the import = %q, %v; want origin", mode, err)
			}
		})
	}
}

// TestImportPricesBulkBadFileOpensTransaction has bad files that open
// their transaction: the first file of the run, and, with CommitRows 1,
// every file. Each is rolled back alone.
func TestImportPricesBulkBadFileOpensTransaction(t *testing.T) {
	t.Parallel()
	good := "date,open,high,low,close,volume\n2024-01-02,10,11,9,10.5,100\n2024-01-03,10,11,9,10.5,100\n"
	bad := good + "2024-01-04,10,9,9,10.5,100\n"
	for _, tt := range []struct {
		name       string
		commitRows int
	}{{"one transaction", 0}, {"a transaction per file", 1}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dbtest.Each(t, func(t *testing.T, db *bun.DB) {
				ctx := context.Background()
				dir := writeFiles(t, map[string]string{"A.csv": bad, "B.csv": good, "C.csv": bad, "D.csv": good})
				res, err := bulk.Import(ctx, db, dir, bulk.Options{Workers: 1, CommitRows: tt.commitRows})
				if !errors.Is(err, tradekit.ErrInvalid) {
					t.Fatalf("err = %v, want ErrInvalid", err)
				}
				var failed []string
				for _, f := range res.Failed {
					failed = append(failed, filepath.Base(f.File))
				}
				if diff := cmp.Diff([]string{"A.csv", "C.csv"}, failed); diff != "" {
					t.Errorf("failed files mismatch (-want +got):\n%s", diff)
				}
				if res.Files != 2 || res.Rows != 4 || len(res.Created) != 2 {
					t.Errorf("imported %d files, %d rows, created %v; want 2, 4, [B D]", res.Files, res.Rows, res.Created)
				}
				st := marketdata.NewStore(db)
				for _, s := range []string{"A", "C"} {
					if _, err := st.AssetBySymbol(ctx, s); !errors.Is(err, tradekit.ErrNotFound) {
						t.Errorf("asset %s: err = %v, want ErrNotFound (its file failed)", s, err)
					}
				}
				for _, s := range []string{"B", "D"} {
					if got := stored(t, db, s); len(got) != 2 {
						t.Errorf("%s: %d rows, want 2", s, len(got))
					}
				}
			})
		})
	}
}

// TestBulkImportSnags checks what a newcomer's files meet in a bulk
// import (issue 40, point 10): rows on exchange holidays are counted and
// listed, a file without a volume column imports with volume 0 and is
// counted, and a semicolon-separated file gets the same error as
// ReadPricesCSV gives it.
func TestBulkImportSnags(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		dir := writeFiles(t, map[string]string{
			// 2026-01-19 is Martin Luther King Jr. Day, 2026-01-17 a Saturday.
			"hol.csv": "symbol,date,open,high,low,close,volume\n" +
				"HOLA,2026-01-16,1,2,0.5,1,5\nHOLA,2026-01-17,1,2,0.5,1,5\nHOLA,2026-01-19,1,2,0.5,1,5\nHOLA,2026-01-20,1,2,0.5,1,5\n" +
				"HOLB,2026-01-19,1,2,0.5,1,5\n",
			"FXA.csv": "date,open,high,low,close\n2026-01-20,1.1,1.2,1.0,1.15\n",
		})
		res, err := bulk.Import(ctx, db, dir, bulk.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if res.NonTradingRows != 3 || res.NoVolumeFiles != 1 {
			t.Errorf("NonTradingRows %d, NoVolumeFiles %d; want 3 and 1", res.NonTradingRows, res.NoVolumeFiles)
		}
		var got []string
		for _, d := range res.NonTradingDays {
			got = append(got, d.Symbol+" "+d.Date.String()+" "+d.Exchange.Symbol)
		}
		want := []string{"HOLA 2026-01-17 NYSE", "HOLA 2026-01-19 NYSE", "HOLB 2026-01-19 NYSE"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("NonTradingDays mismatch (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"2026-01-20 1.1 1.2 1 1.15 0"}, stored(t, db, "FXA")); diff != "" {
			t.Errorf("FXA mismatch (-want +got):\n%s", diff)
		}

		semi := "date;open;high;low;close;volume\n2026-01-20;1;2;0.5;1;5\n"
		_, readErr := marketdata.ReadPricesCSV(strings.NewReader(semi))
		res, err = bulk.Import(ctx, db, writeFiles(t, map[string]string{"SEMI.csv": semi}), bulk.Options{})
		if err == nil || len(res.Failed) != 1 || readErr == nil || res.Failed[0].Err.Error() != readErr.Error() ||
			!strings.Contains(readErr.Error(), `separated by ";"`) {
			t.Errorf("semicolons: bulk %v, ReadPricesCSV %v; want one error naming the delimiter", err, readErr)
		}
	})
}

// TestImportPricesBulkChangedFrom checks that a day appended to stored
// prices marks each asset's prices changed from that day, not from its
// first: the readers of the stored copies of the columns (the profile
// build after a day's import) then re-read one record per asset instead
// of the whole history. On main before this, the day's import marked every
// asset changed from the first day.
func TestImportPricesBulkChangedFrom(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		dir := writeFiles(t, map[string]string{
			"history.csv": multiCSV,
			"day.csv": "Symbol,Date,Open,High,Low,Close,Volume\n" +
				"ACME,2024-01-04,11.5,12,11,11.75,100\n" +
				"BOLT,2024-01-04,5.25,5.5,5,5.5,200\n",
			"again.csv": "Symbol,Date,Open,High,Low,Close,Volume\n" +
				"BOLT,2024-01-05,5.5,6,5,5.75,200\n" +
				"BOLT,2024-01-03,5.25,5.5,5,5.4,200\n",
		})
		if _, err := bulk.Import(ctx, db, filepath.Join(dir, "history.csv"), bulk.Options{}); err != nil {
			t.Fatal(err)
		}
		st := marketdata.NewStore(db)
		changedFrom := func(sym string) string {
			t.Helper()
			var d marketdata.SQLDate
			if err := db.NewRaw("SELECT prices_changed_from FROM assets WHERE symbol = ?", sym).Scan(ctx, &d); err != nil {
				t.Fatal(err)
			}
			if (d == marketdata.SQLDate{}) {
				return ""
			}
			return calendar.Date(d).String()
		}
		// Reading the columns stores each asset's copy and clears its mark.
		for _, sym := range []string{"ACME", "BOLT"} {
			a, err := st.AssetBySymbol(ctx, sym)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.PriceColumns(ctx, a.ID); err != nil {
				t.Fatal(err)
			}
			if got := changedFrom(sym); got != "" {
				t.Fatalf("%s changed from %q after its copy was stored, want none", sym, got)
			}
		}
		if _, err := bulk.Import(ctx, db, filepath.Join(dir, "day.csv"), bulk.Options{}); err != nil {
			t.Fatal(err)
		}
		for _, sym := range []string{"ACME", "BOLT"} {
			if got := changedFrom(sym); got != "2024-01-04" {
				t.Errorf("after a day's import %s changed from %q, want 2024-01-04", sym, got)
			}
		}
		// A file reaching back marks the asset from its earliest row.
		if _, err := bulk.Import(ctx, db, filepath.Join(dir, "again.csv"), bulk.Options{}); err != nil {
			t.Fatal(err)
		}
		if got := changedFrom("BOLT"); got != "2024-01-03" {
			t.Errorf("after a file reaching back BOLT changed from %q, want 2024-01-03", got)
		}
	})
}
