package alpaca_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"
	"golang.org/x/oauth2"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/brokers/alpaca"
)

// orderBody is an order as Alpaca's reference shows one, filled.
const orderBody = `{"id":"61e69015-8549-4bfd-b9c3-01e75843f47d","client_order_id":"c-1","created_at":"2026-11-23T14:30:00.1Z",
 "updated_at":"2026-11-23T14:30:01.2Z","submitted_at":"2026-11-23T14:30:00.2Z","filled_at":"2026-11-23T14:30:01.1Z",
 "expired_at":null,"canceled_at":null,"failed_at":null,"asset_id":"b0b6dd9d-8b9b-48a9-ba46-b9d54906e415","symbol":"AAPL",
 "asset_class":"us_equity","order_class":"","type":"limit","side":"buy","time_in_force":"gtc","status":"filled",
 "qty":"2.5","filled_qty":"2.5","filled_avg_price":"100.123456789","limit_price":"101","stop_price":null,"extended_hours":false}`

func TestPlaceOrder(t *testing.T) {
	t.Parallel()
	var got map[string]any
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != "POST" || r.URL.Path != "/v2/orders" || r.Header.Get("Authorization") != "Bearer tok" ||
			r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s %s %v", r.Method, r.URL, r.Header)
		}
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &got)
		io.WriteString(w, orderBody)
	})
	srv := httptest.NewServer(h)
	defer srv.Close()
	c := alpaca.New(alpaca.Config{HTTPClient: ownClient(), BaseURL: srv.URL, Token: &oauth2.Token{AccessToken: "tok"}})
	limit := decimal.RequireFromString("101")
	st, err := c.PlaceOrder(context.Background(), brokers.OrderRequest{ClientOrderID: "c-1", Symbol: "AAPL", Side: brokers.Buy,
		Type: brokers.Limit, Quantity: decimal.RequireFromString("2.5"), LimitPrice: &limit})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"symbol": "AAPL", "qty": "2.5", "side": "buy", "type": "limit", "time_in_force": "gtc",
		"limit_price": "101", "client_order_id": "c-1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
	if st.Status != brokers.Filled || st.BrokerStatus != "filled" || st.ID != "61e69015-8549-4bfd-b9c3-01e75843f47d" ||
		!st.FilledQuantity.Equal(decimal.RequireFromString("2.5")) || st.FilledPrice.String() != "100.123456789" ||
		st.FilledAt == nil || st.FilledAt.Format("15:04:05.0") != "14:30:01.1" || !st.Commission.IsZero() {
		t.Errorf("state: %+v", st)
	}
}

// TestPlaceOrderStopLoss checks that a buy's stop-loss goes to Alpaca
// as an OTO order's stop_loss leg, good till cancelled.
func TestPlaceOrderStopLoss(t *testing.T) {
	t.Parallel()
	var got map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &got)
		io.WriteString(w, orderBody)
	}))
	defer srv.Close()
	c := alpaca.New(alpaca.Config{HTTPClient: ownClient(), BaseURL: srv.URL, Token: &oauth2.Token{AccessToken: "tok"}})
	stop := decimal.RequireFromString("90.5")
	for _, tt := range []struct {
		name string
		side brokers.Side
		want map[string]any
	}{
		{"buy", brokers.Buy, map[string]any{"symbol": "AAPL", "qty": "2", "side": "buy", "type": "market", "time_in_force": "gtc",
			"client_order_id": "c-1", "order_class": "oto", "stop_loss": map[string]any{"stop_price": "90.5"}}},
		{"sell", brokers.Sell, map[string]any{"symbol": "AAPL", "qty": "2", "side": "sell", "type": "market", "time_in_force": "day",
			"client_order_id": "c-1"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got = nil
			_, err := c.PlaceOrder(context.Background(), brokers.OrderRequest{ClientOrderID: "c-1", Symbol: "AAPL", Side: tt.side,
				Type: brokers.Market, Quantity: decimal.RequireFromString("2"), StopLossPrice: &stop})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPlaceOrderRefusals(t *testing.T) {
	t.Parallel()
	var posts int
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == "POST":
			posts++
			var body alpaca.OrderRequestJSON
			json.NewDecoder(r.Body).Decode(&body)
			switch body.ClientOrderID {
			case "poor":
				w.WriteHeader(http.StatusForbidden)
				io.WriteString(w, `{"code":40310000,"message":"insufficient buying power"}`)
			case "c-1", "other":
				w.WriteHeader(http.StatusUnprocessableEntity)
				io.WriteString(w, `{"code":40010001,"message":"client_order_id must be unique"}`)
			}
		case r.URL.Path == "/v2/orders:by_client_order_id":
			io.WriteString(w, orderBody)
		case r.URL.Path == "/v2/orders/61e69015-8549-4bfd-b9c3-01e75843f47d":
			io.WriteString(w, orderBody)
		default:
			t.Errorf("%s %s", r.Method, r.URL)
		}
	})
	srv := httptest.NewServer(h)
	defer srv.Close()
	c := alpaca.New(alpaca.Config{HTTPClient: ownClient(), BaseURL: srv.URL, Token: &oauth2.Token{AccessToken: "tok"}})
	ctx := context.Background()
	o := brokers.OrderRequest{ClientOrderID: "poor", Symbol: "AAPL", Side: brokers.Buy, Type: brokers.Market, Quantity: decimal.RequireFromString("2.5")}

	_, err := c.PlaceOrder(ctx, o)
	var re *brokers.RefusedError
	if !errors.As(err, &re) || re.Reason != "insufficient buying power" || re.Code != 40310000 || !errors.Is(err, tradekit.ErrRejected) {
		t.Errorf("refused: %v", err)
	}
	// The same client order id again: the order the broker holds.
	o.ClientOrderID = "c-1"
	if st, err := c.PlaceOrder(ctx, o); err != nil || st.ClientOrderID != "c-1" || st.Status != brokers.Filled {
		t.Errorf("retry: %+v, %v", st, err)
	}
	// The id taken by a different order.
	o.ClientOrderID, o.Quantity = "other", decimal.New(3, 0)
	if _, err := c.PlaceOrder(ctx, o); !errors.Is(err, tradekit.ErrConflict) {
		t.Errorf("id taken by another order: %v", err)
	}
	if posts != 3 {
		t.Errorf("%d posts", posts)
	}
}

func TestCancelOrder(t *testing.T) {
	t.Parallel()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != "DELETE" {
			t.Errorf("%s %s", r.Method, r.URL)
		}
		switch r.URL.Path {
		case "/v2/orders/open":
			w.WriteHeader(http.StatusNoContent)
		case "/v2/orders/done":
			w.WriteHeader(http.StatusUnprocessableEntity)
			io.WriteString(w, `{"code":42210000,"message":"order is not cancelable"}`)
		default:
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"code":40410000,"message":"order not found"}`)
		}
	})
	srv := httptest.NewServer(h)
	defer srv.Close()
	c := alpaca.New(alpaca.Config{HTTPClient: ownClient(), BaseURL: srv.URL, Token: &oauth2.Token{AccessToken: "tok"}})
	ctx := context.Background()
	if err := c.CancelOrder(ctx, "open"); err != nil {
		t.Errorf("open: %v", err)
	}
	if err := c.CancelOrder(ctx, "done"); !errors.Is(err, tradekit.ErrConflict) {
		t.Errorf("done: %v", err)
	}
	if err := c.CancelOrder(ctx, "gone"); !errors.Is(err, tradekit.ErrNotFound) {
		t.Errorf("gone: %v", err)
	}
}

func TestStatus(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]brokers.OrderStatus{
		"new": brokers.Pending, "accepted": brokers.Pending, "pending_new": brokers.Pending, "partially_filled": brokers.Pending,
		"done_for_day": brokers.Pending, "pending_cancel": brokers.Pending, "held": brokers.Pending,
		"filled": brokers.Filled, "canceled": brokers.Cancelled, "expired": brokers.Cancelled, "replaced": brokers.Cancelled, "rejected": brokers.Rejected,
	} {
		if got := alpaca.Status(s); got != want {
			t.Errorf("Status(%q) = %s, want %s", s, got, want)
		}
	}
}
