package brokers

import (
	"github.com/shopspring/decimal"

	"github.com/tradekit/tradekit"
)

// OrderType is how an order is priced: at the market or at a limit.
type OrderType string

// The order types.
const (
	Market OrderType = "market" // fills at the market's price
	Limit  OrderType = "limit"  // fills at LimitPrice or better
)

// Order is an order as a user asks for it, before any guardrail has
// seen it. [Order.Validate] checks its invariants and [Check] its
// guardrails.
type Order struct {
	Symbol    string          // the asset's symbol, e.g. "AAPL"
	AssetType string          // the asset's type as marketdata names it, one of [AssetTypes]
	Side      Side            // [Buy] or [Sell]
	Type      OrderType       // [Market] or [Limit]
	Quantity  decimal.Decimal // units to buy or sell, positive

	// LimitPrice is the worst price the order accepts: required for
	// [Limit] orders and refused for [Market] ones.
	LimitPrice *decimal.Decimal

	// StopLossPrice, when not nil, is the protective stop the order
	// carries: below the execution price for a buy, above it for a sell
	// (checked by [Check], which knows the price).
	StopLossPrice *decimal.Decimal
}

// Validate reports whether o's fields are consistent on their own: a
// non-empty Symbol, a known Side and Type, a positive Quantity, a
// positive LimitPrice on a limit order and none on a market order, and a
// positive StopLossPrice when there is one. It returns nil or the first
// problem found, in that order, as a *[tradekit.ParamError] naming the
// field as the API spells it ("symbol", "side", "type", "quantity",
// "limitPrice", "stopLossPrice"); the error wraps [tradekit.ErrInvalid].
//
// Validate does not check the stop-loss price against the order's price,
// which it does not know: [Check] does.
func (o Order) Validate() error {
	switch {
	case o.Symbol == "":
		return &tradekit.ParamError{Param: "symbol", Msg: "is required"}
	case o.Side != Buy && o.Side != Sell:
		return &tradekit.ParamError{Param: "side", Msg: `must be "buy" or "sell", not ` + tradekit.Quote(string(o.Side))}
	case o.Type != Market && o.Type != Limit:
		return &tradekit.ParamError{Param: "type", Msg: `must be "market" or "limit", not ` + tradekit.Quote(string(o.Type))}
	case o.Quantity.Sign() <= 0:
		return &tradekit.ParamError{Param: "quantity", Msg: "must be positive, not " + o.Quantity.String()}
	case o.Type == Limit && o.LimitPrice == nil:
		return &tradekit.ParamError{Param: "limitPrice", Msg: "is required for a limit order"}
	case o.Type == Limit && o.LimitPrice.Sign() <= 0:
		return &tradekit.ParamError{Param: "limitPrice", Msg: "must be positive, not " + o.LimitPrice.String()}
	case o.Type == Market && o.LimitPrice != nil:
		return &tradekit.ParamError{Param: "limitPrice", Msg: "is not allowed on a market order"}
	case o.StopLossPrice != nil && o.StopLossPrice.Sign() <= 0:
		return &tradekit.ParamError{Param: "stopLossPrice", Msg: "must be positive, not " + o.StopLossPrice.String()}
	}
	return nil
}
