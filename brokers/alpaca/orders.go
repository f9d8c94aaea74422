package alpaca

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers"
)

var _ brokers.Trader = (*Client)(nil)

// PlaceOrder sends o with POST /v2/orders: time in force "day" for a
// market order and "gtc" (good till cancelled) for a limit order. A buy
// with a StopLossPrice goes as Alpaca expects a protective stop: as
// order_class "oto" with stop_loss.stop_price, and time in force "gtc"
// so that the stop leg, which takes the order's time in force, outlives
// the day. The broker holds the leg until the buy fills, then rests it
// as a stop sell of the same quantity; its fill is an order of its own,
// which [Client.Fills] lists. While it rests it holds that quantity, so
// that the broker refuses a sell of it: [Client.ReleaseStopLosses]
// cancels the legs a sell needs.
//
// An answer of 403 (Alpaca's "insufficient buying power", "insufficient
// qty available for order", trading blocked) or 422 (an order the broker
// does not take) is a *[brokers.RefusedError] with the broker's message.
// When the broker answers that o.ClientOrderID is taken, PlaceOrder reads
// the order placed with it and returns that order's state, or an error
// wrapping [tradekit.ErrConflict] when that order is not o (another
// symbol, side or quantity).
func (c *Client) PlaceOrder(ctx context.Context, o brokers.OrderRequest) (brokers.OrderState, error) {
	qty := o.Quantity
	body := OrderRequestJSON{Symbol: o.Symbol, Qty: &qty, Side: string(o.Side), Type: string(o.Type),
		TimeInForce: "day", LimitPrice: o.LimitPrice, ClientOrderID: o.ClientOrderID}
	if o.Type == brokers.Limit {
		body.TimeInForce = "gtc"
	}
	if o.Side == brokers.Buy && o.StopLossPrice != nil {
		stop := *o.StopLossPrice
		body.OrderClass, body.StopLoss, body.TimeInForce = "oto", &StopLossJSON{StopPrice: &stop}, "gtc"
	}
	var out OrderJSON
	err := c.do(ctx, http.MethodPost, "/v2/orders", nil, body, &out)
	var ae *APIError
	switch {
	case err == nil:
		return orderState(out), nil
	case !errors.As(err, &ae) || (ae.StatusCode != http.StatusForbidden && ae.StatusCode != http.StatusUnprocessableEntity):
		return brokers.OrderState{}, err
	case o.ClientOrderID != "" && strings.Contains(ae.Message, "client_order_id"):
		st, err := c.OrderByClientID(ctx, o.ClientOrderID)
		if err != nil {
			return brokers.OrderState{}, err
		}
		if err := sameOrder(c, ctx, st.ID, o); err != nil {
			return brokers.OrderState{}, err
		}
		return st, nil
	}
	return brokers.OrderState{}, &brokers.RefusedError{Reason: ae.Message, Code: ae.Code}
}

// sameOrder checks that the order with the broker's id is o.
func sameOrder(c *Client, ctx context.Context, id string, o brokers.OrderRequest) error {
	var got OrderJSON
	if err := c.get(ctx, "/v2/orders/"+url.PathEscape(id), nil, &got); err != nil {
		return err
	}
	if !strings.EqualFold(got.Symbol, o.Symbol) || got.Side != string(o.Side) || got.Qty == nil || !got.Qty.Equal(o.Quantity) {
		return fmt.Errorf("alpaca: %w", tradekit.Errorf(tradekit.ErrConflict,
			"client order id %s is taken at the broker by another order", tradekit.Quote(o.ClientOrderID)))
	}
	return nil
}

// Order returns the order with the broker's id, from GET /v2/orders/{id}.
// The error wraps [tradekit.ErrNotFound] when the broker holds none.
func (c *Client) Order(ctx context.Context, id string) (brokers.OrderState, error) {
	var out OrderJSON
	if err := c.get(ctx, "/v2/orders/"+url.PathEscape(id), nil, &out); err != nil {
		return brokers.OrderState{}, err
	}
	return orderState(out), nil
}

// Orders returns the orders submitted after the given time, of every
// status, oldest submission first, from GET
// /v2/orders?status=all&after=…&direction=asc&limit=500, a page after
// another, as [Client.Fills] pages: the API filters by submission time to
// the second, so each next page starts at the second of the previous
// page's last submission, and the orders seen twice are dropped by id. It
// fails, wrapping [tradekit.ErrUnavailable], if a whole page of orders
// was submitted within one second. The order tracker of package
// brokers/connect reads a connection's pending orders with one call.
func (c *Client) Orders(ctx context.Context, after time.Time) ([]brokers.OrderState, error) {
	var out []brokers.OrderState
	err := c.eachOrder(ctx, "all", after, func(o OrderJSON) error {
		out = append(out, orderState(o))
		return nil
	})
	return out, err
}

// eachOrder calls fn with each order of GET /v2/orders of the status
// ("all", "closed") submitted after after (all of them when it is zero),
// oldest submission first, 500 a page. The API filters by submission time
// to the second, so each next page starts at the second of the previous
// page's last submission, and the orders seen twice are dropped by id. It
// fails, wrapping [tradekit.ErrUnavailable], if a whole page of orders was
// submitted within one second, since it cannot page past them, and with
// fn's error.
func (c *Client) eachOrder(ctx context.Context, status string, after time.Time, fn func(OrderJSON) error) error {
	seen := make(map[string]bool)
	cursor := after
	for {
		q := url.Values{
			"status":    {status},
			"direction": {"asc"},
			"limit":     {strconv.Itoa(ordersPageSize)},
		}
		if !cursor.IsZero() {
			q.Set("after", cursor.UTC().Format(time.RFC3339))
		}
		var page []OrderJSON
		if err := c.get(ctx, "/v2/orders", q, &page); err != nil {
			return err
		}
		for _, o := range page {
			if seen[o.ID] || !o.SubmittedAt.After(after) {
				continue // a repeat, or within the second of after but not after it
			}
			seen[o.ID] = true
			if err := fn(o); err != nil {
				return err
			}
		}
		if len(page) < ordersPageSize {
			return nil
		}
		next := page[len(page)-1].SubmittedAt
		if !next.Truncate(time.Second).After(cursor.Truncate(time.Second)) {
			return fmt.Errorf("alpaca: GET /v2/orders: %w: %d orders submitted within the second after %s; cannot page past them",
				tradekit.ErrUnavailable, ordersPageSize, cursor.UTC().Format(time.RFC3339))
		}
		cursor = next
	}
}

// OrderByClientID returns the order placed with the client order id, from
// GET /v2/orders:by_client_order_id. The error wraps
// [tradekit.ErrNotFound] when the broker holds none.
func (c *Client) OrderByClientID(ctx context.Context, clientOrderID string) (brokers.OrderState, error) {
	var out OrderJSON
	q := url.Values{"client_order_id": {clientOrderID}}
	if err := c.get(ctx, "/v2/orders:by_client_order_id", q, &out); err != nil {
		return brokers.OrderState{}, err
	}
	return orderState(out), nil
}

// CancelOrder asks the broker to cancel the order, with DELETE
// /v2/orders/{id}. Alpaca answers 204 and cancels asynchronously (the
// order is pending_cancel, then canceled); 422 means the order can no
// longer be cancelled, an error wrapping [tradekit.ErrConflict]; 404
// wraps [tradekit.ErrNotFound].
func (c *Client) CancelOrder(ctx context.Context, id string) error {
	err := c.do(ctx, http.MethodDelete, "/v2/orders/"+url.PathEscape(id), nil, nil, nil)
	var ae *APIError
	if errors.As(err, &ae) && ae.StatusCode == http.StatusUnprocessableEntity {
		return fmt.Errorf("alpaca: %w", tradekit.Errorf(tradekit.ErrConflict, "the broker cannot cancel the order: %s", ae.Message))
	}
	return err
}

// Status maps an Alpaca order status onto Tradekit's: filled is
// [brokers.Filled]; canceled, expired and replaced (a replaced order
// never fills: its replacement does) are [brokers.Cancelled];
// rejected is [brokers.Rejected]; every other status (new, accepted,
// pending_new, partially_filled, done_for_day, pending_cancel, held, …)
// is an order still working, [brokers.Pending].
func Status(s string) brokers.OrderStatus {
	switch s {
	case "filled":
		return brokers.Filled
	case "canceled", "expired", "replaced":
		return brokers.Cancelled
	case "rejected":
		return brokers.Rejected
	}
	return brokers.Pending
}

// orderState converts an order as Alpaca sends it.
func orderState(o OrderJSON) brokers.OrderState {
	st := brokers.OrderState{ID: o.ID, ClientOrderID: o.ClientOrderID, Status: Status(o.Status), BrokerStatus: o.Status,
		FilledQuantity: o.FilledQty, FilledPrice: o.FilledAvgPrice, SubmittedAt: o.SubmittedAt, UpdatedAt: o.UpdatedAt}
	if o.Commission != nil {
		st.Commission = *o.Commission
	}
	switch st.Status {
	case brokers.Filled:
		st.FilledAt = o.FilledAt
		if st.FilledAt == nil {
			st.FilledAt = &o.UpdatedAt
		}
	case brokers.Cancelled:
		st.CancelledAt = o.CanceledAt
		if st.CancelledAt == nil {
			st.CancelledAt = o.ExpiredAt
		}
	}
	return st
}

// The timing of [Client.ReleaseStopLosses]' wait for the cancellations it
// asked for: a read releaseFirst after them, each next one twice as long
// after the one before, until releaseWait has passed.
const (
	releaseFirst = 4 * time.Millisecond
	releaseWait  = time.Second
)

// ReleaseStopLosses frees qty of the account's position in symbol for a
// sell, by cancelling the stop-loss legs that hold it: the open stop and
// stop_limit sells of order class oto, which is how [Client.PlaceOrder]
// sends a buy's StopLossPrice, newest first, until qty is available
// (GET /v2/positions/{symbol}: qty_available) or none is left. It
// cancels nothing when qty is available already, when there is no
// position, or when qty is more than the position, which no cancellation
// would let the broker sell. A leg held for a buy that has not filled
// holds nothing and is kept; other open sells are never touched. Alpaca
// cancels asynchronously (pending_cancel), so ReleaseStopLosses then
// reads each cancelled leg until the broker reports it final, for at most
// a second. It returns how many legs it cancelled; what they protected is
// no longer protected at the broker.
func (c *Client) ReleaseStopLosses(ctx context.Context, symbol string, qty decimal.Decimal) (int, error) {
	var p PositionJSON
	err := c.get(ctx, "/v2/positions/"+url.PathEscape(symbol), nil, &p)
	if errors.Is(err, tradekit.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	need := qty.Sub(p.QtyAvailable)
	if !need.IsPositive() || qty.GreaterThan(p.Qty) {
		return 0, nil
	}
	var open []OrderJSON
	q := url.Values{"status": {"open"}, "symbols": {symbol}, "side": {"sell"}, "direction": {"desc"}, "limit": {"500"}}
	if err := c.get(ctx, "/v2/orders", q, &open); err != nil {
		return 0, err
	}
	var cancelled []string
	for _, o := range open {
		if !need.IsPositive() {
			break
		}
		if o.OrderClass != "oto" || o.Type != "stop" && o.Type != "stop_limit" || o.Side != "sell" || o.Status == "held" || o.Qty == nil {
			continue
		}
		err := c.CancelOrder(ctx, o.ID)
		if errors.Is(err, tradekit.ErrConflict) || errors.Is(err, tradekit.ErrNotFound) {
			continue // filled or gone meanwhile
		}
		if err != nil {
			return len(cancelled), err
		}
		cancelled = append(cancelled, o.ID)
		need = need.Sub(o.Qty.Sub(o.FilledQty))
	}
	wait, deadline := releaseFirst, time.Now().Add(releaseWait)
	for _, id := range cancelled {
		for {
			st, err := c.Order(ctx, id)
			if err != nil || st.Status.Final() || time.Now().Add(wait).After(deadline) {
				break
			}
			select {
			case <-ctx.Done():
				return len(cancelled), fmt.Errorf("alpaca: waiting for cancellations: %w: %w", tradekit.ErrUnavailable, ctx.Err())
			case <-time.After(wait):
			}
			wait *= 2
		}
	}
	return len(cancelled), nil
}
