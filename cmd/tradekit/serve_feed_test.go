package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/database"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/internal/testkit"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/marketdata/demo"
	"github.com/tradekit/tradekit/marketdata/feed"
	"github.com/tradekit/tradekit/marketdata/feed/feedtest"
)

// TestServeFeedBackfillTwoInstances: two `serve --feed massive` start at
// once on a database whose bars stop five sessions before the last daily
// run time that has passed; exactly one of them backfills the five days,
// in one recorded run, and the metrics of the two count one run.
func TestServeFeedBackfillTwoInstances(t *testing.T) {
	dbtest.EachDSN(t, func(t *testing.T, dsn string) {
		cal, _ := calendar.Lookup("XNYS")
		nyc, _ := time.LoadLocation("America/New_York")
		now := time.Now().In(nyc)
		today := calendar.DateOf(now)
		sessions, err := cal.Sessions(today.AddDays(-20), today)
		if err != nil {
			t.Fatal(err)
		}
		if last := sessions[len(sessions)-1]; last == today && now.Hour() < 18 {
			sessions = sessions[:len(sessions)-1] // today's run (18:00) is still to come
		}
		gap := sessions[len(sessions)-5:]
		m := feedtest.NewMarket(30, sessions[0], sessions[len(sessions)-1])
		srv := feedtest.NewMassive(t, m)
		env := map[string]string{"TRADEKIT_DB": dsn, "TRADEKIT_MASSIVE_URL": srv.URL, "TRADEKIT_MASSIVE_API_KEY": srv.Key}
		if _, err := cli(t, env, "feed", "run", "--provider", "massive", "--from", sessions[0].String(),
			"--to", sessions[len(sessions)-6].String()); err != nil {
			t.Fatal(err)
		}
		before := len(srv.Requests("/v2/aggs/"))

		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		addrs := twoFreeAddrs(t)
		done := make(chan error, 2)
		logs := make([]*syncBuffer, 2)
		for i, addr := range addrs {
			logs[i] = &syncBuffer{}
			go func() {
				done <- run(ctx, []string{"serve", "--addr", addr, "--no-seed", "--metrics", "--feed", "massive"},
					func(k string) string { return env[k] }, strings.NewReader(""), io.Discard, logs[i])
			}()
		}
		t.Cleanup(func() {
			if t.Failed() {
				for i, l := range logs {
					t.Logf("serve %s log:\n%s", addrs[i], l.String())
				}
			}
		})
		for _, addr := range addrs {
			waitServing(t, "http://"+addr+"/healthz", done)
		}
		db, err := database.Open(ctx, dsn, database.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		st := feed.NewStore(db)
		testkit.Eventually(t, 30*time.Second, func() error {
			runs, err := st.Runs(ctx, "massive", 10)
			if err != nil || len(runs) < 2 || runs[0].Outcome == feed.OutcomeRunning {
				return fmt.Errorf("runs %+v, %v", runs, err)
			}
			next, err := st.NextRuns(ctx)
			if _, ok := next["massive"]; !ok {
				return fmt.Errorf("no next run: %v, %v", next, err)
			}
			return nil
		}, "serve's backfill to end and schedule the next run")
		// Nothing more may happen: the other instance comes to its own
		// start and finds nothing to do. A bounded sleep, then no third run.
		time.Sleep(500 * time.Millisecond)
		runs, _ := st.Runs(ctx, "massive", 10)
		if len(runs) != 2 || runs[0].Days != 5 || runs[0].Outcome != feed.OutcomeOK || runs[0].Instance == "cli" {
			t.Fatalf("runs = %+v, want the CLI's and one backfill of 5 days by serve", runs)
		}
		got := srv.Requests("/v2/aggs/")[before:]
		if len(got) != 5 || !strings.Contains(got[0], gap[0].String()) || !strings.Contains(got[4], gap[4].String()) {
			t.Errorf("requests %v, want the 5 days of the gap %v once", got, gap)
		}
		counted, timed := 0, 0
		for _, addr := range addrs {
			res, err := http.Get("http://" + addr + "/metrics")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if strings.Contains(string(body), `tradekit_feed_runs_total{outcome="ok",provider="massive"} 1`) {
				counted++
			}
			if strings.Contains(string(body), `tradekit_feed_provider_request_duration_seconds_count{provider="massive",status="2xx"} 7`) {
				timed++
			}
		}
		if counted != 1 || timed != 1 {
			t.Errorf("%d instances count an ok run and %d the provider's 7 answers (5 days, splits, dividends), want 1 and 1", counted, timed)
		}
		cancel()
		for range addrs {
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("serve: %v", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("serve did not stop")
			}
		}
	})
}

func TestServeFeedFlags(t *testing.T) {
	dsn := dbtest.SQLiteDSN(t)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--feed", "yahoo"}, `serve: --feed: --provider must be massive or alpaca, got "yahoo"`},
		{[]string{"--feed", "massive", "--feed-at", "25:00"}, `serve: --feed-at must be HH:MM, 00:00 to 23:59, got "25:00"`},
		{[]string{"--feed", "massive", "--feed-backfill", "0"}, "serve: --feed-backfill must be from 1 to 3660 days, got 0"},
		{[]string{"--feed", "massive"}, "TRADEKIT_MASSIVE_API_KEY"},
	} {
		_, err := cli(t, map[string]string{"TRADEKIT_DB": dsn}, append([]string{"serve", "--addr", "127.0.0.1:0", "--no-seed"}, tt.args...)...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("serve %v: %v, want %q", tt.args, err, tt.want)
		}
	}
}

// twoFreeAddrs returns two distinct free loopback addresses: both ports
// are held while the second is chosen.
func twoFreeAddrs(t *testing.T) []string {
	t.Helper()
	var addrs []string
	for range 2 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		addrs = append(addrs, l.Addr().String())
	}
	return addrs
}

// waitServing is waitHealthy of a serve run in this process, whose
// error, when it ends early (its port taken meanwhile, say), comes on
// done and fails the test at once.
func waitServing(t *testing.T, url string, done <-chan error) {
	t.Helper()
	healthy := make(chan bool, 1)
	go func() {
		healthy <- testkit.Poll(30*time.Second, func() error {
			res, err := http.Get(url)
			if err != nil {
				return err
			}
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				return fmt.Errorf("%s: %d", url, res.StatusCode)
			}
			return nil
		}) == nil
	}()
	select {
	case ok := <-healthy:
		if !ok {
			t.Fatalf("%s never answered", url)
		}
	case err := <-done:
		t.Fatalf("serve ended before %s answered: %v", url, err)
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestServeFeedNoDemoSeed: serve --feed on an empty database loads no
// demo data set; the feed fills it.
func TestServeFeedNoDemoSeed(t *testing.T) {
	dbtest.EachDSN(t, func(t *testing.T, dsn string) {
		m := feedtest.NewMarket(3, calendar.NewDate(2026, 11, 23), calendar.NewDate(2026, 11, 23))
		srv := feedtest.NewMassive(t, m)
		env := map[string]string{"TRADEKIT_DB": dsn, "TRADEKIT_MASSIVE_URL": srv.URL, "TRADEKIT_MASSIVE_API_KEY": srv.Key}
		serveOnce(t, env, "--feed", "massive", "--feed-backfill", "1")
		db, err := database.Open(context.Background(), dsn, database.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if ok, err := demo.IsLoaded(context.Background(), marketdata.NewStore(db)); err != nil || ok {
			t.Errorf("demo.IsLoaded = %v, %v; want no demo data with --feed", ok, err)
		}
	})
}
