package paper_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/tradekit/tradekit/brokers/alpaca"
	"github.com/tradekit/tradekit/brokers/paper"
	"github.com/tradekit/tradekit/brokers/paper/portal"
	"github.com/tradekit/tradekit/internal/dbtest"
)

// TestIdleMatcherCPU is a measured run, not a check: with
// TRADEKIT_MEASURE_IDLE=1 it rests 10,000 limit buys far below the market
// (10 accounts of 1,000 orders, on 10 assets), runs the matcher as a
// server does (Broker.Run, the default MatchInterval), and after a
// warm-up prints the CPU this process used over 30 s, as a share of one
// core, and on PostgreSQL that of the backends serving the test
// database. Skipped otherwise:
//
//	TRADEKIT_MEASURE_IDLE=1 go test ./brokers/paper -run TestIdleMatcherCPU -v -count=1 -timeout 20m
func TestIdleMatcherCPU(t *testing.T) {
	if os.Getenv("TRADEKIT_MEASURE_IDLE") == "" {
		t.Skip("a measured run: set TRADEKIT_MEASURE_IDLE=1")
	}
	const (
		accounts, perAccount, assets = 10, 1000, 10
		warmUp, window               = 5 * time.Second, 30 * time.Second
	)
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		for i := range assets {
			mustPrices(t, db, fmt.Sprintf("IDLE%d", i), map[string]string{"2026-02-27": "100"})
		}
		e := mustEnv(t, db, paper.Config{}, portal.Config{AccessTTL: time.Hour})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var wg sync.WaitGroup
		errs := make(chan error, accounts)
		for range accounts {
			_, id := e.trader(t)
			wg.Add(1)
			go func() {
				defer wg.Done()
				qty, limit := d("1"), d("10")
				for i := range perAccount {
					_, err := e.b.Place(ctx, uuid.MustParse(id), alpaca.OrderRequestJSON{Symbol: fmt.Sprintf("IDLE%d", i%assets),
						Side: "buy", Type: "limit", TimeInForce: "gtc", Qty: &qty, LimitPrice: &limit})
					if err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		e.clock.Add(time.Minute) // as a server sees orders placed a while ago
		go e.b.Run(ctx)
		// These sleeps wait for nothing to happen: they are the run's
		// pace, a fixed warm-up and a fixed measured window of the
		// matcher's idle passes (5 s and 30 s, the constants above).
		time.Sleep(warmUp) // not measured
		pg0, go0, t0 := dbtest.BackendCPU(t, db), dbtest.ProcessCPU(), time.Now()
		time.Sleep(window) // measured
		goCPU, pgCPU, wall := dbtest.ProcessCPU()-go0, time.Duration(0), time.Since(t0)
		for pid, c := range dbtest.BackendCPU(t, db) {
			pgCPU += c - pg0[pid]
		}
		t.Logf("%s: %d resting orders, %s: process CPU %.2f%% of a core (%s)", db.Dialect().Name(), accounts*perAccount,
			wall.Round(time.Millisecond), 100*goCPU.Seconds()/wall.Seconds(), goCPU.Round(time.Millisecond))
		if db.Dialect().Name() == dialect.PG {
			t.Logf("postgres: backends CPU %.2f%% of a core (%s)", 100*pgCPU.Seconds()/wall.Seconds(), pgCPU.Round(time.Millisecond))
		}
	})
}
