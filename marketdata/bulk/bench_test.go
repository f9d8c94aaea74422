package bulk_test

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/marketdata/bulk"
)

// writeBulkCSV writes a multi-symbol CSV of symbols × bars weekday bars (a
// seeded random walk, cents) to dir and returns its path.
func writeBulkCSV(tb testing.TB, dir string, symbols, bars int) string {
	tb.Helper()
	path := filepath.Join(dir, "prices.csv")
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString("symbol,date,open,high,low,close,volume\n")
	rng := rand.New(rand.NewPCG(1, 2))
	var line []byte
	for s := range symbols {
		sym := fmt.Sprintf("B%05d", s)
		p := 20 + 200*rng.Float64()
		d := calendar.Date{Year: 1990, Month: time.January, Day: 1}
		for range bars {
			for d.Weekday() == time.Saturday || d.Weekday() == time.Sunday {
				d = d.AddDays(1)
			}
			c := math.Max(0.02, p*math.Exp(0.02*rng.NormFloat64()))
			h, l := math.Max(p, c)*1.005, math.Max(0.01, math.Min(p, c)*0.995)
			line = append(line[:0], sym...)
			line = append(line, ',')
			line, _ = d.AppendText(line)
			for _, v := range []float64{p, h, l, c} {
				line = append(line, ',')
				line = strconv.AppendFloat(line, math.Round(v*100)/100, 'f', -1, 64)
			}
			line = append(line, ',')
			line = strconv.AppendInt(line, int64(rng.IntN(1e7)), 10)
			line = append(line, '\n')
			w.Write(line)
			p = c
			d = d.AddDays(1)
		}
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	return path
}

// BenchmarkImportPricesBulk imports a multi-symbol CSV of symbols × 2,520
// bars into an empty database, as `tradekit import prices --file` does
// (profiles aside). The sizes are 20 and 200 symbols (50,400 and 504,000
// rows); TRADEKIT_BENCH_BULK_SYMBOLS=N adds a run of N symbols (10,000 for
// 25.2 M rows). Run it with -benchtime=1x; it reports rows/s.
func BenchmarkImportPricesBulk(b *testing.B) {
	sizes := []int{20, 200}
	if n, err := strconv.Atoi(os.Getenv("TRADEKIT_BENCH_BULK_SYMBOLS")); err == nil && n > 0 {
		sizes = []int{n}
	}
	const bars = 2520
	for _, symbols := range sizes {
		path := writeBulkCSV(b, b.TempDir(), symbols, bars)
		b.Run(fmt.Sprintf("rows=%d", symbols*bars), func(b *testing.B) {
			dbtest.Each(b, func(b *testing.B, _ *bun.DB) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					b.StopTimer()
					var db *bun.DB
					if b.Name()[len(b.Name())-len("sqlite"):] == "sqlite" {
						db = dbtest.SQLite(b)
					} else {
						db = dbtest.Postgres(b)
					}
					b.StartTimer()
					res, err := bulk.Import(context.Background(), db, path, bulk.Options{})
					if err != nil {
						b.Fatal(err)
					}
					if res.Rows != int64(symbols*bars) {
						b.Fatalf("imported %d rows, want %d", res.Rows, symbols*bars)
					}
				}
				b.ReportMetric(float64(symbols*bars)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			})
		})
	}
}
