package main

import (
	"bytes"
	"context"
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
