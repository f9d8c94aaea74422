package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/tradekit/tradekit/internal/database"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/profiles/profiledb"
)

// walkCSV returns n weekday bars of a seeded random walk from 2020-01-02
// as an import CSV; bump is added to the close (and high) of bar 100.
func walkCSV(n int, seed uint64, bump float64) string {
	r := rand.New(rand.NewPCG(seed, 1))
	var b strings.Builder
	b.WriteString("date,open,high,low,close,volume\n")
	c := 100.0
	for d, i := time.Date(2020, 1, 2, 0, 0, 0, 0, time.UTC), 0; i < n; d = d.AddDate(0, 0, 1) {
		if wd := d.Weekday(); wd == time.Saturday || wd == time.Sunday {
			continue
		}
		o := c
		c = math.Round(c*math.Exp(0.015*r.NormFloat64())*100) / 100
		cl := c
		if i == 100 {
			cl += bump
		}
		h, l := math.Max(o, cl)+0.5, math.Min(o, cl)-0.5
		fmt.Fprintf(&b, "%s,%.2f,%.2f,%.2f,%.2f,1000\n", d.Format("2006-01-02"), o, h, l, cl)
		i++
	}
	return b.String()
}

// storedProfiles returns the stored profiles' price versions by symbol.
func storedProfiles(t *testing.T, dsn string, symbols ...string) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	db, err := database.Open(ctx, dsn, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := map[string]int64{}
	for _, s := range symbols {
		rec, err := profiledb.NewStore(db).Profile(ctx, marketdata.AssetID(s))
		if err == nil {
			out[s] = rec.PriceVersion
		}
	}
	return out
}

func TestProfilesBuild(t *testing.T) {
	t.Parallel()
	dbtest.EachDSN(t, func(t *testing.T, dsn string) {
		env := map[string]string{"TRADEKIT_DB": dsn}
		syms := []string{"AAA", "BBB", "CCC", "SHRT"}
		for i, sym := range syms {
			n := 300
			if sym == "SHRT" {
				n = 50
			}
			f := writeFile(t, sym+".csv", walkCSV(n, uint64(i+1), 0))
			if _, err := cli(t, env, "import", "prices", "--symbol", sym, "--file", f); err != nil {
				t.Fatal(err)
			}
		}
		// Each import built the profiles of what changed.
		if got := storedProfiles(t, dsn, syms...); len(got) != 3 || got["AAA"] == 0 {
			t.Fatalf("profiles after the imports: %v", got)
		}

		out, err := cli(t, env, "profiles", "build")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(out, "profiles: 0 built, 3 up to date, 1 too short (SHRT: 50 daily bars, 253 needed); 4 assets in the universe") {
			t.Errorf("incremental build after the imports: %q", out)
		}
		// The summary alone, one line on stdout; no log lines on stderr
		// unless --verbose (issue 40, point 13).
		out, stderr, err := cli2(t, env, "profiles", "build", "--all", "--workers", "1")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(out, "profiles: 3 built, 0 up to date, 1 too short") || strings.Count(out, "\n") != 1 || stderr != "" {
			t.Errorf("build --all: stdout %q, stderr %q; want the summary alone", out, stderr)
		}
		_, stderr, err = cli2(t, env, "profiles", "build", "--all", "--workers", "1", "--verbose")
		if err != nil || !strings.Contains(stderr, `level=INFO msg="profiles: prices loaded"`) {
			t.Errorf("build --all --verbose: %v, stderr %q; want the build's log", err, stderr)
		}
		built := 0
		for _, shard := range []string{"0/2", "1/2"} {
			out, err = cli(t, env, "profiles", "build", "--all", "--shard", shard)
			if err != nil {
				t.Fatal(err)
			}
			var n int
			fmt.Sscanf(out, "profiles: %d built", &n)
			built += n
			if !strings.Contains(out, "in other shards") {
				t.Errorf("shard %s: %q", shard, out)
			}
		}
		if built != 3 {
			t.Errorf("the two shards built %d profiles, want 3", built)
		}

		// Re-importing BBB with a changed close rebuilds BBB's profile
		// at once, to its new price version; nothing is left to build.
		before := storedProfiles(t, dsn, syms...)
		f := writeFile(t, "BBB2.csv", walkCSV(300, 2, 0.25))
		if _, err := cli(t, env, "import", "prices", "--symbol", "BBB", "--file", f); err != nil {
			t.Fatal(err)
		}
		after := storedProfiles(t, dsn, syms...)
		if after["BBB"] <= before["BBB"] || after["AAA"] != before["AAA"] || after["CCC"] != before["CCC"] {
			t.Errorf("versions before %v, after re-importing BBB %v", before, after)
		}
		if out, _ := cli(t, env, "profiles", "build"); !strings.HasPrefix(out, "profiles: 0 built, 3 up to date") {
			t.Errorf("build after the re-import: %q", out)
		}
	})
}

func TestProfilesBuildErrors(t *testing.T) {
	t.Parallel()
	env := map[string]string{"TRADEKIT_DB": t.TempDir() + "/x.db"}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"profiles"}, "give a subcommand: build"},
		{[]string{"profiles", "rebuild"}, "give a subcommand: build"},
		{[]string{"profiles", "build", "--shard", "2/2"}, `--shard "2/2"`},
		{[]string{"profiles", "build", "--shard", "x"}, `--shard "x"`},
		{[]string{"profiles", "build", "--shard", "0/0"}, `--shard "0/0"`},
		{[]string{"profiles", "build", "extra"}, `unexpected argument "extra"`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, err := cli(t, env, tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}
