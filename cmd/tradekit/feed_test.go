package main

import (
	"strings"
	"testing"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/marketdata/feed/feedtest"
)

// TestFeedRunCLI runs `tradekit feed run` against a fake Massive on both
// databases: the summary line, a 429 with Retry-After honoured, a rerun
// that changes nothing and says so, and `feed status`.
func TestFeedRunCLI(t *testing.T) {
	dbtest.EachDSN(t, func(t *testing.T, dsn string) {
		m := feedtest.NewMarket(20, calendar.NewDate(2026, 11, 23), calendar.NewDate(2026, 11, 30))
		srv := feedtest.NewMassive(t, m)
		srv.Fail("/v2/aggs/", 429, 1, "1")
		env := map[string]string{"TRADEKIT_DB": dsn, "TRADEKIT_MASSIVE_URL": srv.URL, "TRADEKIT_MASSIVE_API_KEY": srv.Key}
		out, stderr, err := cli2(t, env, "feed", "run", "--provider", "massive", "--from", "2026-11-23", "--to", "2026-11-30")
		if err != nil {
			t.Fatalf("feed run: %v (stderr %s)", err, stderr)
		}
		// Thanksgiving (26th) and the weekend are skipped: 5 sessions.
		if !strings.HasPrefix(out, "massive: 5 trading days from 2026-11-23 to 2026-11-30: 5 fetched, 0 already stored, 0 failed; 100 rows, 20 new assets, 0 actions in ") {
			t.Errorf("summary %q", out)
		}
		if n := len(srv.Requests("/v2/aggs/")); n != 6 {
			t.Errorf("%d grouped-daily requests, want 6 (5 days and the 429's retry)", n)
		}
		out, _, err = cli2(t, env, "feed", "run", "--provider", "massive", "--from", "2026-11-23", "--to", "2026-11-30")
		if err != nil || !strings.Contains(out, "5 already stored") || !strings.Contains(out, "(nothing changed)") {
			t.Errorf("rerun = %q, %v; want nothing changed", out, err)
		}
		out, err = cli(t, env, "feed", "status")
		if err != nil || !strings.Contains(out, "massive   ok") || !strings.Contains(out, "2026-11-23..2026-11-30") {
			t.Errorf("feed status = %q, %v; want the run", out, err)
		}
	})
}

// TestFeedRunCLIErrors: bad flags name the flag; refused credentials are
// reported once with the provider's message.
func TestFeedRunCLIErrors(t *testing.T) {
	m := feedtest.NewMarket(3, calendar.NewDate(2026, 11, 23), calendar.NewDate(2026, 11, 25))
	srv := feedtest.NewMassive(t, m)
	dsn := dbtest.SQLiteDSN(t)
	env := map[string]string{"TRADEKIT_DB": dsn, "TRADEKIT_MASSIVE_URL": srv.URL, "TRADEKIT_MASSIVE_API_KEY": srv.Key}
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"no provider", []string{"--from", "2026-11-23"}, "--provider is required"},
		{"bad provider", []string{"--provider", "yahoo", "--from", "2026-11-23"}, `--provider must be massive or alpaca, got "yahoo"`},
		{"no from", []string{"--provider", "massive"}, "--from is required"},
		{"bad from", []string{"--provider", "massive", "--from", "2026-02-30"}, "--from:"},
		{"bad rate", []string{"--provider", "massive", "--from", "2026-11-23", "--rate", "fast"}, "--rate must be N/min"},
		{"reversed", []string{"--provider", "massive", "--from", "2026-11-25", "--to", "2026-11-23"}, "--from 2026-11-25 is after --to 2026-11-23"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := cli(t, env, append([]string{"feed", "run"}, tt.args...)...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
	t.Run("no key", func(t *testing.T) {
		_, err := cli(t, map[string]string{"TRADEKIT_DB": dsn}, "feed", "run", "--provider", "massive", "--from", "2026-11-23")
		if err == nil || !strings.Contains(err.Error(), "TRADEKIT_MASSIVE_API_KEY") {
			t.Errorf("err = %v, want the variable to set", err)
		}
	})
	t.Run("refused", func(t *testing.T) {
		bad := map[string]string{"TRADEKIT_DB": dsn, "TRADEKIT_MASSIVE_URL": srv.URL, "TRADEKIT_MASSIVE_API_KEY": "wrong"}
		_, stderr, err := cli2(t, bad, "feed", "run", "--provider", "massive", "--from", "2026-11-23", "--to", "2026-11-25")
		if err == nil || !strings.Contains(err.Error(), "Unknown API Key") || strings.Count(stderr, "Unknown API Key") != 1 {
			t.Errorf("err = %v, stderr %q; want the 401's message once", err, stderr)
		}
	})
}

// TestFeedRunAlpacaCLI runs `tradekit feed run --provider alpaca` against a
// fake Alpaca: it updates the assets the database holds.
func TestFeedRunAlpacaCLI(t *testing.T) {
	dbtest.EachDSN(t, func(t *testing.T, dsn string) {
		m := feedtest.NewMarket(3, calendar.NewDate(2026, 11, 23), calendar.NewDate(2026, 11, 30))
		srv := feedtest.NewAlpaca(t, m)
		env := map[string]string{"TRADEKIT_DB": dsn, "TRADEKIT_ALPACA_DATA_URL": srv.URL,
			"TRADEKIT_ALPACA_KEY_ID": srv.Key, "TRADEKIT_ALPACA_SECRET_KEY": srv.Secret}
		csv := writeFile(t, "assets.csv", "symbol,name,type,exchange,currency\nS0000,Zero,stock,NYSE,USD\nS0001,One,stock,NASDAQ,USD\n")
		if _, err := cli(t, env, "import", "assets", "--file", csv); err != nil {
			t.Fatal(err)
		}
		out, err := cli(t, env, "feed", "run", "--provider", "alpaca", "--from", "2026-11-23", "--to", "2026-11-30")
		if err != nil || !strings.HasPrefix(out, "alpaca: 5 trading days from 2026-11-23 to 2026-11-30: 5 fetched, 0 already stored, 0 failed; 10 rows, 0 new assets") {
			t.Errorf("feed run = %q, %v", out, err)
		}
	})
}

// TestFeedRunAlpacaNoAssets: Alpaca with no US assets in the database
// fails every day with one reason, said once.
func TestFeedRunAlpacaNoAssets(t *testing.T) {
	m := feedtest.NewMarket(3, calendar.NewDate(2026, 11, 23), calendar.NewDate(2026, 11, 30))
	srv := feedtest.NewAlpaca(t, m)
	env := map[string]string{"TRADEKIT_DB": dbtest.SQLiteDSN(t), "TRADEKIT_ALPACA_DATA_URL": srv.URL,
		"TRADEKIT_ALPACA_KEY_ID": srv.Key, "TRADEKIT_ALPACA_SECRET_KEY": srv.Secret}
	_, stderr, err := cli2(t, env, "feed", "run", "--provider", "alpaca", "--from", "2026-11-23", "--to", "2026-11-30")
	if err == nil || strings.Count(stderr, "no symbols to ask for") != 1 || !strings.Contains(stderr, "2026-11-23 to 2026-11-30 (5 days)") {
		t.Errorf("err = %v, stderr %q; want the reason once for the 5 days", err, stderr)
	}
	if n := len(srv.Requests("")); n != 0 {
		t.Errorf("%d requests, want none", n)
	}
}
