package alpacadata_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/marketdata/feed"
	"github.com/tradekit/tradekit/marketdata/feed/alpacadata"
	"github.com/tradekit/tradekit/marketdata/feed/feedtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

func mustClient(t testing.TB, base string, waits *[]time.Duration) *alpacadata.Client {
	t.Helper()
	c, err := alpacadata.New(alpacadata.Config{BaseURL: base, KeyID: "test-key", SecretKey: "test-secret",
		Sleep: func(_ context.Context, d time.Duration) error {
			if waits != nil {
				*waits = append(*waits, d)
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestAlpacaRecorded decodes the recorded answers: two pages of bars (the
// second asked with the first's next_page_token), an empty day, and the
// corporate actions.
func TestAlpacaRecorded(t *testing.T) {
	var reqs []*http.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reqs = append(reqs, r)
		q := r.URL.Query()
		name := "bars_empty.json"
		switch {
		case r.URL.Path == "/v1/corporate-actions":
			name = "corporate_actions.json"
		case q.Get("start") == "2026-11-23" && q.Get("page_token") == "":
			name = "bars_page1.json"
		case q.Get("start") == "2026-11-23":
			name = "bars_page2.json"
		}
		w.Write(feedtest.Recorded(t, "alpaca/"+name))
	}))
	defer srv.Close()
	c := mustClient(t, srv.URL, nil)
	day := calendar.NewDate(2026, 11, 23)
	got, err := c.DayBars(context.Background(), day, []string{"AAPL", "MSFT"})
	if err != nil {
		t.Fatal(err)
	}
	d := decimal.RequireFromString
	want := []feed.Bar{
		{Symbol: "AAPL", Open: d("228.06"), High: d("230.72"), Low: d("228.06"), Close: d("229.87"), Volume: 42256780},
		{Symbol: "MSFT", Open: d("419.5"), High: d("419.78"), Low: d("414.28"), Close: d("417"), Volume: 17254800},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("DayBars mismatch (-want +got):\n%s", diff)
	}
	q, h := reqs[0].URL.Query(), reqs[0].Header
	if q.Get("symbols") != "AAPL,MSFT" || q.Get("timeframe") != "1Day" || q.Get("adjustment") != "raw" ||
		h.Get("APCA-API-KEY-ID") != "test-key" || h.Get("APCA-API-SECRET-KEY") != "test-secret" {
		t.Errorf("first request %v, headers %v", q, h)
	}
	if tok := reqs[1].URL.Query().Get("page_token"); tok != "QUFQTHxEfDIwMjYtMTEtMjNUMDU6MDA6MDAuMDAwMDAwMDAwWg==" {
		t.Errorf("second page_token %q, want the first page's next_page_token", tok)
	}
	if got, err := c.DayBars(context.Background(), day.AddDays(1), []string{"AAPL"}); err != nil || len(got) != 0 {
		t.Errorf("empty day: %v, %v", got, err)
	}
	acts, err := c.Actions(context.Background(), calendar.NewDate(2026, 11, 2), calendar.NewDate(2026, 11, 30), []string{"AAPL", "MSFT", "ZZQX"})
	if err != nil {
		t.Fatal(err)
	}
	wantActs := []feed.Action{
		{Symbol: "AAPL", Date: calendar.NewDate(2026, 11, 16), Kind: marketdata.Split, Value: d("4")},
		{Symbol: "ZZQX", Date: calendar.NewDate(2026, 11, 18), Kind: marketdata.Split, Value: d("0.1")},
		{Symbol: "MSFT", Date: calendar.NewDate(2026, 11, 20), Kind: marketdata.Dividend, Value: d("0.83")},
	}
	if diff := cmp.Diff(wantActs, acts); diff != "" {
		t.Errorf("Actions mismatch (-want +got):\n%s", diff)
	}
}

func TestAlpacaErrors(t *testing.T) {
	m := feedtest.NewMarket(3, calendar.NewDate(2026, 11, 23), calendar.NewDate(2026, 11, 23))
	for _, tt := range []struct {
		status  int
		wantErr error
		wantMsg string
	}{
		{401, feed.ErrAuth, "401 Unauthorized: request is not authorized"},
		{403, feed.ErrAuth, "403 Forbidden: subscription does not permit querying recent SIP data"},
		{404, tradekit.ErrNotFound, "404 Not Found: endpoint not found"},
	} {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			srv := feedtest.NewAlpaca(t, m)
			srv.Fail("/v2/stocks/bars", tt.status, 1, "")
			c := mustClient(t, srv.URL, nil)
			_, err := c.DayBars(context.Background(), calendar.NewDate(2026, 11, 23), m.Symbols)
			if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.wantMsg) || strings.Contains(err.Error(), "test-secret") {
				t.Errorf("err = %v, want %v saying %q", err, tt.wantErr, tt.wantMsg)
			}
		})
	}
	t.Run("429", func(t *testing.T) {
		srv := feedtest.NewAlpaca(t, m)
		srv.Fail("/v2/stocks/bars", 429, 1, "2")
		var waits []time.Duration
		c := mustClient(t, srv.URL, &waits)
		bars, err := c.DayBars(context.Background(), calendar.NewDate(2026, 11, 23), m.Symbols)
		if err != nil || len(bars) != 3 || len(waits) != 1 || waits[0] != 2*time.Second {
			t.Errorf("DayBars = %d bars, %v, waits %v; want 3 bars after waiting the Retry-After of 2s", len(bars), err, waits)
		}
	})
	t.Run("no symbols", func(t *testing.T) {
		c := mustClient(t, "http://127.0.0.1:1", nil)
		if _, err := c.DayBars(context.Background(), calendar.NewDate(2026, 11, 23), nil); !errors.Is(err, tradekit.ErrInvalid) {
			t.Errorf("err = %v, want ErrInvalid", err)
		}
	})
	t.Run("config", func(t *testing.T) {
		if _, err := alpacadata.New(alpacadata.Config{KeyID: "k"}); !errors.Is(err, tradekit.ErrInvalid) || !strings.Contains(err.Error(), "TRADEKIT_ALPACA_SECRET_KEY") {
			t.Errorf("New without a secret = %v", err)
		}
	})
}

// TestAlpacaRun runs the feed end to end with Alpaca on both databases:
// 250 held symbols (two requests a day, bars cut into pages), a split and
// a dividend, the Thanksgiving week, a rerun that changes nothing.
func TestAlpacaRun(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		from, to := calendar.NewDate(2026, 11, 2), calendar.NewDate(2026, 11, 30)
		m := feedtest.NewMarket(250, from, to)
		md := marketdata.NewStore(db)
		nyse, err := md.ExchangeBySymbol(ctx, "NYSE")
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range m.Symbols {
			a := marketdata.Asset{Symbol: s, Name: s, Type: marketdata.Stock, ExchangeID: nyse.ID, Currency: "USD", IsActive: true}
			if err := md.SaveAsset(ctx, &a); err != nil {
				t.Fatal(err)
			}
		}
		srv := feedtest.NewAlpaca(t, m)
		srv.PageSize = 120
		r := &feed.Runner{DB: db, Provider: mustClient(t, srv.URL, nil)}
		res, err := r.Run(ctx, from, to)
		if err != nil || res.Err() != nil {
			t.Fatalf("Run = %s, %v, %v", res, err, res.Err())
		}
		if res.Fetched != 20 || res.Rows != 20*250 || len(res.NewAssets) != 0 || res.Actions != 2 {
			t.Errorf("result = %s, want 20 days, 5000 rows, no new asset, 2 actions", res)
		}
		for _, q := range srv.Requests("/v2/stocks/bars") {
			if strings.Contains(q, "2026-11-26") || strings.Contains(q, "2026-11-28") {
				t.Errorf("request %s for a day NYSE does not trade", q)
			}
		}
		a, _ := md.AssetBySymbol(ctx, "S0001")
		adj, err := md.AdjustedPrices(ctx, a.ID, from, to)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := md.Prices(ctx, a.ID, from, to)
		if !adj[0].Close.Mul(decimal.NewFromInt(4)).Sub(raw[0].Close).Abs().LessThan(decimal.New(1, -4)) {
			t.Errorf("first adjusted close %s, raw %s: want a quarter, the split's", adj[0].Close, raw[0].Close)
		}
		res, err = r.Run(ctx, from, to)
		if err != nil || !res.Unchanged() || res.Fetched != 0 {
			t.Errorf("rerun = %s, %v; want nothing changed", res, err)
		}
	})
}
