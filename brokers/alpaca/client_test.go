package alpaca_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"
	"golang.org/x/oauth2"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/brokers/alpaca"
)

// The bodies below have the shapes of the examples in Alpaca's Trading
// API reference (docs.alpaca.markets: Account, Positions, Orders,
// Portfolio History), with fields Tradekit does not read left in so that
// the client is seen to ignore them, and values changed to exercise
// exact decimals and nulls.

const accountBody = `{
  "id": "1d9eed04-be39-4e01-9b84-a48ac5bbafcf",
  "admin_configurations": {},
  "user_configurations": null,
  "account_number": "PA3BQYZ0LMOE",
  "status": "ACTIVE",
  "crypto_status": "ACTIVE",
  "currency": "USD",
  "buying_power": "245432.61",
  "regt_buying_power": "245432.61",
  "daytrading_buying_power": "0",
  "options_buying_power": "122716.305",
  "effective_buying_power": "245432.61",
  "non_marginable_buying_power": "99872.93",
  "bod_dtbp": 0,
  "cash": "99872.93",
  "accrued_fees": "0",
  "pending_transfer_in": "0",
  "portfolio_value": "101132.54",
  "pattern_day_trader": false,
  "trading_blocked": false,
  "transfers_blocked": false,
  "account_blocked": false,
  "created_at": "2023-01-01T18:20:20.272275Z",
  "trade_suspended_by_user": false,
  "multiplier": "2",
  "shorting_enabled": true,
  "equity": "101132.54000000000001",
  "last_equity": "100011.09751111286868",
  "long_market_value": "1259.61",
  "short_market_value": "0",
  "position_market_value": "1259.61",
  "initial_margin": "629.805",
  "maintenance_margin": "377.883",
  "last_maintenance_margin": "0",
  "sma": "0",
  "daytrade_count": 0,
  "crypto_tier": 1
}`

const positionsBody = `[
  {"asset_id": "4ce9353c-66d1-46c2-898f-fce867ab0247", "symbol": "NVDA", "exchange": "NASDAQ",
   "asset_class": "us_equity", "asset_marginable": true, "qty": "4", "avg_entry_price": "826.63",
   "side": "long", "market_value": "3706", "cost_basis": "3306.52", "unrealized_pl": "399.48",
   "unrealized_plpc": "0.1208158426381815", "unrealized_intraday_pl": "-94.08",
   "unrealized_intraday_plpc": "-0.0247573735289783", "current_price": "926.5",
   "lastday_price": "950.02", "change_today": "-0.0247573735289783", "qty_available": "4"},
  {"asset_id": "8ccae427-5dd0-45b3-b5fe-7ba5e422c766", "symbol": "TSLA", "exchange": "NASDAQ",
   "asset_class": "us_equity", "asset_marginable": true, "qty": "-10", "avg_entry_price": "201.3075",
   "side": "short", "market_value": "-1789.8", "cost_basis": "-2013.075", "unrealized_pl": "223.275",
   "unrealized_plpc": "0.110912410118848", "current_price": "178.98", "lastday_price": "172.63",
   "change_today": "0.0367838730232289", "qty_available": "-10"},
  {"asset_id": "276e2673-764b-4ab6-a611-caf665ca6340", "symbol": "BTC/USD", "exchange": "CRYPTO",
   "asset_class": "crypto", "asset_marginable": false, "qty": "0.012345678", "avg_entry_price": "64012.5",
   "side": "long", "market_value": null, "cost_basis": "790.2484138125", "unrealized_pl": null,
   "unrealized_plpc": null, "current_price": null, "lastday_price": null, "change_today": null,
   "qty_available": "0.012345678"}
]`

// order returns one element of GET /v2/orders.
func order(id, symbol, side, status, submitted, filledQty, avgPrice, filledAt, updated string) string {
	null := func(s string) string {
		if s == "" {
			return "null"
		}
		return `"` + s + `"`
	}
	return fmt.Sprintf(`{"id": %q, "client_order_id": "c-%s", "created_at": %q, "updated_at": %q,
  "submitted_at": %q, "filled_at": %s, "expired_at": null, "canceled_at": null, "failed_at": null,
  "replaced_at": null, "replaced_by": null, "replaces": null,
  "asset_id": "b0b6dd9d-8b9b-48a9-ba46-b9d54906e415", "symbol": %q, "asset_class": "us_equity",
  "notional": null, "qty": %q, "filled_qty": %q, "filled_avg_price": %s,
  "order_class": "", "order_type": "market", "type": "market", "side": %q, "position_intent": "buy_to_open",
  "time_in_force": "day", "limit_price": null, "stop_price": null, "status": %q,
  "extended_hours": false, "legs": null, "trail_percent": null, "trail_price": null, "hwm": null,
  "subtag": null, "source": null, "expires_at": %q}`,
		id, id, submitted, updated, submitted, null(filledAt), symbol, filledQty, filledQty, null(avgPrice),
		side, status, updated)
}

var ordersBody = "[" + strings.Join([]string{
	order("61e69015-8549-4bfd-b9c3-01e75843f47d", "AAPL", "buy", "filled",
		"2025-01-06T14:30:00.937734Z", "10", "229.98", "2025-01-06T15:00:01.5Z", "2025-01-06T15:00:01.5Z"),
	order("71e69015-8549-4bfd-b9c3-01e75843f47e", "AAPL", "sell", "canceled",
		"2025-01-06T14:31:00Z", "0", "", "", "2025-01-06T14:40:00Z"),
	order("81e69015-8549-4bfd-b9c3-01e75843f47f", "MSFT", "sell", "filled",
		"2025-01-06T14:31:30.000001Z", "0.5", "418.123456789", "2025-01-06T14:31:30.2Z", "2025-01-06T14:31:30.2Z"),
	order("91e69015-8549-4bfd-b9c3-01e75843f470", "NVDA", "buy", "canceled",
		"2025-01-06T14:45:00Z", "3", "140.01", "", "2025-01-06T20:00:00Z"),
}, ",\n") + "]"

// A 1D history as Alpaca sends it: JSON numbers, a null where the
// account did not exist yet, and fields Tradekit does not read.
const historyBody = `{
  "timestamp": [1736139600, 1736226000, 1736312400, 1736398800],
  "equity": [null, 100000, 100512.37, 99872.930000000000001],
  "profit_loss": [null, 0, 512.37, -127.07],
  "profit_loss_pct": [null, 0, 0.0051237, -0.0012707],
  "base_value": 100000,
  "base_value_asof": "2025-01-07",
  "timeframe": "1D",
  "cashflow": {}
}`

// apiServer serves routes, maps of a path to a body, as Alpaca would to
// a request with the token "test-token", and records the requests'
// URLs.
type apiServer struct {
	*httptest.Server
	mu   sync.Mutex
	urls []*url.URL
}

func mustAPIServer(tb testing.TB, routes map[string]string) *apiServer {
	tb.Helper()
	s := &apiServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.urls = append(s.urls, r.URL)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("Authorization") != "Bearer test-token" {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"code":40110000,"message":"request is not authorized"}`)
			return
		}
		body, ok := routes[r.URL.Path]
		if !ok || r.Method != http.MethodGet {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"code":40410000,"message":"endpoint not found"}`)
			return
		}
		fmt.Fprint(w, body)
	}))
	tb.Cleanup(s.Close)
	return s
}

func (s *apiServer) requests() []*url.URL {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*url.URL(nil), s.urls...)
}

// staticClient returns a client of base with the static token
// "test-token".
func staticClient(base string) *alpaca.Client {
	return alpaca.New(alpaca.Config{HTTPClient: ownClient(), BaseURL: base, Token: &oauth2.Token{AccessToken: "test-token"}})
}

func d(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestAccount(t *testing.T) {
	t.Parallel()
	s := mustAPIServer(t, map[string]string{"/v2/account": accountBody})
	got, err := staticClient(s.URL).Account(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := brokers.Account{
		ID:       "1d9eed04-be39-4e01-9b84-a48ac5bbafcf",
		Number:   "PA3BQYZ0LMOE",
		Status:   "ACTIVE",
		Currency: "USD",
		Cash:     d("99872.93"),
		Equity:   d("101132.54000000000001"), // 21 significant digits: a float64 would lose the last
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Account() mismatch (-want +got):\n%s", diff)
	}
	if got.Equity.String() != "101132.54000000000001" {
		t.Errorf("Account().Equity = %s, want 101132.54000000000001 digit for digit", got.Equity)
	}
}

// A base URL with a path, as the paper broker's, keeps it; a trailing
// slash is ignored.
func TestBaseURLWithPath(t *testing.T) {
	t.Parallel()
	s := mustAPIServer(t, map[string]string{"/paper/v2/account": accountBody})
	for _, base := range []string{s.URL + "/paper", s.URL + "/paper/"} {
		if _, err := staticClient(base).Account(context.Background()); err != nil {
			t.Errorf("base URL %s: %v", base, err)
		}
	}
}

func TestPositions(t *testing.T) {
	t.Parallel()
	s := mustAPIServer(t, map[string]string{"/v2/positions": positionsBody})
	got, err := staticClient(s.URL).Positions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []brokers.Position{
		{Symbol: "NVDA", Quantity: d("4"), AvgEntryPrice: d("826.63"), MarketValue: d("3706"), CostBasis: d("3306.52")},
		{Symbol: "TSLA", Quantity: d("-10"), AvgEntryPrice: d("201.3075"), MarketValue: d("-1789.8"), CostBasis: d("-2013.075")},
		{Symbol: "BTC/USD", Quantity: d("0.012345678"), AvgEntryPrice: d("64012.5"), MarketValue: d("0"), CostBasis: d("790.2484138125")},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Positions() mismatch (-want +got):\n%s", diff)
	}
}

// A short position whose quantity comes positive, with side "short", is
// negative all the same; an empty list is an empty slice.
func TestPositionsShortAndEmpty(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
		want []brokers.Position
	}{
		{"empty", `[]`, []brokers.Position{}},
		{"short sent positive", `[{"symbol":"TSLA","qty":"10","side":"short","avg_entry_price":"201.3075",
			"market_value":"-1789.8","cost_basis":"-2013.075"}]`,
			[]brokers.Position{{Symbol: "TSLA", Quantity: d("-10"), AvgEntryPrice: d("201.3075"), MarketValue: d("-1789.8"), CostBasis: d("-2013.075")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustAPIServer(t, map[string]string{"/v2/positions": tt.body})
			got, err := staticClient(s.URL).Positions(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Positions() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFills(t *testing.T) {
	t.Parallel()
	s := mustAPIServer(t, map[string]string{"/v2/orders": ordersBody})
	after := at("2025-01-06T14:00:00Z")
	got, err := staticClient(s.URL).Fills(context.Background(), after)
	if err != nil {
		t.Fatal(err)
	}
	// Sorted by the time of the fill; the cancelled order with nothing
	// filled is left out; the one cancelled after a partial fill has no
	// filled_at and is dated by updated_at.
	want := []brokers.Fill{
		{ID: "81e69015-8549-4bfd-b9c3-01e75843f47f", Symbol: "MSFT", Side: brokers.Sell,
			Quantity: d("0.5"), Price: d("418.123456789"), Time: at("2025-01-06T14:31:30.2Z")},
		{ID: "61e69015-8549-4bfd-b9c3-01e75843f47d", Symbol: "AAPL", Side: brokers.Buy,
			Quantity: d("10"), Price: d("229.98"), Time: at("2025-01-06T15:00:01.5Z")},
		{ID: "91e69015-8549-4bfd-b9c3-01e75843f470", Symbol: "NVDA", Side: brokers.Buy,
			Quantity: d("3"), Price: d("140.01"), Time: at("2025-01-06T20:00:00Z")},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Fills() mismatch (-want +got):\n%s", diff)
	}
	reqs := s.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	wantQuery := url.Values{"status": {"closed"}, "after": {"2025-01-06T14:00:00Z"}, "direction": {"asc"}, "limit": {"500"}}
	if diff := cmp.Diff(wantQuery, reqs[0].Query()); diff != "" {
		t.Errorf("query mismatch (-want +got):\n%s", diff)
	}
}

// ordersServer plays GET /v2/orders over orders as Alpaca does: closed
// orders submitted after the "after" parameter (exclusive, read to the
// second), oldest first, at most "limit" of them.
type ordersServer struct {
	*httptest.Server
	mu      sync.Mutex
	afters  []string     // the after parameter of each request
	queries []url.Values // each request's query
}

type testOrder struct {
	id        string
	submitted time.Time
	filled    bool
}

func mustOrdersServer(tb testing.TB, orders []testOrder) *ordersServer {
	tb.Helper()
	s := &ordersServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		s.mu.Lock()
		s.afters = append(s.afters, q.Get("after"))
		s.queries = append(s.queries, q)
		s.mu.Unlock()
		var after time.Time
		if a := q.Get("after"); a != "" {
			var err error
			if after, err = time.Parse(time.RFC3339, a); err != nil {
				w.WriteHeader(http.StatusUnprocessableEntity)
				fmt.Fprintf(w, `{"code":42210000,"message":"invalid after: %s"}`, a)
				return
			}
		}
		var page []string
		for _, o := range orders {
			if len(page) == 500 {
				break
			}
			if !o.submitted.After(after) {
				continue
			}
			ts := o.submitted.Format(time.RFC3339Nano)
			if o.filled {
				page = append(page, order(o.id, "AAPL", "buy", "filled", ts, "1", "100.5", ts, ts))
			} else {
				page = append(page, order(o.id, "AAPL", "buy", "canceled", ts, "0", "", "", ts))
			}
		}
		fmt.Fprint(w, "["+strings.Join(page, ",")+"]")
	}))
	tb.Cleanup(s.Close)
	return s
}

func TestFillsPaging(t *testing.T) {
	t.Parallel()
	// 700 orders, three a second, each a few milliseconds into its
	// second: the first page ends inside a second, so the second page,
	// which starts at that second, repeats the page's last orders.
	t0 := at("2025-01-06T14:30:00Z")
	var orders []testOrder
	var want []string
	for i := range 700 {
		o := testOrder{
			id:        fmt.Sprintf("order-%03d", i),
			submitted: t0.Add(time.Duration(i/3)*time.Second + time.Duration(i)*time.Millisecond),
			filled:    i%2 == 0,
		}
		orders = append(orders, o)
		if o.filled {
			want = append(want, o.id)
		}
	}
	s := mustOrdersServer(t, orders)
	fills, err := staticClient(s.URL).Fills(context.Background(), t0.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range fills {
		got = append(got, f.ID)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Fills() ids mismatch (-want +got):\n%s", diff)
	}
	// The second page starts at the second of order 499's submission.
	wantAfters := []string{"2025-01-06T13:30:00Z", orders[499].submitted.Truncate(time.Second).Format(time.RFC3339)}
	if diff := cmp.Diff(wantAfters, s.afters); diff != "" {
		t.Errorf("after parameters mismatch (-want +got):\n%s", diff)
	}
}

// TestOrdersPaging checks Orders on 700 orders, three a second: it asks
// for every status, oldest first, 500 at a time, pages as Fills does, and
// returns each order once, in order.
func TestOrdersPaging(t *testing.T) {
	t.Parallel()
	t0 := at("2025-01-06T14:30:00Z")
	var orders []testOrder
	var want []string
	for i := range 700 {
		o := testOrder{id: fmt.Sprintf("order-%03d", i), filled: i%2 == 0,
			submitted: t0.Add(time.Duration(i/3)*time.Second + time.Duration(i)*time.Millisecond)}
		orders = append(orders, o)
		want = append(want, o.id)
	}
	s := mustOrdersServer(t, orders)
	got, err := staticClient(s.URL).Orders(context.Background(), t0.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, o := range got {
		ids = append(ids, o.ID)
	}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("Orders() ids mismatch (-want +got):\n%s", diff)
	}
	wantAfters := []string{"2025-01-06T13:30:00Z", orders[499].submitted.Truncate(time.Second).Format(time.RFC3339)}
	if diff := cmp.Diff(wantAfters, s.afters); diff != "" {
		t.Errorf("after parameters mismatch (-want +got):\n%s", diff)
	}
	for _, q := range s.queries {
		if q.Get("status") != "all" || q.Get("direction") != "asc" || q.Get("limit") != "500" {
			t.Errorf("query %s, want status=all, direction=asc, limit=500", q.Encode())
		}
	}
}

// More than a page of orders within one second cannot be paged past:
// Fills fails rather than loop or drop orders.
func TestFillsStuckPage(t *testing.T) {
	t.Parallel()
	t0 := at("2025-01-06T14:30:00Z")
	var orders []testOrder
	for i := range 600 {
		orders = append(orders, testOrder{id: fmt.Sprint(i), submitted: t0.Add(time.Duration(i+1) * time.Microsecond), filled: true})
	}
	s := mustOrdersServer(t, orders)
	_, err := staticClient(s.URL).Fills(context.Background(), t0.Add(-time.Hour))
	if !errors.Is(err, tradekit.ErrUnavailable) {
		t.Fatalf("Fills() error = %v, want one wrapping ErrUnavailable", err)
	}
	if len(s.afters) != 2 {
		t.Errorf("%d requests, want 2", len(s.afters))
	}
}

func TestHistory(t *testing.T) {
	t.Parallel()
	day := func(s string) time.Time { return at(s + "T00:00:00Z") }
	tests := []struct {
		name string
		body string
		want []brokers.EquityPoint
	}{
		{"numbers and nulls, as Alpaca sends them", historyBody, []brokers.EquityPoint{
			{Date: day("2025-01-07"), Equity: d("100000")},
			{Date: day("2025-01-08"), Equity: d("100512.37")},
			{Date: day("2025-01-09"), Equity: d("99872.930000000000001")},
		}},
		{"strings, as the paper broker sends them",
			`{"timestamp":[1709874000,1710129600],"equity":["100000.5","99872.93"],"profit_loss":["0","-127.57"],
			"profit_loss_pct":["0","-0.0012756"],"base_value":"100000.5","timeframe":"1D"}`,
			[]brokers.EquityPoint{
				{Date: day("2024-03-08"), Equity: d("100000.5")},
				{Date: day("2024-03-11"), Equity: d("99872.93")}, // midnight in New York on summer time
			}},
		{"milliseconds, as in the reference's example",
			`{"timestamp":[1580826600000],"equity":[27423.73],"profit_loss":[11.8],"profit_loss_pct":[0.000430469507254688],
			"base_value":27411.93,"timeframe":"1D"}`,
			[]brokers.EquityPoint{{Date: day("2020-02-04"), Equity: d("27423.73")}}},
		{"empty", `{"timestamp":[],"equity":[],"profit_loss":[],"profit_loss_pct":[],"base_value":0,"timeframe":"1D"}`,
			[]brokers.EquityPoint{}},
		{"cash flows, summed by day",
			`{"timestamp":[1709856000,1709942400],"equity":[1000,2500.5],"profit_loss":[0,0.5],"profit_loss_pct":[0,0],
			"base_value":1000,"timeframe":"1D","cashflow":{"CSD":[0,2000],"CSW":[null,-500],"JNLC":[0,0]}}`,
			[]brokers.EquityPoint{
				{Date: day("2024-03-08"), Equity: d("1000"), Flow: d("0")},
				{Date: day("2024-03-09"), Equity: d("2500.5"), Flow: d("1500")},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustAPIServer(t, map[string]string{"/v2/account/portfolio/history": tt.body})
			got, err := staticClient(s.URL).History(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("History() mismatch (-want +got):\n%s", diff)
			}
			wantQuery := url.Values{"period": {"1A"}, "timeframe": {"1D"}, "cashflow_types": {"CSD,CSW,JNLC"}}
			if diff := cmp.Diff(wantQuery, s.requests()[0].Query()); diff != "" {
				t.Errorf("query mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// The client's answers to bodies and statuses it cannot use.
func TestErrors(t *testing.T) {
	t.Parallel()
	const html502 = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n</body>\r\n</html>\r\n"
	tests := []struct {
		name       string
		status     int
		body       string
		call       func(*alpaca.Client) error
		wantErr    error // the kind, or nil for none
		wantStatus int   // the APIError's status, or 0 for an error of another type
		wantMsg    string
	}{
		{"401", 401, `{"code":40110000,"message":"request is not authorized"}`, account,
			tradekit.ErrUnauthorized, 401, "alpaca: 401 40110000: request is not authorized"},
		{"401 without a code", 401, `{"message": "unauthorized."}`, account,
			tradekit.ErrUnauthorized, 401, "alpaca: 401: unauthorized."},
		{"403", 403, `{"code":40310000,"message":"access to this account is forbidden"}`, account,
			tradekit.ErrUnauthorized, 403, "alpaca: 403 40310000: access to this account is forbidden"},
		{"404", 404, `{"code":40410000,"message":"account not found"}`, account,
			tradekit.ErrNotFound, 404, "alpaca: 404 40410000: account not found"},
		{"422", 422, `{"code":42210000,"message":"invalid period"}`, history,
			tradekit.ErrRejected, 422, "alpaca: 422 42210000: invalid period"},
		{"429", 429, `{"code":42910000,"message":"rate limit exceeded"}`, positions,
			tradekit.ErrUnavailable, 429, "alpaca: 429 42910000: rate limit exceeded"},
		{"500", 500, `{"code":50010000,"message":"internal server error occurred"}`, fills,
			tradekit.ErrUnavailable, 500, "alpaca: 500 50010000: internal server error occurred"},
		{"500 with an HTML body", 500, "<!DOCTYPE html><html><body><h1>Internal Server Error</h1></body></html>", account,
			tradekit.ErrUnavailable, 500, `alpaca: 500: Internal Server Error (body is not JSON: "<!DOCTYPE html><html><body><h1>Internal Server Error</h1></body>"…)`},
		{"502 from a proxy", 502, html502, account,
			tradekit.ErrUnavailable, 502, `alpaca: 502: Bad Gateway (body is not JSON: "<html> <head><title>502 Bad Gateway</title></head> <body> <cente"…)`},
		{"503 with no body", 503, "", account,
			tradekit.ErrUnavailable, 503, "alpaca: 503: Service Unavailable"},
		{"400, of no kind", 400, `{"code":40010001,"message":"invalid direction"}`, fills,
			nil, 400, "alpaca: 400 40010001: invalid direction"},
		{"200 with HTML", 200, "<html>maintenance</html>", account,
			tradekit.ErrUnavailable, 0, "alpaca: GET /v2/account: unavailable: malformed body: invalid character '<' looking for beginning of value"},
		{"200 with a decimal that is not one", 200, `{"cash":"12,5"}`, account,
			tradekit.ErrUnavailable, 0, ""},
		{"200 with arrays of unequal length", 200, `{"timestamp":[1736139600,1736226000],"equity":[1]}`, history,
			tradekit.ErrUnavailable, 0, "alpaca: GET /v2/account/portfolio/history: unavailable: 2 timestamps and 1 equities"},
		{"200 with a filled order without a price", 200, `[` + order("o-1", "AAPL", "buy", "filled",
			"2025-01-06T14:30:00Z", "1", "", "2025-01-06T14:30:01Z", "2025-01-06T14:30:01Z") + `]`, fills,
			tradekit.ErrUnavailable, 0, `alpaca: GET /v2/orders: unavailable: order "o-1" has a filled_qty and no filled_avg_price`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tt.status)
				fmt.Fprint(w, tt.body)
			}))
			defer s.Close()
			err := tt.call(staticClient(s.URL))
			if err == nil {
				t.Fatal("no error")
			}
			for _, kind := range []error{tradekit.ErrUnauthorized, tradekit.ErrNotFound, tradekit.ErrRejected, tradekit.ErrUnavailable, tradekit.ErrInvalid} {
				if is, want := errors.Is(err, kind), kind == tt.wantErr; is != want {
					t.Errorf("errors.Is(%v, %v) = %t, want %t", err, kind, is, want)
				}
			}
			var apiErr *alpaca.APIError
			if errors.As(err, &apiErr) != (tt.wantStatus != 0) || (apiErr != nil && apiErr.StatusCode != tt.wantStatus) {
				t.Errorf("error %#v, want an APIError with status %d", err, tt.wantStatus)
			}
			if tt.wantMsg != "" && err.Error() != tt.wantMsg {
				t.Errorf("error = %q, want %q", err, tt.wantMsg)
			}
			if !strings.HasPrefix(err.Error(), "alpaca: ") {
				t.Errorf("error %q does not start with the package name", err)
			}
		})
	}
}

func account(c *alpaca.Client) error {
	_, err := c.Account(context.Background())
	return err
}

func positions(c *alpaca.Client) error {
	_, err := c.Positions(context.Background())
	return err
}

func fills(c *alpaca.Client) error {
	_, err := c.Fills(context.Background(), time.Time{})
	return err
}

func history(c *alpaca.Client) error {
	_, err := c.History(context.Background())
	return err
}

func TestUnreachable(t *testing.T) {
	t.Parallel()
	s := httptest.NewServer(http.NotFoundHandler())
	base := s.URL
	s.Close()
	_, err := staticClient(base).Account(context.Background())
	if !errors.Is(err, tradekit.ErrUnavailable) {
		t.Errorf("Account() error = %v, want one wrapping ErrUnavailable", err)
	}
	if !strings.HasPrefix(fmt.Sprint(err), "alpaca: GET /v2/account: unavailable: ") {
		t.Errorf("Account() error = %q, want it to say what failed", err)
	}
}

func TestBadConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, base string
		token      *oauth2.Token
		wantErr    error
	}{
		{"no base URL", "", &oauth2.Token{AccessToken: "test-token"}, tradekit.ErrInvalid},
		{"no scheme", "paper-api.alpaca.markets", &oauth2.Token{AccessToken: "test-token"}, tradekit.ErrInvalid},
		{"not HTTP", "ftp://paper-api.alpaca.markets", &oauth2.Token{AccessToken: "test-token"}, tradekit.ErrInvalid},
		{"no token", "http://127.0.0.1:1", nil, tradekit.ErrUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := alpaca.New(alpaca.Config{HTTPClient: ownClient(), BaseURL: tt.base, Token: tt.token})
			if _, err := c.Account(context.Background()); !errors.Is(err, tt.wantErr) {
				t.Errorf("Account() error = %v, want one wrapping %v", err, tt.wantErr)
			}
		})
	}
}

// ownClient returns an HTTP client with a transport of its own: the
// tests run in parallel, and each httptest.Server that closes closes
// the idle connections of http.DefaultTransport, which a request of
// another test may have just taken ("http: CloseIdleConnections
// called").
func ownClient() *http.Client {
	return &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone(), Timeout: 10 * time.Second}
}
