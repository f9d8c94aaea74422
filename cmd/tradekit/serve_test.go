package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/database"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/marketdata/demo"
)

// serveOnce runs serve with args until it answers, stops it and returns
// its log.
func serveOnce(t *testing.T, env map[string]string, args ...string) string {
	t.Helper()
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var log bytes.Buffer
	go func() {
		done <- run(ctx, append([]string{"serve", "--addr", addr}, args...), func(k string) string { return env[k] },
			strings.NewReader(""), &bytes.Buffer{}, &log)
	}()
	waitHealthy(t, "http://"+addr+"/healthz")
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve %v: %v", args, err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop")
	}
	return log.String()
}

// TestServeWarnsAboutDemoData: every start of serve on a database that
// holds the demo data set logs one warning that its prices are synthetic
// (with --no-seed too), not only the start that loaded it; a database of
// the user's own data gets none.
func TestServeWarnsAboutDemoData(t *testing.T) {
	t.Parallel()
	set, err := demo.Generate(demo.Config{Start: calendar.NewDate(2026, 10, 1)}) // a month: quick to load
	if err != nil {
		t.Fatal(err)
	}
	warnings := func(log string) (n int) {
		for _, line := range strings.Split(log, "\n") {
			if strings.Contains(line, "SYNTHETIC") {
				if !strings.Contains(line, "level=WARN") {
					t.Errorf("not a warning: %s", line)
				}
				n++
			}
		}
		return n
	}
	dbtest.EachDSN(t, func(t *testing.T, dsn string) {
		env := map[string]string{"TRADEKIT_DB": dsn}
		if _, err := cli(t, env, "import", "prices", "--symbol", "OWN",
			"--file", writeFile(t, "own.csv", "date,open,high,low,close,volume\n2026-10-01,10,11,9,10,100\n")); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"--no-seed"}, {}} {
			if log := serveOnce(t, env, args...); warnings(log) != 0 {
				t.Errorf("serve %v on the user's own data warned about demo data:\n%s", args, log)
			}
		}

		ctx := context.Background()
		db, err := database.Open(ctx, dsn, database.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		err = marketdata.InConnTx(ctx, db, func(ctx context.Context, st *marketdata.Store) error {
			return demo.Load(ctx, st, set)
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"--no-seed"}, {}, {"--no-seed", "--log-format", "json"}} {
			log := serveOnce(t, env, args...)
			if len(args) > 0 && args[len(args)-1] == "json" {
				if !strings.Contains(log, `"level":"WARN","msg":"the database holds the demo data set: its prices are SYNTHETIC`) {
					t.Errorf("serve %v: no JSON warning:\n%s", args, log)
				}
				continue
			}
			if n := warnings(log); n != 1 {
				t.Errorf("serve %v on demo data: %d warnings about synthetic prices, want 1:\n%s", args, n, log)
			}
		}
	})
}

// TestServeChecksBeforeMigrating checks that serve refuses a bad --addr,
// a busy port and a bad secret key with a clear message before it
// migrates or seeds the database (issue 40, point 12).
func TestServeChecksBeforeMigrating(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"a port alone", nil, []string{"--addr", "8095"},
			`tradekit: serve: --addr "8095": give host:port, e.g. :8095 or 127.0.0.1:8095`},
		{"a host alone", nil, []string{"--addr", "localhost"},
			`tradekit: serve: --addr "localhost": give host:port, e.g. :8095 or 127.0.0.1:8095`},
		{"a bad port", nil, []string{"--addr", "127.0.0.1:99999"},
			`tradekit: serve: --addr "127.0.0.1:99999": the port "99999" is not a number from 0 to 65535`},
		{"a bad metrics address", nil, []string{"--metrics-addr", "9090"},
			`tradekit: serve: --metrics-addr "9090": give host:port, e.g. :8095 or 127.0.0.1:8095`},
		{"a busy port", nil, []string{"--addr", busy.Addr().String()},
			`tradekit: serve: --addr "` + busy.Addr().String() + `": the port is in use by another process (another tradekit serve?): stop it or give another port`},
		{"a bad key", map[string]string{"TRADEKIT_SECRET_KEY": "not base64"}, []string{"--addr", "127.0.0.1:0"},
			"tradekit: serve: TRADEKIT_SECRET_KEY must be the base64 of 32 bytes (e.g. openssl rand -base64 32)"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, fmt.Sprintf("db%d.db", i))
			_, stderr, status := cliMain(t, tt.env, "", append([]string{"serve", "--db", path}, tt.args...)...)
			if status != 1 || stderr != tt.want+"\n" {
				t.Errorf("status %d, stderr %q; want 1 and %q", status, stderr, tt.want)
			}
			if _, err := os.Stat(path); err != nil {
				return // not even created
			}
			db, err := database.Open(context.Background(), path, database.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			tables, err := existingTables(context.Background(), db)
			if err != nil {
				t.Fatal(err)
			}
			if len(tables) > 0 {
				t.Errorf("the database was migrated before the check: tables %v", tables)
			}
		})
	}
}

// TestServeLogsDashboardAndStopped checks the start-up log's dashboard
// URL and the final "stopped" line of a server stopped as by SIGTERM.
func TestServeLogsDashboardAndStopped(t *testing.T) {
	t.Parallel()
	dbtest.EachDSN(t, func(t *testing.T, dsn string) {
		log := serveOnce(t, map[string]string{"TRADEKIT_DB": dsn}, "--no-seed")
		lines := strings.Split(strings.TrimSpace(log), "\n")
		if !strings.Contains(log, `msg=dashboard url=http://127.0.0.1:`) || !strings.Contains(log, "/dashboard/\n") {
			t.Errorf("no dashboard URL in the log:\n%s", log)
		}
		if last := lines[len(lines)-1]; !strings.HasSuffix(last, "level=INFO msg=stopped") {
			t.Errorf("last line %q, want msg=stopped; log:\n%s", last, log)
		}
	})
}
