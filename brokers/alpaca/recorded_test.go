package alpaca_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/brokers/alpaca"
)

// answer is a recorded answer of Alpaca's API to one request: a status,
// headers, and the body of a file of testdata/recorded (none when file is
// "").
type answer struct {
	status int
	header map[string]string
	file   string
}

// recorded serves the answers, by "METHOD /path" (with the query, when
// the key has one), to requests with the token "test-token"; any other
// request fails the test. It returns the base URL.
func recorded(t *testing.T, answers map[string]answer) string {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer test-token" {
			t.Errorf("%s %s without the token", r.Method, r.URL)
		}
		a, ok := answers[r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery]
		if !ok {
			a, ok = answers[r.Method+" "+r.URL.Path]
		}
		if !ok {
			t.Errorf("unexpected request %s %s", r.Method, r.URL)
			w.WriteHeader(http.StatusTeapot)
			return
		}
		var body []byte
		if a.file != "" {
			var err error
			if body, err = os.ReadFile(filepath.Join("testdata", "recorded", a.file)); err != nil {
				t.Error(err)
			}
			w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		}
		for k, v := range a.header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(a.status)
		w.Write(body)
	}))
	t.Cleanup(s.Close)
	return s.URL
}

func dp(s string) *decimal.Decimal {
	v := d(s)
	return &v
}

func tp(s string) *time.Time {
	v := at(s)
	return &v
}

// TestRecordedReads decodes Alpaca's recorded account, positions, closed
// orders and portfolio history, and checks every field the client reads.
func TestRecordedReads(t *testing.T) {
	t.Parallel()
	base := recorded(t, map[string]answer{
		"GET /v2/account":   {200, nil, "account.json"},
		"GET /v2/positions": {200, nil, "positions.json"},
		"GET /v2/orders?direction=asc&limit=500&status=closed": {200, nil, "orders_closed.json"},
		"GET /v2/account/portfolio/history":                    {200, nil, "portfolio_history.json"},
	})
	c := staticClient(base)
	ctx := context.Background()

	acct, err := c.Account(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantAcct := brokers.Account{ID: "e6fe16f3-64a4-4921-8928-cadf02f92f98", Number: "010203ABCD", Status: "ACTIVE",
		Currency: "USD", Cash: d("-23140.2"), Equity: d("103820.56")}
	if diff := cmp.Diff(wantAcct, acct); diff != "" {
		t.Errorf("Account() mismatch (-want +got):\n%s", diff)
	}

	pos, err := c.Positions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantPos := []brokers.Position{
		{Symbol: "AAPL", Quantity: d("5"), AvgEntryPrice: d("100.0"), MarketValue: d("600.0"), CostBasis: d("500.0")},
		{Symbol: "TSLA", Quantity: d("-10"), AvgEntryPrice: d("201.3075"), MarketValue: d("-1789.8"), CostBasis: d("-2013.075")},
	}
	if diff := cmp.Diff(wantPos, pos); diff != "" {
		t.Errorf("Positions() mismatch (-want +got):\n%s", diff)
	}

	// The expired order filled nothing; the order cancelled after a
	// partial fill has no filled_at and fills at its updated_at; fills
	// are sorted by their time.
	fills, err := c.Fills(ctx, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	wantFills := []brokers.Fill{
		{ID: "3f1e5b8a-9d4c-4e2b-8a7f-6c5d4e3b2a19", Symbol: "AAPL", Side: brokers.Buy, Quantity: d("2"), Price: d("169.3821"),
			Time: at("2024-05-02T14:30:00.778631Z")},
		{ID: "7d2d1a59-0d07-4b0c-a2a5-4b8b39e2d6f0", Symbol: "AAPL", Side: brokers.Sell, Quantity: d("4"), Price: d("170.125"),
			Time: at("2024-05-02T15:42:03.640118Z")},
		{ID: "0b4cbe8e-3c7d-4d5b-9a9e-5a4f2b0d8c11", Symbol: "AAPL", Side: brokers.Sell, Quantity: d("2"), Price: d("165.01"),
			Time: at("2024-05-02T19:12:57.322876Z")},
	}
	if diff := cmp.Diff(wantFills, fills); diff != "" {
		t.Errorf("Fills() mismatch (-want +got):\n%s", diff)
	}

	// Millisecond timestamps at midnight in New York; the null equity
	// left out; the day's flows summed over cashflow's types.
	hist, err := c.History(ctx)
	if err != nil {
		t.Fatal(err)
	}
	day := func(s string) time.Time { return at(s + "T00:00:00Z") }
	wantHist := []brokers.EquityPoint{
		{Date: day("2024-05-01"), Equity: d("100000"), Flow: d("0")},
		{Date: day("2024-05-02"), Equity: d("100512.37"), Flow: d("-250.5")},
		{Date: day("2024-05-03"), Equity: d("103820.56"), Flow: d("3000")},
	}
	if diff := cmp.Diff(wantHist, hist); diff != "" {
		t.Errorf("History() mismatch (-want +got):\n%s", diff)
	}
}

// TestRecordedOrders places, reads and cancels orders against Alpaca's
// recorded answers, and checks the state the client makes of each.
func TestRecordedOrders(t *testing.T) {
	t.Parallel()
	base := recorded(t, map[string]answer{
		"POST /v2/orders": {200, nil, "order_pending_new.json"},
		"GET /v2/orders/61e69015-8549-4bfd-b9c3-01e75843f47d":                                    {200, nil, "order_accepted.json"},
		"GET /v2/orders/c5a3ba6f-1c3e-4f3a-8f6b-2f9c8d7e6a51":                                    {200, nil, "order_expired.json"},
		"GET /v2/orders:by_client_order_id?client_order_id=tk-dup-7":                             {200, nil, "order_filled.json"},
		"GET /v2/orders/5d0a9f0e-0d1c-4b59-9d5e-0f3f0c1d2e3a":                                    {404, nil, "error_404_order.json"},
		"DELETE /v2/orders/61e69015-8549-4bfd-b9c3-01e75843f47d":                                 {204, nil, ""},
		"DELETE /v2/orders/3f1e5b8a-9d4c-4e2b-8a7f-6c5d4e3b2a19":                                 {422, nil, "error_422_not_cancelable.json"},
		"GET /v2/orders:by_client_order_id?client_order_id=tk-missing-1":                         {404, nil, "error_404_order.json"},
		"GET /v2/orders/3f1e5b8a-9d4c-4e2b-8a7f-6c5d4e3b2a19":                                    {200, nil, "order_filled.json"},
		"GET /v2/orders:by_client_order_id?client_order_id=eb9e2aaa-f71a-4f51-b5b4-52a6c565dad4": {200, nil, "order_accepted.json"},
	})
	c := staticClient(base)
	ctx := context.Background()

	limit := d("169.5")
	st, err := c.PlaceOrder(ctx, brokers.OrderRequest{ClientOrderID: "tk-4b1c9e2a", Symbol: "AAPL", Side: brokers.Buy,
		Type: brokers.Limit, Quantity: d("3"), LimitPrice: &limit})
	if err != nil {
		t.Fatal(err)
	}
	want := brokers.OrderState{ID: "2f1d4e6a-83a5-4b5e-9c2d-7d0b6a8f1c3e", ClientOrderID: "tk-4b1c9e2a", Status: brokers.Pending,
		BrokerStatus: "pending_new", FilledQuantity: d("0"), SubmittedAt: at("2024-05-02T14:31:07.118847Z"),
		UpdatedAt: at("2024-05-02T14:31:07.127301Z")}
	if diff := cmp.Diff(want, st); diff != "" {
		t.Errorf("PlaceOrder() mismatch (-want +got):\n%s", diff)
	}

	for _, tt := range []struct {
		name string
		get  func() (brokers.OrderState, error)
		want brokers.OrderState
	}{
		{"the reference's accepted order", func() (brokers.OrderState, error) {
			return c.Order(ctx, "61e69015-8549-4bfd-b9c3-01e75843f47d")
		}, brokers.OrderState{ID: "61e69015-8549-4bfd-b9c3-01e75843f47d", ClientOrderID: "eb9e2aaa-f71a-4f51-b5b4-52a6c565dad4",
			Status: brokers.Pending, BrokerStatus: "accepted", FilledQuantity: d("0"),
			SubmittedAt: at("2021-03-16T18:38:01.937734Z"), UpdatedAt: at("2021-03-16T18:38:01.942282Z")}},
		{"an expired order", func() (brokers.OrderState, error) {
			return c.Order(ctx, "c5a3ba6f-1c3e-4f3a-8f6b-2f9c8d7e6a51")
		}, brokers.OrderState{ID: "c5a3ba6f-1c3e-4f3a-8f6b-2f9c8d7e6a51", ClientOrderID: "tk-exp-3",
			Status: brokers.Cancelled, BrokerStatus: "expired", FilledQuantity: d("0"),
			CancelledAt: tp("2024-05-01T20:00:00.174825Z"),
			SubmittedAt: at("2024-05-01T15:02:11.398172Z"), UpdatedAt: at("2024-05-01T20:00:00.181532Z")}},
		{"a filled order, by client order id", func() (brokers.OrderState, error) {
			return c.OrderByClientID(ctx, "tk-dup-7")
		}, brokers.OrderState{ID: "3f1e5b8a-9d4c-4e2b-8a7f-6c5d4e3b2a19", ClientOrderID: "tk-dup-7",
			Status: brokers.Filled, BrokerStatus: "filled", FilledQuantity: d("2"), FilledPrice: dp("169.3821"),
			FilledAt:    tp("2024-05-02T14:30:00.778631Z"),
			SubmittedAt: at("2024-05-02T14:30:00.509914Z"), UpdatedAt: at("2024-05-02T14:30:00.781205Z")}},
	} {
		got, err := tt.get()
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: mismatch (-want +got):\n%s", tt.name, diff)
		}
	}

	if _, err := c.Order(ctx, "5d0a9f0e-0d1c-4b59-9d5e-0f3f0c1d2e3a"); !errors.Is(err, tradekit.ErrNotFound) ||
		err.Error() != "alpaca: 404 40410000: order not found for 5d0a9f0e-0d1c-4b59-9d5e-0f3f0c1d2e3a" {
		t.Errorf("an unknown order: %v, want Alpaca's 404", err)
	}
	if _, err := c.OrderByClientID(ctx, "tk-missing-1"); !errors.Is(err, tradekit.ErrNotFound) {
		t.Errorf("an unknown client order id: %v, want ErrNotFound", err)
	}
	if err := c.CancelOrder(ctx, "61e69015-8549-4bfd-b9c3-01e75843f47d"); err != nil {
		t.Errorf("cancel (204): %v", err)
	}
	if err := c.CancelOrder(ctx, "3f1e5b8a-9d4c-4e2b-8a7f-6c5d4e3b2a19"); !errors.Is(err, tradekit.ErrConflict) ||
		err.Error() != "alpaca: the broker cannot cancel the order: order is not cancelable" {
		t.Errorf("cancel a filled order (422): %v, want ErrConflict with Alpaca's message", err)
	}
}

// TestRecordedRefusals checks what the client makes of Alpaca's recorded
// refusals of an order: 403 for buying power and quantity, with the
// extra fields Alpaca adds, and 422 for an unknown asset, each a
// *brokers.RefusedError with Alpaca's message and code; a 422 for a taken
// client_order_id reads the order placed with it.
func TestRecordedRefusals(t *testing.T) {
	t.Parallel()
	o := brokers.OrderRequest{ClientOrderID: "tk-x", Symbol: "AAPL", Side: brokers.Buy, Type: brokers.Market, Quantity: d("2")}
	for _, tt := range []struct {
		name     string
		status   int
		file     string
		side     brokers.Side
		wantCode int
		wantMsg  string
	}{
		{"insufficient buying power", 403, "error_403_buying_power.json", brokers.Buy, 40310000, "insufficient buying power"},
		{"insufficient qty", 403, "error_403_qty.json", brokers.Sell, 40310000, "insufficient qty available for order (requested: 5, available: 0)"},
		{"unknown asset", 422, "error_422_asset.json", brokers.Buy, 42210000, `asset "ZZZZNOTREAL" not found`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := staticClient(recorded(t, map[string]answer{"POST /v2/orders": {tt.status, nil, tt.file}}))
			o := o
			o.Side = tt.side
			_, err := c.PlaceOrder(context.Background(), o)
			var re *brokers.RefusedError
			if !errors.As(err, &re) || re.Code != tt.wantCode || re.Reason != tt.wantMsg || !errors.Is(err, tradekit.ErrRejected) {
				t.Errorf("PlaceOrder() error = %v, want a RefusedError %q (code %d)", err, tt.wantMsg, tt.wantCode)
			}
		})
	}

	t.Run("client_order_id taken by this order", func(t *testing.T) {
		c := staticClient(recorded(t, map[string]answer{
			"POST /v2/orders": {422, nil, "error_422_client_order_id.json"},
			"GET /v2/orders:by_client_order_id?client_order_id=tk-dup-7": {200, nil, "order_filled.json"},
			"GET /v2/orders/3f1e5b8a-9d4c-4e2b-8a7f-6c5d4e3b2a19":        {200, nil, "order_filled.json"},
		}))
		o := o
		o.ClientOrderID = "tk-dup-7"
		st, err := c.PlaceOrder(context.Background(), o)
		if err != nil || st.ID != "3f1e5b8a-9d4c-4e2b-8a7f-6c5d4e3b2a19" || st.Status != brokers.Filled || !st.FilledPrice.Equal(d("169.3821")) {
			t.Errorf("PlaceOrder() = %+v, %v; want the filled order placed with the id", st, err)
		}
	})
	t.Run("client_order_id taken by another order", func(t *testing.T) {
		c := staticClient(recorded(t, map[string]answer{
			"POST /v2/orders": {422, nil, "error_422_client_order_id.json"},
			"GET /v2/orders:by_client_order_id?client_order_id=tk-dup-7": {200, nil, "order_filled.json"},
			"GET /v2/orders/3f1e5b8a-9d4c-4e2b-8a7f-6c5d4e3b2a19":        {200, nil, "order_filled.json"},
		}))
		o := o
		o.ClientOrderID, o.Quantity = "tk-dup-7", d("3") // the recorded order is of 2
		if _, err := c.PlaceOrder(context.Background(), o); !errors.Is(err, tradekit.ErrConflict) {
			t.Errorf("PlaceOrder() error = %v, want ErrConflict", err)
		}
	})
}

// TestRecordedErrors checks the client's errors for Alpaca's recorded 401
// and 429. The client does not retry a 429: the call fails at once with
// an error wrapping tradekit.ErrUnavailable, which says how long to wait
// (brokers.RetryAfter): the recorded X-RateLimit-Reset lies in the past,
// so a second; the paper broker's Retry-After, as it says.
func TestRecordedErrors(t *testing.T) {
	t.Parallel()
	rateLimited := map[string]string{"X-RateLimit-Limit": "200", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1714660320"}
	for _, tt := range []struct {
		name     string
		ans      answer
		call     func(*alpaca.Client) error
		kind     error
		status   int
		wantCode int
		wantMsg  string
		wantWait time.Duration
	}{
		{"401 on the account", answer{401, nil, "error_401_unauthorized.json"}, account,
			tradekit.ErrUnauthorized, 401, 40110000, "request is not authorized", 0},
		{"429 on the positions", answer{429, rateLimited, "error_429_rate_limit.json"}, positions,
			tradekit.ErrUnavailable, 429, 42910000, "rate limit exceeded", time.Second},
		{"429 on an order", answer{429, rateLimited, "error_429_rate_limit.json"}, func(c *alpaca.Client) error {
			_, err := c.PlaceOrder(context.Background(), brokers.OrderRequest{ClientOrderID: "tk-r", Symbol: "AAPL", Side: brokers.Buy,
				Type: brokers.Market, Quantity: d("1")})
			return err
		}, tradekit.ErrUnavailable, 429, 42910000, "rate limit exceeded", time.Second},
		{"429 with Retry-After", answer{429, map[string]string{"Retry-After": "17", "X-RateLimit-Reset": "1714660320"}, "error_429_rate_limit.json"},
			positions, tradekit.ErrUnavailable, 429, 42910000, "rate limit exceeded", 17 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := staticClient(recorded(t, map[string]answer{
				"GET /v2/account":   tt.ans,
				"GET /v2/positions": tt.ans,
				"POST /v2/orders":   tt.ans,
			}))
			err := tt.call(c)
			var ae *alpaca.APIError
			if !errors.As(err, &ae) || ae.StatusCode != tt.status || ae.Code != tt.wantCode || ae.Message != tt.wantMsg || !errors.Is(err, tt.kind) {
				t.Errorf("error = %#v, want an APIError %d %d %q wrapping %v", err, tt.status, tt.wantCode, tt.wantMsg, tt.kind)
			}
			var re *brokers.RefusedError
			if errors.As(err, &re) {
				t.Errorf("a %d is not a refusal of the order: %v", tt.status, err)
			}
			if wait, _ := brokers.RetryAfter(err); wait != tt.wantWait {
				t.Errorf("brokers.RetryAfter = %v, want %v", wait, tt.wantWait)
			}
		})
	}
}

// TestRecordedReleaseStopLosses frees a position's quantity against
// Alpaca's recorded answers: a position of 12 AAPL with none available,
// held by two OTO stop legs (3, the newest, and 5), a limit sell of 4
// that Tradekit did not place, and a held leg of 2 of a buy not yet
// filled. Legs are cancelled newest first, as few as the sell needs; the
// limit sell and the held leg never; the newest leg is read back through
// pending_cancel until Alpaca reports it canceled.
func TestRecordedReleaseStopLosses(t *testing.T) {
	t.Parallel()
	const (
		newest = "a81e0c2b-5d0f-4f7e-b7a2-7c1d9e0f3a44"
		older  = "d14b3f5e-803c-4cab-ae5d-af40c1326d77"
	)
	for _, tt := range []struct {
		name       string
		qty        string
		position   answer
		want       int
		wantDelete []string
	}{
		{"the newest leg frees enough", "3", answer{200, nil, "position_aapl.json"}, 1, []string{newest}},
		{"both legs, no more", "12", answer{200, nil, "position_aapl.json"}, 2, []string{newest, older}},
		{"more than the position", "13", answer{200, nil, "position_aapl.json"}, 0, nil},
		{"no position", "1", answer{404, nil, "error_404_position.json"}, 0, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var deleted []string
			reads := map[string]int{}
			s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				defer mu.Unlock()
				a := answer{status: 200}
				switch key := r.Method + " " + r.URL.Path; key {
				case "GET /v2/positions/AAPL":
					a = tt.position
				case "GET /v2/orders":
					if got := r.URL.RawQuery; got != "direction=desc&limit=500&side=sell&status=open&symbols=AAPL" {
						t.Errorf("GET /v2/orders?%s", got)
					}
					a.file = "orders_open_sells.json"
				case "DELETE /v2/orders/" + newest, "DELETE /v2/orders/" + older:
					deleted = append(deleted, strings.TrimPrefix(r.URL.Path, "/v2/orders/"))
					a.status = http.StatusNoContent
				case "GET /v2/orders/" + newest:
					reads[newest]++
					a.file = "order_pending_cancel.json"
					if reads[newest] > 1 {
						a.file = "order_canceled.json"
					}
				case "GET /v2/orders/" + older:
					reads[older]++
					a.file = "order_canceled_older.json"
				default:
					t.Errorf("unexpected request %s %s", r.Method, r.URL)
					a.status = http.StatusTeapot
				}
				if a.file != "" {
					body, err := os.ReadFile(filepath.Join("testdata", "recorded", a.file))
					if err != nil {
						t.Error(err)
					}
					w.WriteHeader(a.status)
					w.Write(body)
					return
				}
				w.WriteHeader(a.status)
			}))
			defer s.Close()
			n, err := staticClient(s.URL).ReleaseStopLosses(context.Background(), "AAPL", d(tt.qty))
			if err != nil || n != tt.want {
				t.Fatalf("ReleaseStopLosses(%s) = %d, %v; want %d", tt.qty, n, err, tt.want)
			}
			mu.Lock()
			defer mu.Unlock()
			if diff := cmp.Diff(tt.wantDelete, deleted); diff != "" {
				t.Errorf("cancelled (-want +got):\n%s", diff)
			}
			if len(tt.wantDelete) > 0 && reads[newest] != 2 {
				t.Errorf("the newest leg read %d times, want until canceled (2)", reads[newest])
			}
		})
	}
}

// TestRecordedRateLimitReset checks the wait of a 429 whose
// X-RateLimit-Reset lies ahead: the time left until it, whether a
// Retry-After comes with it (the paper broker's) or not (Alpaca's).
func TestRecordedRateLimitReset(t *testing.T) {
	t.Parallel()
	reset := time.Now().Add(40 * time.Second).Unix()
	c := staticClient(recorded(t, map[string]answer{
		"GET /v2/positions": {429, map[string]string{"X-RateLimit-Limit": "200", "X-RateLimit-Remaining": "0",
			"X-RateLimit-Reset": strconv.FormatInt(reset, 10)}, "error_429_rate_limit.json"},
	}))
	err := positions(c)
	if wait, ok := brokers.RetryAfter(err); !ok || wait < 38*time.Second || wait > 40*time.Second {
		t.Errorf("brokers.RetryAfter(%v) = %v, %t; want the 39-40 s left until the reset", err, wait, ok)
	}

	// With the paper broker's Retry-After beside it, rounded up to the
	// second: the reset, to the instant, not a second after it.
	reset = time.Now().Truncate(time.Second).Add(30 * time.Second).Unix()
	c = staticClient(recorded(t, map[string]answer{
		"GET /v2/positions": {429, map[string]string{"Retry-After": "31", "X-RateLimit-Reset": strconv.FormatInt(reset, 10)},
			"error_429_rate_limit.json"},
	}))
	err = positions(c)
	if wait, ok := brokers.RetryAfter(err); !ok || wait > 30*time.Second || wait < 29*time.Second {
		t.Errorf("brokers.RetryAfter(%v) = %v, %t; want the 29-30 s left until the reset, not Retry-After's 31", err, wait, ok)
	}
}
