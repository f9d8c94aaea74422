package massive_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/marketdata/feed"
	"github.com/tradekit/tradekit/marketdata/feed/feedtest"
	"github.com/tradekit/tradekit/marketdata/feed/massive"
)

// recorded serves the recorded answers: routes maps a path (and, after
// "?", a query parameter that must be present) to a file, or to "401",
// "403", "404" for those error bodies.
type recorded struct {
	t        *testing.T
	mu       sync.Mutex
	requests []*http.Request
}

func (rc *recorded) serve(routes map[string]string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc.mu.Lock()
		rc.requests = append(rc.requests, r)
		rc.mu.Unlock()
		name, best := "", ""
		for k, v := range routes { // the longest route that matches
			path, param, _ := strings.Cut(k, "?")
			if path == r.URL.Path && (param == "" || r.URL.Query().Has(param)) && len(k) > len(best) {
				name, best = v, k
			}
		}
		if name == "" {
			name = "404"
		}
		status := http.StatusOK
		switch name {
		case "401", "403", "404", "429":
			status = map[string]int{"401": 401, "403": 403, "404": 404, "429": 429}[name]
			name = "error_" + name + ".json"
		}
		w.WriteHeader(status)
		w.Write(feedtest.Recorded(rc.t, "massive/"+name))
	}))
	rc.t.Cleanup(srv.Close)
	return srv
}

func mustClient(t *testing.T, cfg massive.Config) *massive.Client {
	t.Helper()
	if cfg.APIKey == "" {
		cfg.APIKey = "k"
	}
	c, err := massive.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestMassiveDayBars(t *testing.T) {
	rc := &recorded{t: t}
	srv := rc.serve(map[string]string{"/v2/aggs/grouped/locale/us/market/stocks/2026-11-23": "grouped_2026-11-23.json",
		"/v2/aggs/grouped/locale/us/market/stocks/2026-11-24": "grouped_empty.json"})
	c := mustClient(t, massive.Config{BaseURL: srv.URL, APIKey: "secret"})
	bars, err := c.DayBars(context.Background(), calendar.NewDate(2026, 11, 23), nil)
	if err != nil {
		t.Fatal(err)
	}
	d := decimal.RequireFromString
	want := []feed.Bar{
		{Symbol: "KIMpL", Open: d("26.07"), High: d("26.25"), Low: d("25.91"), Close: d("25.9102"), Volume: 4369},
		{Symbol: "TANH", Open: d("24.5"), High: d("24.763"), Low: d("22.65"), Close: d("23.4"), Volume: 25934},
		{Symbol: "VSAT", Open: d("34.9"), High: d("35.47"), Low: d("34.21"), Close: d("34.24"), Volume: 312583},
		{Symbol: "ZZQX", Open: d("1"), High: d("1.05"), Low: d("0.98"), Close: d("1.02"), Volume: 5100},
	}
	if diff := cmp.Diff(want, bars); diff != "" {
		t.Errorf("DayBars mismatch (-want +got):\n%s", diff)
	}
	q := rc.requests[0].URL.Query()
	if q.Get("adjusted") != "false" || q.Get("apiKey") != "secret" {
		t.Errorf("query = %v, want adjusted=false and apiKey=secret", q)
	}
	bars, err = c.DayBars(context.Background(), calendar.NewDate(2026, 11, 24), nil)
	if err != nil || len(bars) != 0 {
		t.Errorf("empty day: DayBars = %v, %v; want none, nil", bars, err)
	}
}

func TestMassiveBearer(t *testing.T) {
	rc := &recorded{t: t}
	srv := rc.serve(map[string]string{"/v2/aggs/grouped/locale/us/market/stocks/2026-11-24": "grouped_empty.json"})
	c := mustClient(t, massive.Config{BaseURL: srv.URL + "/", APIKey: "secret", Bearer: true})
	if _, err := c.DayBars(context.Background(), calendar.NewDate(2026, 11, 24), nil); err != nil {
		t.Fatal(err)
	}
	r := rc.requests[0]
	if got := r.Header.Get("Authorization"); got != "Bearer secret" || r.URL.Query().Has("apiKey") {
		t.Errorf("Authorization = %q, apiKey in query %v; want the Bearer header only", got, r.URL.Query().Has("apiKey"))
	}
}

func TestMassiveAssetsPages(t *testing.T) {
	rc := &recorded{t: t}
	srv := rc.serve(map[string]string{"/v3/reference/tickers": "tickers_page1.json", "/v3/reference/tickers?cursor": "tickers_page2.json",
		"/v3/reference/tickers?ticker": "tickers_unknown.json"})
	c := mustClient(t, massive.Config{BaseURL: srv.URL})
	// More symbols than are asked one by one: the list is paged through,
	// its next_url (on Massive's public host) followed on the base URL.
	syms := []string{"KIMpL", "TANH", "VSAT"}
	for i := range 30 {
		syms = append(syms, "ZZ"+string(rune('A'+i%26))+string(rune('A'+i/26)))
	}
	got, err := c.Assets(context.Background(), syms)
	if err != nil {
		t.Fatal(err)
	}
	want := []feed.AssetInfo{
		{Symbol: "KIMpL", Name: "Kimco Realty Corp. Class L Depositary Shares", Type: marketdata.Stock, MIC: "XNYS", Currency: "USD"},
		{Symbol: "TANH", Name: "World Health Energy Holdings", Type: marketdata.Stock, MIC: "XNAS", Currency: "USD"},
		{Symbol: "VSAT", Name: "Viasat Inc", Type: marketdata.Stock, MIC: "XNAS", Currency: "USD"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Assets mismatch (-want +got):\n%s", diff)
	}
	if n := len(rc.requests); n != 2 || rc.requests[1].URL.Query().Get("apiKey") != "k" {
		t.Errorf("%d requests, the second's apiKey %q; want 2, the key carried to the next page", n, rc.requests[len(rc.requests)-1].URL.Query().Get("apiKey"))
	}
	// A few symbols: one request each; one the reference does not know is
	// left out.
	got, err = c.Assets(context.Background(), []string{"ZZQX"})
	if err != nil || len(got) != 0 {
		t.Errorf("unknown ticker: Assets = %v, %v; want none, nil", got, err)
	}
}

func TestMassiveActions(t *testing.T) {
	rc := &recorded{t: t}
	srv := rc.serve(map[string]string{"/v3/reference/splits": "splits_page1.json", "/v3/reference/splits?cursor": "splits_page2.json",
		"/v3/reference/dividends": "dividends.json"})
	c := mustClient(t, massive.Config{BaseURL: srv.URL})
	got, err := c.Actions(context.Background(), calendar.NewDate(2026, 11, 2), calendar.NewDate(2026, 11, 30), nil)
	if err != nil {
		t.Fatal(err)
	}
	d := decimal.RequireFromString
	want := []feed.Action{
		{Symbol: "VSAT", Date: calendar.NewDate(2026, 11, 16), Kind: marketdata.Split, Value: d("4")},
		{Symbol: "TANH", Date: calendar.NewDate(2026, 11, 18), Kind: marketdata.Split, Value: d("0.1")},
		{Symbol: "KIMpL", Date: calendar.NewDate(2026, 11, 20), Kind: marketdata.Dividend, Value: d("0.22")},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Actions mismatch (-want +got):\n%s", diff)
	}
	q := rc.requests[0].URL.Query()
	if q.Get("execution_date.gte") != "2026-11-02" || q.Get("execution_date.lte") != "2026-11-30" {
		t.Errorf("splits query = %v, want the range", q)
	}
}

func TestMassiveErrors(t *testing.T) {
	day := calendar.NewDate(2026, 11, 23)
	for _, tt := range []struct {
		name    string
		status  string
		wantErr error
		wantMsg string
	}{
		{"401", "401", feed.ErrAuth, "401 Unauthorized: Unknown API Key"},
		{"403", "403", feed.ErrAuth, "403 Forbidden: You are not entitled to this data"},
		{"404", "404", tradekit.ErrNotFound, "404 Not Found: The requested resource was not found."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rc := &recorded{t: t}
			srv := rc.serve(map[string]string{"/v2/aggs/grouped/locale/us/market/stocks/2026-11-23": tt.status})
			c := mustClient(t, massive.Config{BaseURL: srv.URL, APIKey: "secret"})
			_, err := c.DayBars(context.Background(), day, nil)
			if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("err = %v, want %v saying %q", err, tt.wantErr, tt.wantMsg)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("err = %v names the key", err)
			}
			// Refused credentials are reported once: no second request.
			_, err2 := c.DayBars(context.Background(), day, nil)
			if want := map[bool]int{true: 1, false: 2}[errors.Is(tt.wantErr, feed.ErrAuth)]; len(rc.requests) != want {
				t.Errorf("%d requests after two calls (err2 %v), want %d", len(rc.requests), err2, want)
			}
		})
	}
}

func TestMassiveRetries(t *testing.T) {
	m := feedtest.NewMarket(3, calendar.NewDate(2026, 11, 23), calendar.NewDate(2026, 11, 23))
	srv := feedtest.NewMassive(t, m)
	srv.Fail("/v2/aggs/", 429, 1, "7")
	srv.Fail("/v2/aggs/", 503, 2, "")
	var waits []time.Duration
	c := mustClient(t, massive.Config{BaseURL: srv.URL, APIKey: srv.Key, Backoff: time.Second,
		Sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }})
	bars, err := c.DayBars(context.Background(), calendar.NewDate(2026, 11, 23), nil)
	if err != nil || len(bars) != 3 {
		t.Fatalf("DayBars = %d bars, %v; want 3, nil", len(bars), err)
	}
	// The 429's Retry-After, then the backoff doubling for the 503s.
	if diff := cmp.Diff([]time.Duration{7 * time.Second, 2 * time.Second, 4 * time.Second}, waits); diff != "" {
		t.Errorf("waits mismatch (-want +got):\n%s", diff)
	}
	// Retries run out: the provider's 429 message is reported.
	srv.Fail("/v2/aggs/", 429, 10, "1")
	c = mustClient(t, massive.Config{BaseURL: srv.URL, APIKey: srv.Key, Retries: 2,
		Sleep: func(context.Context, time.Duration) error { return nil }})
	_, err = c.DayBars(context.Background(), calendar.NewDate(2026, 11, 23), nil)
	if err == nil || !strings.Contains(err.Error(), "429 Too Many Requests: You've exceeded the maximum requests per minute") {
		t.Errorf("err = %v, want the 429's message", err)
	}
}

func TestMassiveRateLimit(t *testing.T) {
	m := feedtest.NewMarket(1, calendar.NewDate(2026, 11, 23), calendar.NewDate(2026, 11, 23))
	srv := feedtest.NewMassive(t, m)
	var waited time.Duration
	c := mustClient(t, massive.Config{BaseURL: srv.URL, APIKey: srv.Key, PerMinute: 5,
		Sleep: func(_ context.Context, d time.Duration) error { waited += d; return nil }})
	for range 3 {
		if _, err := c.DayBars(context.Background(), calendar.NewDate(2026, 11, 23), nil); err != nil {
			t.Fatal(err)
		}
	}
	// 5 a minute: the 2nd and 3rd requests wait about 12 s and 24 s for
	// their slots (less the time the requests took).
	if waited < 35*time.Second || waited > 36*time.Second {
		t.Errorf("waited %s in all for 3 requests at 5/min, want about 36s", waited)
	}
}

func TestMassiveConfig(t *testing.T) {
	for _, tt := range []struct {
		name string
		cfg  massive.Config
	}{
		{"no key", massive.Config{}},
		{"bad URL", massive.Config{APIKey: "k", BaseURL: "ftp://x"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := massive.New(tt.cfg); !errors.Is(err, tradekit.ErrInvalid) {
				t.Errorf("New(%+v) = %v, want ErrInvalid", tt.cfg, err)
			}
		})
	}
}
