package profiledb_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/marketdata/bulk"
	"github.com/tradekit/tradekit/profiles/profiledb"
)

// benchAssetsEnv names the environment variable that sets the number of
// assets of BenchmarkBuildMarket (default 1,000; the targets are
// stated for 2,500 and 10,000).
const benchAssetsEnv = "TRADEKIT_BENCH_ASSETS"

// writeMarketCSV writes m symbols × n daily bars (weekdays from
// 2016-01-04) of a one-factor model, as one CSV with a symbol column, and
// returns its path. One symbol in fifty misses a day inside the last year
// (its correlations take the pairwise merge); the rest share the calendar.
func writeMarketCSV(tb testing.TB, m, n int) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "market.csv")
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString("symbol,date,open,high,low,close,volume\n")
	var dates []string
	for d := calendar.NewDate(2016, 1, 4); len(dates) < n; d = d.AddDays(1) {
		if wd := d.Weekday(); wd != time.Saturday && wd != time.Sunday {
			dates = append(dates, d.String())
		}
	}
	mkt := marketReturns(n, 41)
	var line []byte
	for i := range m {
		rng := newRand(uint64(5000 + i))
		sym := fmt.Sprintf("M%05d", i)
		beta := 0.3 + 1.4*rng.Float64()
		c := 20 + 80*rng.Float64()
		gap := -1
		if i%50 == 7 {
			gap = n - 1 - rng.IntN(200)
		}
		for t := range n {
			o := c
			c = math.Max(0.01, math.Round(c*math.Exp(beta*mkt[t]+0.012*rng.NormFloat64())*100)/100)
			if t == gap {
				continue
			}
			h := math.Round(math.Max(o, c)*(1+0.005*rng.Float64())*100) / 100
			l := math.Max(0.01, math.Round(math.Min(o, c)*(1-0.005*rng.Float64())*100)/100)
			line = append(line[:0], sym...)
			line = append(line, ',')
			line = append(line, dates[t]...)
			for _, v := range []float64{o, h, l, c} {
				line = append(line, ',')
				line = strconv.AppendFloat(line, v, 'f', 2, 64)
			}
			line = append(line, ",1000\n"...)
			w.Write(line)
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

// resetPeakRSS frees what the process holds and resets its peak resident
// set size (Linux: /proc/self/clear_refs), so that peakRSS measures what
// comes after. It reports whether the peak could be reset.
func resetPeakRSS() bool {
	runtime.GC()
	debug.FreeOSMemory()
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// peakRSS returns the process's peak resident set size in bytes since the
// last resetPeakRSS (VmHWM of /proc/self/status), or -1 when unknown.
func peakRSS() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, l := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(l, []byte("VmHWM:")); ok {
			kb, err := strconv.ParseFloat(string(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(v), []byte("kB")))), 64)
			if err != nil {
				return -1
			}
			return kb * 1024
		}
	}
	return -1
}

// cpuTime returns the CPU time (user and system) the process has used:
// on a machine shared with other work, a steadier measure of the build's
// cost than the elapsed time (the database server of PostgreSQL is
// another process, not counted).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkBuildMarket is `tradekit profiles build --all` on a market of
// N assets × 2,520 daily bars (ten years), generated here and imported
// with bulk.Import (not timed), on SQLite and on
// PostgreSQL: one op is one whole build (load, correlations, profiles,
// storing). N is 1,000, or $TRADEKIT_BENCH_ASSETS. It reports the build's
// seconds, its load part, the CPU seconds of this process (cpu-s), and the
// process's peak RSS during the build in MB (peak-MB; measured only on
// Linux). Run it with -benchtime=1x:
//
//	TRADEKIT_BENCH_ASSETS=10000 go test ./profiles/profiledb -run '^$' -bench BuildMarket -benchtime=1x -timeout 60m
func BenchmarkBuildMarket(b *testing.B) {
	m := 1000
	if v := os.Getenv(benchAssetsEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 2 {
			b.Fatalf("%s=%q: want a number of assets, at least 2", benchAssetsEnv, v)
		}
		m = n
	}
	const bars = 2520
	path := writeMarketCSV(b, m, bars)
	dbtest.Each(b, func(b *testing.B, db *bun.DB) {
		ctx := context.Background()
		if _, err := bulk.Import(ctx, db, path, bulk.Options{}); err != nil {
			b.Fatal(err)
		}
		md, st := marketdata.NewStore(db), profiledb.NewStore(db)
		// The import's own profile build (tradekit import) leaves every
		// asset's stored copy of its columns; the same here, untimed.
		assets, err := md.Assets(ctx)
		if err != nil {
			b.Fatal(err)
		}
		for lo := 0; lo < len(assets); lo += 500 {
			var ids []uuid.UUID
			for _, a := range assets[lo:min(lo+500, len(assets))] {
				ids = append(ids, a.ID)
			}
			if _, err := md.PriceColumnsOf(ctx, ids); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(fmt.Sprintf("%dx%d", m, bars), func(b *testing.B) {
			var load, cpu time.Duration
			peak := -1.0
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				measured := resetPeakRSS()
				cpu0 := cpuTime()
				b.StartTimer()
				res, err := profiledb.Build(ctx, md, st, profiledb.BuildConfig{All: true})
				if err != nil {
					b.Fatal(err)
				}
				cpu += cpuTime() - cpu0
				if res.Built != m {
					b.Fatalf("built %d profiles, want %d: %s", res.Built, m, res)
				}
				load += res.Load
				if measured {
					peak = max(peak, peakRSS())
				}
			}
			b.ReportMetric(load.Seconds()/float64(b.N), "load-s/op")
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
			if peak > 0 {
				b.ReportMetric(peak/(1<<20), "peak-MB")
			}
		})
	})
}
