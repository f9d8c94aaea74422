package profiledb_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/alerts"
	"github.com/tradekit/tradekit/billing"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/profiles/profiledb"
)

// splitLastDay moves the last row of each symbol of the market CSV at path
// (rows grouped by symbol, oldest first, as writeMarketCSV writes them)
// to a one-day file of the same layout, and returns the two paths: the
// history and the day, the file a daily feed such as Polygon's grouped
// daily bars gives, one row per symbol.
func splitLastDay(tb testing.TB, path string) (history, day string) {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	dir := tb.TempDir()
	history, day = filepath.Join(dir, "history.csv"), filepath.Join(dir, "day.csv")
	var h, d bytes.Buffer
	lines := bytes.SplitAfter(data, []byte("\n"))
	h.Write(lines[0])
	d.Write(lines[0])
	for i := 1; i < len(lines) && len(lines[i]) > 0; i++ {
		sym, _, _ := bytes.Cut(lines[i], []byte(","))
		next := []byte(nil)
		if i+1 < len(lines) {
			next, _, _ = bytes.Cut(lines[i+1], []byte(","))
		}
		if !bytes.Equal(sym, next) {
			d.Write(lines[i])
		} else {
			h.Write(lines[i])
		}
	}
	for p, b := range map[string]*bytes.Buffer{history: &h, day: &d} {
		if err := os.WriteFile(p, b.Bytes(), 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	return history, day
}

// BenchmarkDayUpdate is the daily update of a whole market: N assets ×
// 2,520 daily bars are stored, with their profiles (and states) built and
// one alert per asset (a crossover of two moving averages), all untimed;
// then one op imports a file of one new day, N rows
// (marketdata.ImportPricesBulk), updates the profiles (profiledb.Build,
// incrementally from the stored states), and runs the alert evaluation
// the new prices call for (alerts.Service.Evaluate), on SQLite and on
// PostgreSQL. N is 1,000, or $TRADEKIT_BENCH_ASSETS. It reports the
// seconds of each step (import-s, profiles-s with its load-s, alerts-s), the CPU seconds
// of this process for the whole op (cpu-s; the PostgreSQL server is
// another process, not counted), and fails unless every profile was
// updated incrementally. Run it with -benchtime=1x (a second op would
// import the same day again):
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
	history, day := splitLastDay(b, writeMarketCSV(b, m, bars+1))
	dbtest.Each(b, func(b *testing.B, db *bun.DB) {
		ctx := context.Background()
		if _, err := marketdata.ImportPricesBulk(ctx, db, history, marketdata.BulkOptions{}); err != nil {
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
		b.Run(fmt.Sprintf("%dx%d", m, bars), func(b *testing.B) {
			var imp, prof, load, eval, cpu time.Duration
			b.ReportAllocs()
			for b.Loop() {
				if imp > 0 {
					b.Fatal("run with -benchtime=1x: a second op would import the same day again")
				}
				cpu0 := cpuTime()
				t0 := time.Now()
				res, err := marketdata.ImportPricesBulk(ctx, db, day, marketdata.BulkOptions{})
				if err != nil {
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
				imp, prof, load, eval = t1.Sub(t0), t2.Sub(t1), built.Load, t3.Sub(t2)
				if built.Built != m || built.Incremental != m {
					b.Fatalf("profiles: %d built, %d incrementally, want %d both (import: %+v)", built.Built, built.Incremental, m, res)
				}
			}
			b.ReportMetric(imp.Seconds(), "import-s")
			b.ReportMetric(prof.Seconds(), "profiles-s")
			b.ReportMetric(load.Seconds(), "load-s")
			b.ReportMetric(eval.Seconds(), "alerts-s")
			b.ReportMetric(cpu.Seconds(), "cpu-s")
		})
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
