package main

import (
	"bufio"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/marketdata"
)

func main() {
	symbols := flag.Int("symbols", 200, "number of symbols")
	bars := flag.Int("bars", 2520, "daily bars per symbol")
	layout := flag.String("layout", "file", "file: one CSV with a symbol column; dir: a directory of SYMBOL.csv files")
	gz := flag.Bool("gz", false, "gzip the input")
	dbs := flag.String("db", "sqlite,postgres", "databases to measure")
	pg := flag.String("pg", "", "admin DSN of a PostgreSQL server to use (default: start a throwaway one)")
	baseline := flag.String("baseline", "", "`PATH` of another tradekit binary (say, built from main) to time in the same run, before the import, for a before/after comparison")
	runs := flag.Int("runs", 1, "`N` measurements per database, each into fresh databases, the import and the raw load taking turns to go first")
	flag.Parse()
	if err := run(*symbols, *bars, *layout, *gz, *dbs, *pg, *baseline, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "importbench:", err)
		os.Exit(1)
	}
}

func run(symbols, bars int, layout string, gz bool, dbs, pgDSN, baseline string, runs int) error {
	work, err := os.MkdirTemp("", "importbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	bin := filepath.Join(work, "tradekit")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/tradekit").CombinedOutput(); err != nil {
		return fmt.Errorf("build: %v\n%s", err, out)
	}
	input, raw, err := generate(work, symbols, bars, layout, gz)
	if err != nil {
		return err
	}
	rows := symbols * bars
	fmt.Printf("%d symbols × %d bars = %d rows, layout %s, gzip %v\n", symbols, bars, rows, layout, gz)
	fmt.Printf("%-10s  %12s  %14s  %10s  %7s  %s\n", "database", "import", "(w/o profiles)", "raw load", "ratio", "load average")

	for _, db := range strings.Split(dbs, ",") {
		var ratios []float64
		var measure func(i int) (imp, impOnly, rawT time.Duration, err error)
		switch db {
		case "sqlite":
			measure = func(i int) (imp, impOnly, rawT time.Duration, err error) {
				dsn := filepath.Join(work, fmt.Sprintf("import-%d.db", i))
				rawDB := filepath.Join(work, fmt.Sprintf("raw-%d.db", i))
				defer removeSQLite(dsn)
				defer removeSQLite(rawDB)
				if baseline != "" {
					baseDB := filepath.Join(work, fmt.Sprintf("base-%d.db", i))
					defer removeSQLite(baseDB)
					_, base, err := timeImport(baseline, input, baseDB)
					if err != nil {
						return 0, 0, 0, fmt.Errorf("baseline: %w", err)
					}
					defer printBaseline(base, &rawT)
				}
				importFn := func() error {
					imp, impOnly, err = timeImport(bin, input, dsn)
					return err
				}
				rawFn := func() error {
					rawT, err = sqliteRawLoad(rawDB, raw)
					return err
				}
				return imp, impOnly, rawT, inTurn(i, importFn, rawFn)
			}
		case "postgres":
			admin := pgDSN
			if admin == "" {
				srv, err := dbtest.StartServer()
				if err != nil {
					return fmt.Errorf("postgres: %w", err)
				}
				defer srv.Close()
				admin = srv.DSN("postgres")
			}
			measure = func(i int) (imp, impOnly, rawT time.Duration, err error) {
				for _, name := range []string{"bench_import", "bench_raw", "bench_base"} {
					psql(admin, "DROP DATABASE IF EXISTS "+name)
					if err := psql(admin, "CREATE DATABASE "+name); err != nil {
						return 0, 0, 0, err
					}
				}
				if baseline != "" {
					_, base, err := timeImport(baseline, input, withDB(admin, "bench_base"))
					if err != nil {
						return 0, 0, 0, fmt.Errorf("baseline: %w", err)
					}
					defer printBaseline(base, &rawT)
				}
				importFn := func() error {
					imp, impOnly, err = timeImport(bin, input, withDB(admin, "bench_import"))
					return err
				}
				rawFn := func() error {
					rawT, err = pgRawLoad(withDB(admin, "bench_raw"), raw)
					return err
				}
				return imp, impOnly, rawT, inTurn(i, importFn, rawFn)
			}
		default:
			return fmt.Errorf("unknown database %q", db)
		}
		for i := range runs {
			load := loadAverage()
			imp, impOnly, rawT, err := measure(i)
			if err != nil {
				return err
			}
			ratio := float64(impOnly) / float64(rawT)
			ratios = append(ratios, ratio)
			fmt.Printf("%-10s  %12s  %14s  %10s  %6.2f×  %s\n", db, imp.Round(time.Millisecond), impOnly.Round(time.Millisecond),
				rawT.Round(time.Millisecond), ratio, load)
		}
		if runs > 1 {
			slices.Sort(ratios)
			fmt.Printf("%-10s  median ratio of %d runs %.2f× (min %.2f×, max %.2f×)\n", db, runs, ratios[len(ratios)/2],
				ratios[0], ratios[len(ratios)-1])
		}
	}
	return nil
}

// printBaseline prints the line of the baseline's import time base,
// beside the raw load's time *rawT of the same measurement.
func printBaseline(base time.Duration, rawT *time.Duration) {
	fmt.Printf("%-10s  %12s  %14s  %10s  %6.2f×\n", "(baseline)", "", base.Round(time.Millisecond),
		rawT.Round(time.Millisecond), float64(base)/float64(*rawT))
}

// inTurn runs a then b on even runs i, b then a on odd ones, so that a
// load that rises or falls during a run favours neither side.
func inTurn(i int, a, b func() error) error {
	if i%2 == 1 {
		a, b = b, a
	}
	if err := a(); err != nil {
		return err
	}
	return b()
}

// loadAverage returns the 1, 5 and 15 minute load averages.
func loadAverage() string {
	load, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(load))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// sqliteRawLoad times `sqlite3 .import` of the raw CSV into a new file
// rawDB holding only a table shaped like prices.
func sqliteRawLoad(rawDB, raw string) (time.Duration, error) {
	schema := `CREATE TABLE prices (asset_id TEXT NOT NULL, date TEXT NOT NULL, open TEXT NOT NULL, high TEXT NOT NULL,
		low TEXT NOT NULL, close TEXT NOT NULL, volume BIGINT NOT NULL, PRIMARY KEY (asset_id, date)) WITHOUT ROWID;`
	if out, err := exec.Command("sqlite3", rawDB, schema).CombinedOutput(); err != nil {
		return 0, fmt.Errorf("sqlite3: %v: %s", err, out)
	}
	start := time.Now()
	cmd := exec.Command("sqlite3", rawDB)
	cmd.Stdin = strings.NewReader(".mode csv\n.import --skip 1 " + raw + " prices\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("sqlite3 .import: %v: %s", err, out)
	}
	return time.Since(start), nil
}

// pgRawLoad times psql `\copy` of the raw CSV into a new table shaped
// like prices in the database of dsn.
func pgRawLoad(dsn, raw string) (time.Duration, error) {
	if err := psql(dsn, `CREATE TABLE prices (asset_id UUID NOT NULL, date DATE NOT NULL, open NUMERIC(38, 18) NOT NULL,
		high NUMERIC(38, 18) NOT NULL, low NUMERIC(38, 18) NOT NULL, close NUMERIC(38, 18) NOT NULL,
		volume BIGINT NOT NULL, PRIMARY KEY (asset_id, date))`); err != nil {
		return 0, err
	}
	start := time.Now()
	if err := psql(dsn, `\copy prices FROM '`+raw+`' CSV HEADER`); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// removeSQLite removes a SQLite database file and its WAL files.
func removeSQLite(path string) {
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(path + suffix)
	}
}

// importLine is the import's summary line; its duration excludes the
// profile rebuild that follows.
var importLine = regexp.MustCompile(`imported \d+ rows .* in ([0-9.hmsµn]+) \(`)

// timeImport migrates dsn, then times the import of input: the whole
// command, and the import alone as the command reports it.
func timeImport(bin, input, dsn string) (whole, alone time.Duration, err error) {
	if out, err := exec.Command(bin, "migrate", "--db", dsn).CombinedOutput(); err != nil {
		return 0, 0, fmt.Errorf("migrate: %v: %s", err, out)
	}
	start := time.Now()
	out, err := exec.Command(bin, "import", "prices", "--file", input, "--db", dsn).CombinedOutput()
	whole = time.Since(start)
	if err != nil {
		return 0, 0, fmt.Errorf("import: %v: %s", err, out)
	}
	m := importLine.FindSubmatch(out)
	if m == nil {
		return 0, 0, fmt.Errorf("import: no summary line in %q", out)
	}
	alone, err = time.ParseDuration(string(m[1]))
	return whole, alone, err
}

func psql(dsn, sql string) error {
	out, err := exec.Command("psql", "-q", "-v", "ON_ERROR_STOP=1", dsn, "-c", sql).CombinedOutput()
	if err != nil {
		return fmt.Errorf("psql %q: %v: %s", sql, err, out)
	}
	return nil
}

// withDB returns dsn naming database name.
func withDB(dsn, name string) string {
	i := strings.LastIndex(dsn, "/")
	j := strings.Index(dsn[i:], "?")
	if j < 0 {
		return dsn[:i+1] + name
	}
	return dsn[:i+1] + name + dsn[i+j:]
}

// generate writes the import input (layout file or dir, gzipped or not)
// and the raw-load CSV, and returns their paths.
func generate(work string, symbols, bars int, layout string, gz bool) (input, raw string, err error) {
	rawPath := filepath.Join(work, "raw.csv")
	rf, err := os.Create(rawPath)
	if err != nil {
		return "", "", err
	}
	defer rf.Close()
	rw := bufio.NewWriterSize(rf, 1<<20)
	fmt.Fprintln(rw, "asset_id,date,open,high,low,close,volume")

	var out io.WriteCloser
	var ow *bufio.Writer
	open := func(path string) error {
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		out = f
		if gz {
			out = &gzFile{gzip.NewWriter(f), f}
		}
		ow = bufio.NewWriterSize(out, 1<<20)
		return nil
	}
	closeOut := func() error {
		if err := ow.Flush(); err != nil {
			return err
		}
		return out.Close()
	}
	ext := ".csv"
	if gz {
		ext += ".gz"
	}
	switch layout {
	case "file":
		input = filepath.Join(work, "prices"+ext)
		if err := open(input); err != nil {
			return "", "", err
		}
		fmt.Fprintln(ow, "symbol,date,open,high,low,close,volume")
	case "dir":
		input = filepath.Join(work, "prices")
		if err := os.Mkdir(input, 0o755); err != nil {
			return "", "", err
		}
	default:
		return "", "", fmt.Errorf("unknown layout %q", layout)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	start := calendar.Date{Year: 2000, Month: time.January, Day: 3}
	var line []byte
	for s := range symbols {
		sym := fmt.Sprintf("S%04d", s)
		id := marketdata.AssetID(sym).String()
		if layout == "dir" {
			if err := open(filepath.Join(input, sym+ext)); err != nil {
				return "", "", err
			}
			fmt.Fprintln(ow, "date,open,high,low,close,volume")
		}
		price := 20 + rng.Float64()*200
		d := start
		for range bars {
			for d.Weekday() == time.Saturday || d.Weekday() == time.Sunday {
				d = d.AddDays(1)
			}
			o := price
			c := math.Max(0.01, o*math.Exp(rng.NormFloat64()*0.02))
			h := math.Max(o, c) * (1 + rng.Float64()*0.01)
			l := math.Max(0.01, math.Min(o, c)*(1-rng.Float64()*0.01))
			vol := 100_000 + rng.IntN(10_000_000)
			fields := func(first string) []byte {
				line = append(line[:0], first...)
				line = append(line, ',')
				line, _ = d.AppendText(line)
				for _, v := range []float64{o, h, l, c} {
					line = append(line, ',')
					line = strconv.AppendFloat(line, math.Round(v*100)/100, 'f', -1, 64)
				}
				line = append(line, ',')
				line = strconv.AppendInt(line, int64(vol), 10)
				return append(line, '\n')
			}
			rw.Write(fields(id))
			if layout == "dir" {
				ow.Write(fields("")[1:])
			} else {
				ow.Write(fields(sym))
			}
			price = c
			d = d.AddDays(1)
		}
		if layout == "dir" {
			if err := closeOut(); err != nil {
				return "", "", err
			}
		}
	}
	if layout == "file" {
		if err := closeOut(); err != nil {
			return "", "", err
		}
	}
	return input, rawPath, rw.Flush()
}

// gzFile closes the gzip stream, then the file.
type gzFile struct {
	*gzip.Writer
	f *os.File
}

func (g *gzFile) Close() error {
	if err := g.Writer.Close(); err != nil {
		return err
	}
	return g.f.Close()
}
