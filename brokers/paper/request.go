package paper

import (
	"fmt"
	"net/http"

	"github.com/shopspring/decimal"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/brokers/alpaca"
)

// notSimulated returns the 422 of a request for something the paper
// broker does not simulate, in Alpaca's words where it has them.
func notSimulated(format string, args ...any) error {
	return &apiError{http.StatusUnprocessableEntity, codeInvalid, fmt.Sprintf(format, args...) + ": not simulated by the paper broker"}
}

// param returns the 422 of an invalid field of an order request.
func param(name, msg string) error { return &tradekit.ParamError{Param: name, Msg: msg} }

// checkPositive refuses a price or quantity that is not positive or has
// more than 9 decimal places.
func checkPositive(name string, v *decimal.Decimal) error {
	if v != nil && (!v.IsPositive() || !fits(*v, qtyScale)) {
		return param(name, "must be positive, with at most 9 decimal places")
	}
	return nil
}

// checkRequest checks an order request's fields against each other, as
// Alpaca does, and refuses (422) what the paper broker does not
// simulate: multi-leg option orders, short sales, and time in force gtx
// and gtd.
func checkRequest(req alpaca.OrderRequestJSON) error {
	switch req.OrderClass {
	case "", "simple":
		if req.TakeProfit != nil || req.StopLoss != nil {
			return param("order_class", "take_profit and stop_loss need order_class bracket, oto or oco")
		}
	case "bracket", "oto", "oco":
		if err := checkLegs(req); err != nil {
			return err
		}
	case "mleg":
		return notSimulated("multi-leg option orders")
	default:
		return param("order_class", "must be simple, bracket, oco, oto or mleg")
	}
	if len(req.Legs) > 0 {
		return notSimulated("multi-leg option orders")
	}
	switch req.Side {
	case string(brokers.Buy), string(brokers.Sell):
	default:
		return param("side", "must be buy or sell")
	}
	switch req.PositionIntent {
	case "", "buy_to_open", "sell_to_close":
	case "buy_to_close", "sell_to_open":
		return notSimulated("short selling")
	default:
		return param("position_intent", "must be buy_to_open, buy_to_close, sell_to_open or sell_to_close")
	}
	switch req.Type {
	case "market", "limit", "stop", "stop_limit", "trailing_stop":
	default:
		return param("type", "must be market, limit, stop, stop_limit or trailing_stop")
	}
	switch req.TimeInForce {
	case "day", "gtc":
	case "ioc", "fok":
		if req.Type != "market" && req.Type != "limit" {
			return notSimulated("time_in_force %s on a %s order", req.TimeInForce, req.Type)
		}
	case "opg", "cls":
		// Alpaca's on-open and on-close orders: market or limit, whole
		// shares (a notional order is refused below: it must be day).
		if req.Type != "market" && req.Type != "limit" {
			return param("time_in_force", req.TimeInForce+" is only allowed on market and limit orders")
		}
		if req.Qty != nil && !req.Qty.Equal(req.Qty.Truncate(0)) {
			return param("qty", "fractional orders must be DAY orders")
		}
	case "gtx", "gtd":
		return notSimulated("time_in_force %s", req.TimeInForce)
	default:
		return param("time_in_force", "must be day, gtc, opg, cls, ioc or fok")
	}
	for _, p := range []struct {
		name string
		v    *decimal.Decimal
	}{{"qty", req.Qty}, {"notional", req.Notional}, {"limit_price", req.LimitPrice}, {"stop_price", req.StopPrice},
		{"trail_price", req.TrailPrice}, {"trail_percent", req.TrailPercent}} {
		if err := checkPositive(p.name, p.v); err != nil {
			return err
		}
	}
	limit := req.Type == "limit" || req.Type == "stop_limit"
	stop := req.Type == "stop" || req.Type == "stop_limit"
	switch {
	case (req.Qty == nil) == (req.Notional == nil):
		return param("qty", "qty or notional is required, not both")
	case req.Notional != nil && req.Type != "market":
		return notSimulated("notional %s orders", req.Type)
	case req.Notional != nil && req.TimeInForce != "day":
		return param("time_in_force", "fractional orders must be DAY orders")
	case limit && req.LimitPrice == nil:
		return param("limit_price", "is required for a "+req.Type+" order")
	case !limit && req.LimitPrice != nil:
		return param("limit_price", "is only allowed on a limit or stop_limit order")
	case stop && req.StopPrice == nil:
		return param("stop_price", "is required for a "+req.Type+" order")
	case !stop && req.StopPrice != nil:
		return param("stop_price", "is only allowed on a stop or stop_limit order")
	case req.Type == "trailing_stop" && (req.TrailPrice == nil) == (req.TrailPercent == nil):
		return param("trail_price", "trail_price or trail_percent is required for a trailing_stop order, not both")
	case req.Type != "trailing_stop" && (req.TrailPrice != nil || req.TrailPercent != nil):
		return param("trail_price", "trail_price and trail_percent are only allowed on a trailing_stop order")
	case req.TrailPercent != nil && !req.TrailPercent.LessThan(decimal.NewFromInt(100)):
		return param("trail_percent", "must be below 100")
	case req.ExtendedHours && (req.Type != "limit" || req.TimeInForce != "day"):
		return param("extended_hours", "extended hours orders must be DAY limit orders")
	case len(req.ClientOrderID) > maxClientOrderID:
		return param("client_order_id", fmt.Sprintf("must be at most %d characters", maxClientOrderID))
	}
	return nil
}

// checkLegs checks the take_profit and stop_loss of a bracket, OTO or OCO
// order request: a bracket and an OCO order take both, an OTO order one;
// an OCO order is a limit order at take_profit.limit_price; the exits sit
// on either side of each other (a sell's take profit above its stop, a
// buy's below); and the order is by qty, day or gtc, in regular hours.
func checkLegs(req alpaca.OrderRequestJSON) error {
	tp, sl := req.TakeProfit, req.StopLoss
	if tp != nil {
		if tp.LimitPrice == nil {
			return param("take_profit.limit_price", "is required")
		}
		if err := checkPositive("take_profit.limit_price", tp.LimitPrice); err != nil {
			return err
		}
	}
	if sl != nil {
		if sl.StopPrice == nil {
			return param("stop_loss.stop_price", "is required")
		}
		if err := checkPositive("stop_loss.stop_price", sl.StopPrice); err != nil {
			return err
		}
		if err := checkPositive("stop_loss.limit_price", sl.LimitPrice); err != nil {
			return err
		}
	}
	class := req.OrderClass
	switch {
	case class != "oto" && (tp == nil || sl == nil):
		return param("take_profit", "take_profit and stop_loss are required for order_class "+class)
	case class == "oto" && (tp == nil) == (sl == nil):
		return param("take_profit", "one of take_profit and stop_loss is required for order_class oto, not both")
	case class == "oco" && req.Type != "limit":
		return param("type", "must be limit for order_class oco")
	case class == "oco" && req.LimitPrice != nil && !req.LimitPrice.Equal(*tp.LimitPrice):
		return param("limit_price", "must be take_profit.limit_price for order_class oco")
	case req.Notional != nil:
		return param("notional", "fractional orders must be simple orders")
	case req.TimeInForce != "day" && req.TimeInForce != "gtc":
		return param("time_in_force", "must be day or gtc for order_class "+class)
	case req.ExtendedHours:
		return param("extended_hours", "extended hours orders must be simple orders")
	}
	exitSell := req.Side == string(brokers.Buy) // the exits of a bracket or OTO order are on the other side
	if class == "oco" {
		exitSell = req.Side == string(brokers.Sell)
	}
	if tp != nil && sl != nil {
		if exitSell && !tp.LimitPrice.GreaterThan(*sl.StopPrice) {
			return param("take_profit.limit_price", "must be above stop_loss.stop_price for sell exits")
		}
		if !exitSell && !tp.LimitPrice.LessThan(*sl.StopPrice) {
			return param("take_profit.limit_price", "must be below stop_loss.stop_price for buy exits")
		}
	}
	return nil
}
