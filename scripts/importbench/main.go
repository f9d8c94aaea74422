// Command importbench measures `tradekit import prices --file` side by
// side with a raw bulk load of the same rows into a table of the same
// shape, on SQLite and on PostgreSQL.
//
// It generates N symbols × M daily bars (a seeded random walk), writes
// them as a multi-symbol CSV (or a directory of SYMBOL.csv files, or
// either gzipped), and then, for each database, times:
//
//   - tradekit import prices --file PATH into a freshly migrated database
//     (the binary built from ./cmd/tradekit, stdout not a terminal, the
//     profile rebuild included; it is also timed alone from its log line);
//   - the raw load: `sqlite3 .import` into a fresh file holding only a
//     table shaped like prices (TEXT columns, PRIMARY KEY (asset_id, date),
//     WITHOUT ROWID), and psql `\copy` into a fresh table shaped like
//     prices (UUID, DATE, NUMERIC(38,18), BIGINT, the same primary key),
//     of the same rows with the asset ids in place of the symbols.
//
// Usage (from the repository root):
//
//	go run ./scripts/importbench [-symbols 200] [-bars 2520] [-layout file|dir] [-gz] [-db sqlite,postgres] [-pg DSN]
//
// Without -pg, a throwaway PostgreSQL server is started from the
// machine's binaries (as the tests do) with fsync off; the raw load runs
// on the same server. Needs sqlite3 and psql on the PATH.
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
	baseline := flag.String("baseline", "", "`PATH` of another tradekit binary (say, built from main) to time in the same run, on PostgreSQL, for a before/after comparison")
	flag.Parse()
	if err := run(*symbols, *bars, *layout, *gz, *dbs, *pg, *baseline); err != nil {
		fmt.Fprintln(os.Stderr, "importbench:", err)
		os.Exit(1)
	}
}

func run(symbols, bars int, layout string, gz bool, dbs, pgDSN, baseline string) error {
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
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("%d symbols × %d bars = %d rows, layout %s, gzip %v; load average %s\n", symbols, bars, rows, layout, gz,
		strings.Join(strings.Fields(string(load))[:3], " "))
	fmt.Printf("%-10s  %12s  %12s  %10s  %7s\n", "database", "import", "(w/o profiles)", "raw load", "ratio")

	for _, db := range strings.Split(dbs, ",") {
		var imp, impOnly, rawT time.Duration
		switch db {
		case "sqlite":
			dsn := filepath.Join(work, "import.db")
			if imp, impOnly, err = timeImport(bin, input, dsn); err != nil {
				return err
			}
			rawDB := filepath.Join(work, "raw.db")
			schema := `CREATE TABLE prices (asset_id TEXT NOT NULL, date TEXT NOT NULL, open TEXT NOT NULL, high TEXT NOT NULL,
				low TEXT NOT NULL, close TEXT NOT NULL, volume BIGINT NOT NULL, PRIMARY KEY (asset_id, date)) WITHOUT ROWID;`
			if out, err := exec.Command("sqlite3", rawDB, schema).CombinedOutput(); err != nil {
				return fmt.Errorf("sqlite3: %v: %s", err, out)
			}
			start := time.Now()
			cmd := exec.Command("sqlite3", rawDB)
			cmd.Stdin = strings.NewReader(".mode csv\n.import --skip 1 " + raw + " prices\n")
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("sqlite3 .import: %v: %s", err, out)
			}
			rawT = time.Since(start)
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
			for _, name := range []string{"bench_import", "bench_raw", "bench_base"} {
				psql(admin, "DROP DATABASE IF EXISTS "+name)
				if err := psql(admin, "CREATE DATABASE "+name); err != nil {
					return err
				}
			}
			var base time.Duration
			if baseline != "" {
				if _, base, err = timeImport(baseline, input, withDB(admin, "bench_base")); err != nil {
					return fmt.Errorf("baseline: %w", err)
				}
			}
			if imp, impOnly, err = timeImport(bin, input, withDB(admin, "bench_import")); err != nil {
				return err
			}
			rawDSN := withDB(admin, "bench_raw")
			if err := psql(rawDSN, `CREATE TABLE prices (asset_id UUID NOT NULL, date DATE NOT NULL, open NUMERIC(38, 18) NOT NULL,
				high NUMERIC(38, 18) NOT NULL, low NUMERIC(38, 18) NOT NULL, close NUMERIC(38, 18) NOT NULL,
				volume BIGINT NOT NULL, PRIMARY KEY (asset_id, date))`); err != nil {
				return err
			}
			start := time.Now()
			if err := psql(rawDSN, `\copy prices FROM '`+raw+`' CSV HEADER`); err != nil {
				return err
			}
			rawT = time.Since(start)
			if baseline != "" {
				fmt.Printf("%-10s  %12s  %12s  %10s  %6.2f×\n", "(baseline)", "", base.Round(time.Millisecond),
					rawT.Round(time.Millisecond), float64(base)/float64(rawT))
			}
		default:
			return fmt.Errorf("unknown database %q", db)
		}
		fmt.Printf("%-10s  %12s  %12s  %10s  %6.2f×\n", db, imp.Round(time.Millisecond), impOnly.Round(time.Millisecond),
			rawT.Round(time.Millisecond), float64(impOnly)/float64(rawT))
	}
	return nil
}

// importLine is the import's summary line; its duration excludes the
// profile rebuild that follows.
var importLine = regexp.MustCompile(`imported \d+ rows .* in ([0-9.]+[mµn]?s) \(`)

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
