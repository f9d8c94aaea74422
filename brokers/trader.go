package brokers

import (
	"context"
	"strconv"
	"time"

	"github.com/shopspring/decimal"

	"github.com/tradekit/tradekit"
)

// OrderStatus is the state of an order, as Tradekit names it.
type OrderStatus string

// The order statuses. An order is Pending until it is filled in full,
// cancelled (by its owner, or because it expired at the broker) or
// rejected (by a guardrail or by the broker); the three are final.
const (
	Pending   OrderStatus = "pending"
	Filled    OrderStatus = "filled"
	Cancelled OrderStatus = "cancelled"
	Rejected  OrderStatus = "rejected"
)

// Final reports whether s is a status an order never leaves.
func (s OrderStatus) Final() bool { return s == Filled || s == Cancelled || s == Rejected }

// OrderRequest is an order as it is sent to a broker.
type OrderRequest struct {
	// ClientOrderID is the caller's unique id of the order, at most 48
	// characters (Alpaca's limit). A broker holds one order per id, so
	// sending a request again after a lost answer never places a second
	// order.
	ClientOrderID string
	Symbol        string
	Side          Side
	Type          OrderType
	Quantity      decimal.Decimal  // positive
	LimitPrice    *decimal.Decimal // limit orders only
	// StopLossPrice, when not nil, is a buy's protective stop, which the
	// broker holds as an order of its own once the buy fills (Alpaca: an
	// OTO order's stop-loss leg). A sell's is ignored.
	StopLossPrice *decimal.Decimal
}

// OrderState is an order as its broker reports it.
type OrderState struct {
	ID            string      // the broker's id of the order
	ClientOrderID string      // the [OrderRequest.ClientOrderID] it was placed with
	Status        OrderStatus // the broker's status mapped onto Tradekit's four
	BrokerStatus  string      // the broker's own status word, e.g. "partially_filled"
	// FilledQuantity is the quantity filled so far, zero if none.
	FilledQuantity decimal.Decimal
	// FilledPrice is the average price of FilledQuantity, nil if none.
	FilledPrice *decimal.Decimal
	// Commission is what the broker charged for the fills, zero if
	// nothing or if the broker does not say.
	Commission  decimal.Decimal
	SubmittedAt time.Time
	FilledAt    *time.Time // when the order filled in full
	CancelledAt *time.Time // when it was cancelled or expired
	UpdatedAt   time.Time
}

// Trader is a [Broker] that also places and cancels orders. Its errors
// follow the rules of [Broker], and also:
//
//   - PlaceOrder returns a *[RefusedError] when the broker refuses the
//     order (insufficient buying power, a quantity it does not trade,
//     trading blocked);
//   - Order, OrderByClientID and CancelOrder return an error wrapping
//     [tradekit.ErrNotFound] for an order the broker does not hold;
//   - CancelOrder returns an error wrapping [tradekit.ErrConflict] for an
//     order that can no longer be cancelled (filled, cancelled, rejected).
type Trader interface {
	Broker
	// PlaceOrder sends an order. It is idempotent by
	// [OrderRequest.ClientOrderID]: when the broker already holds an
	// order with that id, PlaceOrder returns that order's state.
	PlaceOrder(ctx context.Context, o OrderRequest) (OrderState, error)
	// Order returns the order with the broker's id.
	Order(ctx context.Context, id string) (OrderState, error)
	// OrderByClientID returns the order placed with the client order id.
	OrderByClientID(ctx context.Context, clientOrderID string) (OrderState, error)
	// Orders returns the orders submitted after the given time, of every
	// status, oldest first: one call, however many there are, for a
	// tracker that follows many orders of one account.
	Orders(ctx context.Context, after time.Time) ([]OrderState, error)
	// CancelOrder asks the broker to cancel the order with the broker's id.
	// The cancellation may complete later: read the order to learn it.
	CancelOrder(ctx context.Context, id string) error
	// ReleaseStopLosses frees qty of the position in symbol for a sell,
	// by cancelling the resting stop-loss orders that the broker holds for
	// buys sent with a StopLossPrice, as few as it takes, and returns how
	// many it cancelled. What they protected is no longer protected at
	// the broker.
	ReleaseStopLosses(ctx context.Context, symbol string, qty decimal.Decimal) (int, error)
}

// RefusedError reports an order its broker refused. It wraps
// [tradekit.ErrRejected].
type RefusedError struct {
	Reason string // the broker's words, e.g. "insufficient buying power"
	Code   int    // the broker's error code, 0 if none
}

// Error returns "brokers: the broker refused the order: <reason>".
func (e *RefusedError) Error() string {
	s := "brokers: the broker refused the order: " + e.Reason
	if e.Code != 0 {
		s += " (code " + strconv.Itoa(e.Code) + ")"
	}
	return s
}

// Unwrap returns [tradekit.ErrRejected].
func (e *RefusedError) Unwrap() error { return tradekit.ErrRejected }
