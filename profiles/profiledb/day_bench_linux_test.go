package profiledb_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/alerts"
	"github.com/tradekit/tradekit/billing"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/marketdata/bulk"
	"github.com/tradekit/tradekit/profiles/profiledb"
)

// splitLastDays moves the last k rows of each symbol of the market CSV at
// path (rows grouped by symbol, oldest first, as writeMarketCSV writes
// them) to k one-day files of the same layout, and returns the history
// and the days, oldest first: the file a daily feed such as Polygon's
// grouped daily bars gives, one row per symbol.
func splitLastDays(tb testing.TB, path string, k int) (history string, days []string) {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	dir := tb.TempDir()
	lines := bytes.SplitAfter(data, []byte("\n"))
	h := bytes.NewBuffer(slices.Clone(lines[0]))
	d := make([]*bytes.Buffer, k)
	for j := range d {
		d[j] = bytes.NewBuffer(slices.Clone(lines[0]))
	}
	var rows [][]byte // the current symbol's rows
	flush := func() {
		cut := max(0, len(rows)-k)
		for _, r := range rows[:cut] {
			h.Write(r)
		}
		for j, r := range rows[cut:] {
			d[j+k-len(rows[cut:])].Write(r)
		}
		rows = rows[:0]
	}
	for i := 1; i < len(lines) && len(lines[i]) > 0; i++ {
		sym, _, _ := bytes.Cut(lines[i], []byte(","))
		if len(rows) > 0 {
			if prev, _, _ := bytes.Cut(rows[0], []byte(",")); !bytes.Equal(prev, sym) {
				flush()
			}
		}
		rows = append(rows, lines[i])
	}
	flush()
	history = filepath.Join(dir, "history.csv")
	if err := os.WriteFile(history, h.Bytes(), 0o600); err != nil {
		tb.Fatal(err)
	}
	for j, b := range d {
		p := filepath.Join(dir, fmt.Sprintf("day%d.csv", j+1))
		if err := os.WriteFile(p, b.Bytes(), 0o600); err != nil {
			tb.Fatal(err)
		}
		days = append(days, p)
	}
	return history, days
}

// dayPrices reads a one-day file of splitLastDays as prices of the
// stored assets.
func dayPrices(tb testing.TB, md *marketdata.Store, path string) []marketdata.Price {
	tb.Helper()
	assets, err := md.Assets(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	ids := map[string]uuid.UUID{}
	for _, a := range assets {
		ids[a.Symbol] = a.ID
	}
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	var out []marketdata.Price
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n")[1:] {
		f := strings.Split(l, ",") // symbol,date,open,high,low,close,volume
		d, err := calendar.ParseDate(f[1])
		if err != nil {
			tb.Fatal(err)
		}
		v, _ := strconv.ParseInt(f[6], 10, 64)
		out = append(out, marketdata.Price{AssetID: ids[f[0]], Date: d, Open: decimal.RequireFromString(f[2]),
			High: decimal.RequireFromString(f[3]), Low: decimal.RequireFromString(f[4]),
			Close: decimal.RequireFromString(f[5]), Volume: v})
	}
	return out
}

// BenchmarkDayUpdate is the daily update of a whole market: N assets ×
// 2,520 daily bars are stored, with their profiles (and states) built and
// one alert per asset (a crossover of two moving averages), all untimed;
// then one op imports one new day, N rows, updates the profiles
// (profiledb.Build, incrementally from the stored states), and runs the
// alert evaluation the new prices call for (alerts.Service.Evaluate), on
// SQLite and on PostgreSQL. Two days are imported in turn: the first as
// a file by the bulk importer (bulk, bulk.Import, what
// `tradekit import prices --file` runs), the second with
// marketdata.Store.SavePrices (store). N is 1,000, or
// $TRADEKIT_BENCH_ASSETS. It reports the seconds of each step (import-s,
// profiles-s with its load-s, alerts-s), the CPU seconds of this process
// for the whole op (cpu-s; the PostgreSQL server is another process, not
// counted), and fails unless every profile was updated incrementally.
// Run it with -benchtime=1x (a second op would import the same day
// again):
//
//	TRADEKIT_BENCH_ASSETS=10000 go test ./profiles/profiledb -run '^$' -bench DayUpdate -benchtime=1x -timeout 60m
func BenchmarkDayUpdate(b *testing.B) {
	m := 1000
	if v := os.Getenv(benchAssetsEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 2 {
			b.Fatalf("%s=%q: want a number of assets, at least 2", benchAssetsEnv, v)
		}
		m = n
	}
	const bars = 2520
	history, days := splitLastDays(b, writeMarketCSV(b, m, bars+2), 2)
	dbtest.Each(b, func(b *testing.B, db *bun.DB) {
		ctx := context.Background()
		if _, err := bulk.Import(ctx, db, history, bulk.Options{}); err != nil {
			b.Fatal(err)
		}
		md, st := marketdata.NewStore(db), profiledb.NewStore(db)
		if _, err := profiledb.Build(ctx, md, st, profiledb.BuildConfig{}); err != nil {
			b.Fatal(err)
		}
		svc := mustAlerts(b, db, md)
		if _, err := svc.Evaluate(ctx); err != nil { // the history's own pass
			b.Fatal(err)
		}
		second := dayPrices(b, md, days[1])
		imports := []struct {
			name string
			run  func() error
		}{
			{"bulk", func() error {
				_, err := bulk.Import(ctx, db, days[0], bulk.Options{})
				return err
			}},
			{"store", func() error { return md.SavePrices(ctx, second) }},
		}
		for _, imp := range imports {
			b.Run(fmt.Sprintf("%s/%dx%d", imp.name, m, bars), func(b *testing.B) {
				var tImp, prof, load, eval, cpu time.Duration
				b.ReportAllocs()
				for b.Loop() {
					if tImp > 0 {
						b.Fatal("run with -benchtime=1x: a second op would import the same day again")
					}
					cpu0 := cpuTime()
					t0 := time.Now()
					if err := imp.run(); err != nil {
						b.Fatal(err)
					}
					t1 := time.Now()
					built, err := profiledb.Build(ctx, md, st, profiledb.BuildConfig{})
					if err != nil {
						b.Fatal(err)
					}
					t2 := time.Now()
					if _, err := svc.Evaluate(ctx); err != nil {
						b.Fatal(err)
					}
					t3 := time.Now()
					cpu += cpuTime() - cpu0
					tImp, prof, load, eval = t1.Sub(t0), t2.Sub(t1), built.Load, t3.Sub(t2)
					if built.Built != m || built.Incremental != m {
						b.Fatalf("profiles: %d built, %d incrementally, want %d both", built.Built, built.Incremental, m)
					}
				}
				b.ReportMetric(tImp.Seconds(), "import-s")
				b.ReportMetric(prof.Seconds(), "profiles-s")
				b.ReportMetric(load.Seconds(), "load-s")
				b.ReportMetric(eval.Seconds(), "alerts-s")
				b.ReportMetric(cpu.Seconds(), "cpu-s")
			})
		}
	})
}

// mustAlerts creates a user with one alert per asset and returns the
// alerts service.
func mustAlerts(tb testing.TB, db *bun.DB, md *marketdata.Store) *alerts.Service {
	tb.Helper()
	ctx := context.Background()
	bs := billing.NewStore(db)
	p, err := bs.Plan(ctx, "pro")
	if err != nil {
		tb.Fatal(err)
	}
	u := billing.User{Email: uuid.NewString() + "@example.com", Name: "Bench", PlanID: p.ID}
	if err := bs.CreateUser(ctx, &u, time.Now()); err != nil {
		tb.Fatal(err)
	}
	// As many alerts as assets: no plan's limit.
	limits := func(context.Context, uuid.UUID) (int, int, error) { return 1, 1 << 30, nil }
	svc := alerts.New(db, alerts.Config{Limits: limits})
	assets, err := md.Assets(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	for _, a := range assets {
		if _, err := svc.CreateAlert(ctx, u.ID, alerts.AlertInput{AssetID: a.ID, Name: a.Symbol,
			Condition: "crossover(sma(close, 20), sma(close, 50))"}); err != nil {
			tb.Fatal(err)
		}
	}
	return svc
}
