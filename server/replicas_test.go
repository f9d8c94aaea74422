package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/tradekit/tradekit/internal/database"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/internal/testkit"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/server"
)

// TestReplicaReads serves market data over a real primary and streaming
// standby: reads go to the standby while it is current; a price written
// while its replay is paused is served at once (the standby is behind
// the version the primary knows, so the read is retried on the
// primary and nothing stale is cached); with the standby killed, every
// market-data route still answers 200.
func TestReplicaReads(t *testing.T) {
	rp := dbtest.StartReplicated(t)
	ctx := context.Background()
	primary := dbtest.MustOpen(t, rp.PrimaryDSN())
	mustMarketData(t, primary)
	key := mustKey(t, primary, "replicas@example.com", "business")
	if err := rp.WaitReplayed(ctx, primary); err != nil {
		t.Fatal(err)
	}
	replicas := database.NewReplicas(primary, []string{rp.StandbyDSN()}, database.ReplicasConfig{
		MaxLag: time.Second, Interval: 100 * time.Millisecond, Logger: quietLogger(),
		Options: database.Options{Timeout: 2 * time.Second}})
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		replicas.Run(runCtx)
		close(done)
	}()
	defer func() {
		stop()
		<-done
	}()
	srv := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords, Replicas: replicas, Metrics: true}, primary)
	h := srv.Handler()
	waitHealthy := func() {
		t.Helper()
		testkit.Eventually(t, 10*time.Second, func() error {
			if st := replicas.Status(); !st[0].Healthy {
				return fmt.Errorf("status %+v", st)
			}
			return nil
		}, "the standby to be in use")
	}
	ids := mdIDs
	prices := "/api/v1/market-data/prices/asset/" + ids.acme.String()
	count := func(t *testing.T, r response) int {
		t.Helper()
		if r.status != 200 {
			t.Fatalf("status %d, want 200: %s", r.status, r.raw)
		}
		data, _ := r.body["data"].([]any)
		return len(data)
	}

	t.Run("Current", func(t *testing.T) {
		waitHealthy()
		p0, r0 := replicas.Queries()
		if n := count(t, get(t, h, prices, key)); n != 3 {
			t.Errorf("GET %s: %d records, want 3", prices, n)
		}
		count(t, get(t, h, "/api/v1/market-data/assets", key))
		if r := get(t, h, "/api/v1/indicators/asset/"+ids.acme.String()+"/summary", key); r.status != 200 {
			t.Errorf("summary: %d %s", r.status, r.raw)
		}
		p1, r1 := replicas.Queries()
		if p1 != p0 || r1 < r0+3 {
			t.Errorf("Queries() went from (%d, %d) to (%d, %d), want 3 or more on the replica and none on the primary", p0, r0, p1, r1)
		}
		rec := httptest.NewRecorder()
		srv.MetricsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		body, _ := io.ReadAll(rec.Body)
		for _, want := range []string{`tradekit_db_queries_total{target="replica"}`, `tradekit_db_queries_total{target="primary"}`,
			`tradekit_db_replica_up{replica=`, `tradekit_db_replica_lag_seconds{replica=`} {
			if !strings.Contains(string(body), want) {
				t.Errorf("GET /metrics lacks %s:\n%s", want, body)
			}
		}
	})

	t.Run("NewPriceWhileReplayPaused", func(t *testing.T) {
		if err := rp.PauseReplay(ctx); err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := rp.ResumeReplay(ctx); err != nil {
				t.Fatal(err)
			}
		}()
		dec := decimal.RequireFromString
		err := marketdata.NewStore(primary).SavePrices(ctx, []marketdata.Price{
			{AssetID: ids.acme, Date: d("2024-01-05"), Open: dec("1"), High: dec("2"), Low: dec("1"), Close: dec("2"), Volume: 5}})
		if err != nil {
			t.Fatal(err)
		}
		// The standby is still within the bound, so it is tried; it has
		// not the version the primary has, so the read runs there.
		p0, _ := replicas.Queries()
		if n := count(t, get(t, h, prices, key)); n != 4 {
			t.Errorf("GET %s after a write, with replay paused: %d records, want 4", prices, n)
		}
		if r := get(t, h, prices+"/latest", key); r.status != 200 || !strings.Contains(r.raw, "2024-01-05") {
			t.Errorf("GET latest: %d %s, want the record of 2024-01-05", r.status, r.raw)
		}
		if p1, _ := replicas.Queries(); p1 == p0 {
			t.Errorf("no read ran on the primary: the new price cannot have come from the paused standby")
		}
	})

	t.Run("StandbyKilled", func(t *testing.T) {
		// A server whose router checks once, at start, and trusts that
		// check for long: the killed standby is found by the queries of
		// the requests, which must still answer.
		slow := database.NewReplicas(primary, []string{rp.StandbyDSN()}, database.ReplicasConfig{
			MaxLag: time.Minute, Interval: time.Hour, Logger: quietLogger(),
			Options: database.Options{Timeout: 2 * time.Second}})
		sctx, sstop := context.WithCancel(ctx)
		sdone := make(chan struct{})
		go func() {
			slow.Run(sctx)
			close(sdone)
		}()
		defer func() {
			sstop()
			<-sdone
		}()
		h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords, Replicas: slow}, primary).Handler()
		testkit.Eventually(t, 10*time.Second, func() error {
			if st := slow.Status(); !st[0].Healthy {
				return fmt.Errorf("status %+v", st)
			}
			return nil
		}, "the standby to be in use")
		if err := rp.Standby.Kill(); err != nil {
			t.Fatal(err)
		}
		_, r0 := slow.Queries()
		for _, path := range []string{
			prices,
			"/api/v1/market-data/prices/asset/" + ids.bolt.String(),
			"/api/v1/market-data/assets",
			"/api/v1/market-data/assets/" + ids.acme.String() + "/profile",
			"/api/v1/indicators/asset/" + ids.acme.String() + "/summary",
		} {
			if r := get(t, h, path, key); r.status != 200 {
				t.Errorf("GET %s with the standby killed: %d %s, want 200", path, r.status, r.raw)
			}
		}
		if _, r1 := slow.Queries(); r1 != r0+1 {
			t.Errorf("%d reads tried the killed standby, want 1 (then it is skipped)", r1-r0)
		}
	})
}
