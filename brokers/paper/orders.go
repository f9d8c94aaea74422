package paper

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/brokers/alpaca"
	"github.com/tradekit/tradekit/internal/database"
	"github.com/tradekit/tradekit/marketdata"
)

// The statuses of the paper broker's orders, Alpaca's words: an order is
// open (new) until it is filled, canceled or rejected.
const (
	statusNew      = "new"
	statusFilled   = "filled"
	statusCanceled = "canceled"
	statusRejected = "rejected"
	statusReplaced = "replaced"
	statusHeld     = "held" // a leg waiting for its parent to fill
)

// maxClientOrderID is the longest client_order_id, Alpaca's limit.
const maxClientOrderID = 48

// matchBatch is the most open orders one pass of [Broker.Match] reads
// at a time; a pass reads them all, a batch after another. (A variable
// for the tests.)
var matchBatch = 500

// Alpaca's error codes for the refusals of POST /v2/orders.
const (
	codeForbidden       = 40310000 // insufficient buying power or quantity
	codeDuplicateClient = 40010001 // client_order_id must be unique
)

// apiError is an answer of the API with its own status and Alpaca code,
// where the kinds of package tradekit have none.
type apiError struct {
	status, code int
	msg          string
}

func (e *apiError) Error() string { return "paper: " + e.msg }

// refused returns the 403 of an order the account cannot afford or hold.
func refused(format string, args ...any) error {
	return &apiError{http.StatusForbidden, codeForbidden, fmt.Sprintf(format, args...)}
}

// fillPrice returns the price at which an order on side fills against the
// latest close: the close moved against the order by the slippage, and
// for a limit order never worse than the limit; ok is false when a limit
// order does not fill at this close (a buy's limit below it, a sell's
// above it). Prices are rounded half away from zero to 9 places.
func (b *Broker) fillPrice(side string, close decimal.Decimal, limit *decimal.Decimal) (price decimal.Decimal, ok bool) {
	if side == string(brokers.Buy) {
		price = close.Add(close.Mul(b.slippage)).Round(qtyScale)
		if limit != nil {
			if close.GreaterThan(*limit) {
				return decimal.Decimal{}, false
			}
			price = decimal.Min(price, *limit)
		}
		return price, true
	}
	price = close.Sub(close.Mul(b.slippage)).Round(qtyScale)
	if limit != nil {
		if close.LessThan(*limit) {
			return decimal.Decimal{}, false
		}
		price = decimal.Max(price, *limit)
	}
	return price, true
}

// orderFill returns the price at which the open order o fills at the
// latest close c, whether it fills, and whether o changed without
// filling, so that it must be saved (see [markTriggered]).
//
// A stop order triggers when c reaches its stop price (a buy's at or
// above it, a sell's at or below) and then fills as a market order at c;
// a stop_limit order triggers the same way, is marked triggered, and
// from then on fills as a limit order. A trailing_stop order first moves
// its mark (o.HWM) to c when c is beyond it (higher for a sell, lower for
// a buy) and its stop price with it (see [trailStop]), then fills as a
// stop order at that stop.
func (b *Broker) orderFill(o *order, c decimal.Decimal) (price decimal.Decimal, ok, changed bool) {
	buy := o.Side == string(brokers.Buy)
	switch o.Type {
	case "trailing_stop":
		if o.HWM == nil || buy && c.LessThan(*o.HWM) || !buy && c.GreaterThan(*o.HWM) {
			m := c
			o.HWM, changed = &m, true
			stop := trailStop(o)
			o.StopPrice = &stop
		}
		if buy && c.LessThan(*o.StopPrice) || !buy && c.GreaterThan(*o.StopPrice) {
			return decimal.Decimal{}, false, changed
		}
	case "stop", "stop_limit":
		if !o.Triggered {
			if buy && c.LessThan(*o.StopPrice) || !buy && c.GreaterThan(*o.StopPrice) {
				return decimal.Decimal{}, false, false
			}
			o.Triggered, changed = true, o.Type == "stop_limit"
		}
	}
	price, ok = b.fillPrice(o.Side, c, o.LimitPrice)
	return price, ok, changed && !ok
}

// trailStop returns the stop price of the trailing stop o at its mark
// m = o.HWM, rounded half away from zero to 9 places:
//
//	sell: m − trail_price, or m × (1 − trail_percent / 100)
//	buy:  m + trail_price, or m × (1 + trail_percent / 100)
func trailStop(o *order) decimal.Decimal {
	trail := decimal.Zero
	if o.TrailPrice != nil {
		trail = *o.TrailPrice
	} else if o.TrailPercent != nil {
		trail = o.HWM.Mul(*o.TrailPercent).Div(decimal.NewFromInt(100))
	}
	if o.Side == string(brokers.Buy) {
		return o.HWM.Add(trail).Round(qtyScale)
	}
	return o.HWM.Sub(trail).Round(qtyScale)
}

// exitGroup returns the key under which an open sell counts against a
// position: the legs of one parent, and an OCO order with its leg, exit
// one position once, whichever of them fills, so they share a key.
func exitGroup(o *order) uuid.UUID {
	if o.ParentID != nil {
		return *o.ParentID
	}
	return o.ID
}

// Place places an order in the account with the given id, as POST
// /v2/orders does, and returns it open (status "new"); the matching
// engine ([Broker.Match]) fills it. Market, limit, stop, stop_limit and
// trailing_stop orders on symbols of Tradekit assets with a stored price
// are taken, with time in force day, gtc, ioc or fok (see [Broker.Match]),
// or opg or cls on whole-share market and limit orders of class simple,
// refused (422) at the hours Alpaca refuses them (see [Broker.Match] and
// the package doc), and order class simple, bracket, oto or oco: the legs of a bracket or
// OTO order are placed with it, held until it fills; an OCO order is a
// limit order at take_profit.limit_price and its stop leg, both open.
//
// In one transaction, with the account locked, Place refuses (403,
// Alpaca's code 40310000) a buy whose cost, with the cost of the
// account's open buys, is more than the cash, and a sell of more than
// the position less the account's open sells (the legs of one order, and
// an OCO order with its leg, count once). An order's cost is its notional,
// or its quantity at its limit price, or at the fill price of the latest
// close (of its stop price, when higher) for a market or stop order,
// plus the commission; held legs cost nothing until they are open. A
// client_order_id the account used already is a 422 with Alpaca's code
// 40010001.
func (b *Broker) Place(ctx context.Context, accountID uuid.UUID, req alpaca.OrderRequestJSON) (alpaca.OrderJSON, error) {
	o, err := b.place(ctx, account{ID: accountID}, req)
	if err != nil {
		return alpaca.OrderJSON{}, err
	}
	b.placedOne(o)
	return orderJSON(*o), nil
}

// place is [Broker.Place] without waking the matcher, in the account
// that who names (see [lockAccount]).
func (b *Broker) place(ctx context.Context, who account, req alpaca.OrderRequestJSON) (*order, error) {
	o, err := b.draft(who.ID, req)
	if err != nil {
		// An invalid token is a 401 whatever the order.
		if _, aerr := b.resolve(ctx, who); aerr != nil {
			return nil, aerr
		}
		return nil, err
	}
	orders := []*order{o}
	for i := range o.legs {
		orders = append(orders, &o.legs[i])
	}
	err = database.RunInTx(ctx, b.db, func(ctx context.Context, tx bun.IDB) error {
		// The account, locked, with the order's asset and price version,
		// its open orders and its client order ids, in one round trip;
		// the latest close is kept in memory per version, else read
		// through the transaction (a read through the pool could wait for
		// a connection that this transaction's waiters hold).
		l, err := readPlacement(ctx, tx, who, len(orders), o, b.maxOpen)
		if err != nil {
			return err
		}
		if l.Scope != nil && !hasScope(*l.Scope, scopeTrading) {
			return errScope(scopeTrading)
		}
		if l.Asset == nil {
			return notTraded(o.Symbol)
		}
		p, err := b.closes.at(ctx, tx, l.Asset.ID, l.Asset.PricesVersion)
		last, err := price(o, l.Asset.ID, assetClass(l.Asset.Type), p, err)
		if err != nil {
			return err
		}
		for _, x := range orders {
			x.AccountID = l.ID
		}
		if l.Dup {
			return &apiError{http.StatusUnprocessableEntity, codeDuplicateClient, "client_order_id must be unique"}
		}
		opening := 0
		for _, x := range orders {
			if x.Status == statusNew {
				opening++
			}
		}
		if l.OpenCount+opening > b.maxOpen {
			return refused("too many open orders: an account holds at most %d (it holds %d)", b.maxOpen, l.OpenCount)
		}
		open := make([]order, len(l.Open))
		for i, x := range l.Open {
			open[i] = x.order()
		}
		if err := b.afford(ctx, tx, l.account, o, open, l.Held, last); err != nil {
			return err
		}
		// Written with the commit: nothing here reads them back.
		return database.ExecWithNext(ctx, tx, ordersInsert(tx, l.OrderSeq-int64(len(orders))+1, orders...))
	})
	if err != nil {
		return nil, err
	}
	return o, nil
}

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

// newOrder checks req and returns the open order it asks for, with its
// legs, and the latest close of its asset.
func (b *Broker) newOrder(ctx context.Context, accountID uuid.UUID, req alpaca.OrderRequestJSON) (*order, decimal.Decimal, error) {
	o, err := b.draft(accountID, req)
	if err != nil {
		return nil, decimal.Decimal{}, err
	}
	a, err := b.md.AssetBySymbol(ctx, o.Symbol)
	if errors.Is(err, tradekit.ErrNotFound) {
		return nil, decimal.Decimal{}, notTraded(o.Symbol)
	}
	if err != nil {
		return nil, decimal.Decimal{}, fmt.Errorf("paper: %w", err)
	}
	p, err := b.closes.get(ctx, b.db, a.ID)
	last, err := price(o, a.ID, assetClass(a.Type), p, err)
	return o, last, err
}

// notTraded is the 422 of an order on a symbol no Tradekit asset has.
func notTraded(symbol string) error {
	return &tradekit.ParamError{Param: "symbol", Msg: fmt.Sprintf("%s is not traded here: no Tradekit asset has it", tradekit.Quote(symbol))}
}

// draft checks req, which it reads alone, and returns the open order it
// asks for, with its legs, but without its asset: see [Broker.price].
func (b *Broker) draft(accountID uuid.UUID, req alpaca.OrderRequestJSON) (*order, error) {
	if err := checkNUL(req); err != nil {
		return nil, err
	}
	symbol := marketdata.NormalizeSymbol(req.Symbol)
	if symbol == "" {
		return nil, &tradekit.ParamError{Param: "symbol", Msg: "is required"}
	}
	if req.OrderClass == "oco" && req.LimitPrice == nil && req.TakeProfit != nil {
		req.LimitPrice = req.TakeProfit.LimitPrice // an OCO order is its take-profit limit order
	}
	if err := checkRequest(req); err != nil {
		return nil, err
	}
	if isAuction(req.TimeInForce) {
		if _, err := auctionOf(req.TimeInForce, b.clock()); err != nil {
			return nil, err
		}
	}
	now := b.clock()
	id := uuid.New()
	o := &order{
		ID: id, AccountID: accountID, ClientOrderID: req.ClientOrderID, Symbol: symbol,
		Side: req.Side, Type: req.Type, TimeInForce: req.TimeInForce, Status: statusNew, Qty: decimal.Zero, FilledQty: decimal.Zero,
		LimitPrice: req.LimitPrice, StopPrice: req.StopPrice, Notional: req.Notional, ExtendedHours: req.ExtendedHours,
		TrailPrice: req.TrailPrice, TrailPercent: req.TrailPercent,
		OrderClass: "simple", CreatedAt: now, UpdatedAt: now, SubmittedAt: now,
	}
	if req.Qty != nil {
		o.Qty = *req.Qty
	}
	if o.ClientOrderID == "" {
		o.ClientOrderID = id.String()
	}
	if req.OrderClass == "bracket" || req.OrderClass == "oto" || req.OrderClass == "oco" {
		o.OrderClass = req.OrderClass
		o.legs = legOrders(o, req)
	}
	return o, nil
}

// price completes the draft o (see [Broker.draft]) with its asset, of
// the given id and Alpaca class, and for a trailing stop its mark and
// stop price, from the asset's latest price last, whose close it
// returns. err is the error of reading last: a 422 when the asset has no
// stored price.
func price(o *order, assetID uuid.UUID, class string, last marketdata.Price, err error) (decimal.Decimal, error) {
	if errors.Is(err, tradekit.ErrNotFound) {
		return decimal.Decimal{}, &tradekit.ParamError{Param: "symbol", Msg: fmt.Sprintf("%s is not traded here: it has no stored price", tradekit.Quote(o.Symbol))}
	} else if err != nil {
		return decimal.Decimal{}, err
	}
	o.AssetID, o.AssetClass = &assetID, class
	for i := range o.legs {
		o.legs[i].AssetID, o.legs[i].AssetClass = &assetID, class
	}
	if o.Type == "trailing_stop" {
		m := last.Close
		stop := trailStop(&order{Side: o.Side, HWM: &m, TrailPrice: o.TrailPrice, TrailPercent: o.TrailPercent})
		o.HWM, o.StopPrice = &m, &stop
	}
	return last.Close, nil
}

// legOrders returns the legs of the bracket, OTO or OCO order o that req
// asks for: the take profit, a limit order at take_profit.limit_price,
// then the stop loss, a stop order at stop_loss.stop_price (stop_limit
// with stop_loss.limit_price), each of o's quantity and time in force.
// The legs of a bracket or OTO order are on the other side of o and held
// until o fills; an OCO order is its own take profit, so its one leg is
// the stop loss, on o's side and open at once.
func legOrders(o *order, req alpaca.OrderRequestJSON) []order {
	leg := func() order {
		id := uuid.New()
		l := *o
		l.ID, l.ClientOrderID, l.ParentID, l.legs = id, id.String(), &o.ID, nil
		l.LimitPrice, l.StopPrice, l.TrailPrice, l.TrailPercent, l.HWM = nil, nil, nil, nil, nil
		l.Status = statusNew
		if o.OrderClass != "oco" {
			l.Status = statusHeld
			l.Side = string(brokers.Sell)
			if o.Side == string(brokers.Sell) {
				l.Side = string(brokers.Buy)
			}
		}
		return l
	}
	var out []order
	if req.TakeProfit != nil && o.OrderClass != "oco" {
		l := leg()
		l.Type, l.LimitPrice = "limit", req.TakeProfit.LimitPrice
		out = append(out, l)
	}
	if req.StopLoss != nil {
		l := leg()
		l.Type, l.StopPrice = "stop", req.StopLoss.StopPrice
		if req.StopLoss.LimitPrice != nil {
			l.Type, l.LimitPrice = "stop_limit", req.StopLoss.LimitPrice
		}
		out = append(out, l)
	}
	return out
}

// afford checks that account a can pay for order o or hold what it sells,
// beside its open orders open: for a buy at least its open buys, for a
// sell its open sells of o's symbol (see openOrdersAnd), against the
// quantity of o's symbol it holds, held.
func (b *Broker) afford(ctx context.Context, db bun.IDB, a account, o *order, open []order, held, last decimal.Decimal) error {
	if o.Side == string(brokers.Sell) {
		// A notional sell's quantity is estimated at the latest close, the
		// close its fill will most likely see.
		qty := func(x *order) decimal.Decimal {
			if x.Notional == nil {
				return x.Qty
			}
			price, _ := b.fillPrice(x.Side, last, nil)
			q, _ := x.Notional.QuoRem(price, qtyScale)
			return q
		}
		available, seen := held, map[uuid.UUID]bool{}
		for i := range open {
			if x := &open[i]; x.Side == string(brokers.Sell) && x.Symbol == o.Symbol && !seen[exitGroup(x)] {
				seen[exitGroup(x)] = true
				available = available.Sub(qty(x))
			}
		}
		if want := qty(o); want.GreaterThan(available) {
			return refused("insufficient qty available for order (requested: %s, available: %s)", want, decimal.Max(available, decimal.Zero))
		}
		return nil
	}
	closes := map[uuid.UUID]decimal.Decimal{*o.AssetID: last} // o's, read just before
	// Read through db, the transaction: on SQLite a read through the pool
	// could wait for a connection that the writers queued behind this
	// transaction hold.
	md := marketdata.NewStore(db)
	// A buy costs its notional, or its quantity at its limit, or at the
	// fill price of the latest close (of its stop price, when higher).
	cost := func(x *order) (decimal.Decimal, error) {
		if x.Notional != nil {
			return x.Notional.Add(b.commission), nil
		}
		price := x.LimitPrice
		if price == nil {
			c, ok := closes[*x.AssetID]
			if !ok {
				p, err := md.LatestPrice(ctx, *x.AssetID)
				if err != nil {
					return decimal.Decimal{}, fmt.Errorf("paper: %w", err)
				}
				c, closes[*x.AssetID] = p.Close, p.Close
			}
			if x.StopPrice != nil {
				c = decimal.Max(c, *x.StopPrice)
			}
			fill, _ := b.fillPrice(x.Side, c, nil)
			price = &fill
		}
		return x.Qty.Mul(*price).Add(b.commission), nil
	}
	need, err := cost(o)
	if err != nil {
		return err
	}
	for i := range open {
		if open[i].Side == string(brokers.Buy) && open[i].AssetID != nil {
			c, err := cost(&open[i])
			if err != nil {
				return err
			}
			need = need.Add(c)
		}
	}
	if need.GreaterThan(a.Cash) {
		return refused("insufficient buying power")
	}
	return nil
}

// Cancel cancels the account's open order id, as DELETE /v2/orders/{id}
// does, at once, with the rest of its group: cancelling a bracket, OTO or
// OCO order or one of its legs cancels every open or held order of that
// order, as one. The error wraps [tradekit.ErrNotFound] for an order the
// account does not have, and is a 422 for one that is not open: a cancel
// racing a fill loses or wins as a whole.
func (b *Broker) Cancel(ctx context.Context, accountID, id uuid.UUID) error {
	o, err := orderByID(ctx, b.db, accountID, id)
	if err != nil {
		return err
	}
	now := b.clock()
	if err := checkAuctionCancel(&o, now); err != nil {
		return err
	}
	o.Status, o.CanceledAt, o.UpdatedAt = statusCanceled, &now, now
	cancel := func(ctx context.Context, db bun.IDB) error {
		ok, err := closeOrder(ctx, db, &o, "canceled_at")
		if err != nil {
			return err
		}
		if !ok {
			return &apiError{http.StatusUnprocessableEntity, codeInvalid, "order is not cancelable"}
		}
		return nil
	}
	if o.OrderClass == "" || o.OrderClass == "simple" {
		return cancel(ctx, b.db)
	}
	return b.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := cancel(ctx, tx); err != nil {
			return err
		}
		_, err := cancelGroup(ctx, tx, exitGroup(&o), o.ID, now)
		return err
	})
}

// Run fills orders until ctx is done: every Config.MatchInterval it runs
// a pass of [Broker.Match] over the open orders that may have changed
// since its last pass (those of the assets whose prices changed, those
// opened or changed since, and the opg and cls orders when the clock has
// passed an open or a close), and over every open order at its first
// pass and every five minutes; and at once after each placement through
// this Broker a pass over the orders placed since the last one (and the
// legs their fills open). A resting order far from the market therefore
// costs nothing while its asset's prices stay still. Any number of
// Brokers may run on one database.
func (b *Broker) Run(ctx context.Context) {
	t := time.NewTicker(b.matchEvery)
	defer t.Stop()
	for {
		var err error
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_, err = b.matchChanged(ctx)
		case <-b.kick:
			_, err = b.matchPlaced(ctx)
		}
		if err != nil && ctx.Err() == nil {
			b.log.Warn("paper: matching orders failed", "error", err)
		}
	}
}

// placedOne notes the order o placed through b, for the matcher's next
// pass over the orders placed (see [Broker.Run]), and wakes the matcher.
func (b *Broker) placedOne(o *order) {
	b.placedMu.Lock()
	b.placed = append(b.placed, *o)
	b.placedMu.Unlock()
	select {
	case b.kick <- struct{}{}:
	default: // a pass is due already
	}
}

// matchPlaced is [Broker.Match] over the orders placed through b since
// the last call, and then over the legs their fills opened. The orders
// are matched as they were placed, without reading them again: a fill
// moves an order only if it is still open (see [Broker.fillOpen]), so
// one cancelled, replaced or filled elsewhere meanwhile stays as it is.
// The legs are read only when one of them could fill at the close their
// parent met (a stop-loss leg below it cannot); the regular passes look
// at every open order anyway.
func (b *Broker) matchPlaced(ctx context.Context) (int, error) {
	b.placedMu.Lock()
	open := b.placed
	b.placed = nil
	b.placedMu.Unlock()
	if len(open) == 0 {
		return 0, nil
	}
	slices.SortStableFunc(open, byPlacement)
	closes := map[uuid.UUID]*decimal.Decimal{}
	filled, again, err := b.matchOrders(ctx, closes, open)
	if err != nil || !again {
		return filled, err
	}
	var parents []uuid.UUID
	for i := range open {
		if o := &open[i]; o.Status == statusFilled && b.legsMayFill(o, closes) {
			parents = append(parents, o.ID)
		}
	}
	if len(parents) == 0 {
		return filled, nil
	}
	var legs []order
	if err := b.db.NewSelect().Model(&legs).Where("status = ? AND parent_id IN (?)", statusNew, bun.In(parents)).
		Order("submitted_at", "seq").Scan(ctx); err != nil {
		return filled, fmt.Errorf("paper: the legs of the orders placed: %w", err)
	}
	n, _, err := b.matchOrders(ctx, closes, legs)
	return filled + n, err
}

// legsMayFill reports whether a leg of the order o, as placed, could fill
// or change (a trailing stop's mark, a stop's trigger) at the close of
// its asset in closes, or that close is unknown.
func (b *Broker) legsMayFill(o *order, closes map[uuid.UUID]*decimal.Decimal) bool {
	if o.AssetID == nil || closes[*o.AssetID] == nil {
		return len(o.legs) > 0
	}
	c := closes[*o.AssetID]
	for _, leg := range o.legs {
		if _, ok, changed := b.orderFill(&leg, *c); ok || changed {
			return true
		}
	}
	return false
}

// Match fills the open orders that can fill at their asset's latest
// stored close (see Config.SlippageBps for the price and
// [Broker.orderFill] for stops), oldest first, and returns how many it
// filled. A market order always can; a limit buy when the close is at or
// below its limit, a limit sell when it is at or above. An ioc or fok
// order that cannot fill at the close is cancelled (orders fill whole,
// so the two are the same). A fill the account can no longer afford, or
// a sell of more than it holds, rejects the order instead.
//
// An order with legs settles them in the transaction of its fill: a
// bracket or OTO order's held legs become open, and Match makes a second
// pass so that they meet the same close; an OCO order cancels its leg;
// a leg cancels the rest of its group (the other exit, or an OCO
// order). A rejected order cancels its held legs.
//
// An opg or cls order waits for its auction instead: once the clock has
// passed the open (opg) or the close (cls) of its session and the
// session's daily bar is stored, it fills at the bar's open or close,
// without slippage, or is cancelled when that price misses its limit or
// the session has no stored bar but a later session has.
//
// Each fill runs in a transaction that locks the account and moves the
// order from open to filled only if it is still open, so that an order
// fills once, and its cash and position change once, however many
// Brokers run Match on the database at the same time, and a cancel that
// races it either wins or loses.
func (b *Broker) Match(ctx context.Context) (int, error) {
	filled := 0
	closes := map[uuid.UUID]*decimal.Decimal{} // nil: no close
	for range 2 {
		n, again, err := b.matchPass(ctx, closes)
		filled += n
		if err != nil || !again {
			return filled, err
		}
	}
	return filled, nil
}

// matchPass is one pass of [Broker.Match] over the open orders, as they
// were placed, matchBatch at a time; again reports whether a fill opened
// held legs.
func (b *Broker) matchPass(ctx context.Context, closes map[uuid.UUID]*decimal.Decimal) (filled int, again bool, err error) {
	var after *order
	for {
		open, err := openOrdersAfter(ctx, b.db, after, matchBatch)
		if err != nil {
			return filled, again, err
		}
		n, a, err := b.matchOrders(ctx, closes, open)
		filled, again = filled+n, again || a
		if err != nil || len(open) < matchBatch {
			return filled, again, err
		}
		after = &open[len(open)-1]
	}
}

// matchOrders fills, cancels or triggers each of the open orders as
// [Broker.Match] does, with the closes read so far in closes; again
// reports whether a fill opened held legs.
func (b *Broker) matchOrders(ctx context.Context, closes map[uuid.UUID]*decimal.Decimal, open []order) (filled int, again bool, err error) {
	for i := range open {
		o := &open[i]
		if o.AssetID == nil {
			continue
		}
		if isAuction(o.TimeInForce) {
			done, err := b.matchAuction(ctx, o)
			if err != nil {
				return filled, again, err
			}
			if done {
				filled++
			}
			continue
		}
		c, ok := closes[*o.AssetID]
		if !ok {
			p, err := b.closes.get(ctx, b.db, *o.AssetID)
			switch {
			case err == nil:
				c = &p.Close
			case !errors.Is(err, tradekit.ErrNotFound):
				return filled, again, err
			}
			closes[*o.AssetID] = c
		}
		if c == nil {
			continue
		}
		price, ok, changed := b.orderFill(o, *c)
		switch {
		case !ok && (o.TimeInForce == "ioc" || o.TimeInForce == "fok"):
			now := b.clock()
			o.Status, o.CanceledAt, o.UpdatedAt = statusCanceled, &now, now
			if _, err := closeOrder(ctx, b.db, o, "canceled_at"); err != nil {
				return filled, again, err
			}
			continue
		case !ok && changed:
			o.UpdatedAt = b.clock()
			if err := markTriggered(ctx, b.db, o); err != nil {
				return filled, again, err
			}
			continue
		case !ok:
			continue
		}
		done, err := b.fillOpen(ctx, o, price)
		if err != nil {
			return filled, again, err
		}
		if done {
			filled++
			again = again || o.ParentID == nil && (o.OrderClass == "bracket" || o.OrderClass == "oto")
		}
	}
	return filled, again, nil
}

// settle settles the group of order o once o has filled or been
// rejected, in the transaction that closed it: a filled bracket or OTO
// order opens its held legs; a leg, an OCO order or a rejected order
// cancels the rest of its group.
func settle(ctx context.Context, tx bun.IDB, o *order, now time.Time) error {
	s := settlement(tx, o, now)
	if s == nil {
		return nil
	}
	if _, err := s.Exec(ctx); err != nil {
		return fmt.Errorf("paper: settle the group of %s: %w", o.ID, err)
	}
	return nil
}

// settlement is the statement of settle, nil when there is nothing to
// do.
func settlement(tx bun.IDB, o *order, now time.Time) database.Statement {
	switch {
	case o.OrderClass == "" || o.OrderClass == "simple":
		return nil
	case o.Status == statusFilled && o.ParentID == nil && o.OrderClass != "oco":
		return legsActivation(tx, o.ID, now)
	}
	return groupCancel(tx, exitGroup(o), o.ID, now)
}

// fillOpen fills the open order o at price, or rejects it when the
// account cannot pay or deliver, and reports whether it filled it.
func (b *Broker) fillOpen(ctx context.Context, o *order, price decimal.Decimal) (bool, error) {
	filled := false
	err := database.RunInTx(ctx, b.db, func(ctx context.Context, tx bun.IDB) error {
		a, p, err := lockAccountWith(ctx, tx, o.AccountID, o.Symbol)
		if err != nil {
			return err
		}
		now := b.clock()
		reject := func() error {
			o.Status, o.UpdatedAt = statusRejected, now
			if ok, err := closeOrder(ctx, tx, o); err != nil || !ok {
				return err
			}
			return settle(ctx, tx, o, now)
		}
		if o.Notional != nil {
			o.Qty, _ = o.Notional.QuoRem(price, qtyScale)
			if !o.Qty.IsPositive() {
				return reject()
			}
		}
		cash, h, err := apply(a.Cash, holding{Qty: p.Qty, Avg: p.AvgEntryPrice}, o.Symbol, brokers.Side(o.Side), o.Qty, price, b.commission)
		if errors.Is(err, tradekit.ErrRejected) || err == nil && (!fits(cash, avgScale) || !fits(h.Avg, avgScale) || !fits(h.Qty, avgScale)) {
			return reject()
		}
		if err != nil {
			return err
		}
		commission := b.commission
		o.Status, o.FilledQty, o.FilledAvgPrice, o.Commission, o.FilledAt, o.UpdatedAt = statusFilled, o.Qty, &price, &commission, &now, now
		if ok, err := closeOrder(ctx, tx, o, "qty", "filled_qty", "filled_avg_price", "commission", "filled_at", "triggered", "hwm", "stop_price"); err != nil || !ok {
			return err // filled or cancelled meanwhile: nothing else changes
		}
		filled = true
		// The rest is written with the commit: nothing here reads it.
		p = position{AccountID: o.AccountID, Symbol: o.Symbol, Qty: h.Qty, AvgEntryPrice: h.Avg, UpdatedAt: now}
		for _, s := range []database.Statement{cashUpdate(tx, o.AccountID, cash), settlement(tx, o, now), positionSave(tx, p)} {
			if s == nil {
				continue
			}
			if err := database.ExecWithNext(ctx, tx, s); err != nil {
				return fmt.Errorf("paper: fill %s: %w", o.ID, err)
			}
		}
		return nil
	})
	if err != nil {
		return false, err
	}
	return filled, nil
}

// ---- the API ----

// maxOrderBody bounds the body of POST /v2/orders.
const maxOrderBody = 64 << 10

// handlePlace answers POST /v2/orders with the order placed.
func (b *Broker) handlePlace(w http.ResponseWriter, r *http.Request, a account) error {
	var req alpaca.OrderRequestJSON
	if err := decodeJSON(r.Body, &req, "an order"); err != nil {
		if _, aerr := b.resolve(r.Context(), a); aerr != nil {
			return aerr // an invalid token is a 401 whatever the body
		}
		return err
	}
	o, err := b.place(r.Context(), a, req)
	if err != nil {
		return err
	}
	// The matcher is woken once the answer is sent: on a machine with
	// few cores its fill would otherwise compete with the answer, which
	// the client waits for, for the processor (a broker acknowledges an
	// order before it routes it, too).
	err = writeJSON(w, http.StatusOK, orderJSON(*o))
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	b.placedOne(o)
	return err
}

// handleOrder answers GET /v2/orders/{id}.
func (b *Broker) handleOrder(w http.ResponseWriter, r *http.Request, a account) error {
	id, err := uuid.Parse(r.PathValue("id"))
	if err != nil {
		if _, err := b.resolve(r.Context(), a); err != nil {
			return err // an invalid token is a 401 whatever the id
		}
		return fmt.Errorf("paper: %w", tradekit.ErrNotFound)
	}
	o, err := orderWithLegs(r.Context(), b.db, a, id, b.clock())
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, orderJSON(o))
}

// handleOrderByClientID answers GET /v2/orders:by_client_order_id.
func (b *Broker) handleOrderByClientID(w http.ResponseWriter, r *http.Request, a account) error {
	o, ok, err := orderByClientID(r.Context(), b.db, a.ID, r.URL.Query().Get("client_order_id"))
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("paper: %w", tradekit.ErrNotFound)
	}
	out, err := ordersJSON(r.Context(), b.db, []order{o}, true)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, out[0])
}

// handleCancel answers DELETE /v2/orders/{id} with 204.
func (b *Broker) handleCancel(w http.ResponseWriter, r *http.Request, a account) error {
	id, err := uuid.Parse(r.PathValue("id"))
	if err != nil {
		return fmt.Errorf("paper: %w", tradekit.ErrNotFound)
	}
	if err := b.Cancel(r.Context(), a.ID, id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// Replace replaces the account's open order id with a new order, as
// PATCH /v2/orders/{id} does: the new order is the old one with the
// fields req sets (qty, limit_price, stop_price, time_in_force,
// client_order_id), and replaces it; the old one becomes "replaced",
// with replaced_by and replaced_at. In one transaction, with the account
// locked, the new order is checked as [Broker.Place] checks an order,
// beside the account's other open orders. The error wraps
// [tradekit.ErrNotFound] for an order the account does not have, and is
// a 422 for one that is not open or a change that is not allowed.
func (b *Broker) Replace(ctx context.Context, accountID, id uuid.UUID, req alpaca.ReplaceRequestJSON) (alpaca.OrderJSON, error) {
	old, err := orderByID(ctx, b.db, accountID, id)
	if err != nil {
		return alpaca.OrderJSON{}, err
	}
	if old.Status != statusNew {
		return alpaca.OrderJSON{}, &apiError{http.StatusUnprocessableEntity, codeInvalid, "order is not replaceable: it is " + old.Status}
	}
	if old.OrderClass != "" && old.OrderClass != "simple" {
		return alpaca.OrderJSON{}, notSimulated("replacing an order of class %s", old.OrderClass)
	}
	if err := checkAuctionCancel(&old, b.clock()); err != nil {
		return alpaca.OrderJSON{}, err
	}
	if req.Trail != nil && old.Type != "trailing_stop" {
		return alpaca.OrderJSON{}, &tradekit.ParamError{Param: "trail", Msg: "is only allowed on a trailing_stop order"}
	}
	nr := alpaca.OrderRequestJSON{Symbol: old.Symbol, Side: old.Side, Type: old.Type, TimeInForce: old.TimeInForce,
		LimitPrice: old.LimitPrice, StopPrice: old.StopPrice, ExtendedHours: old.ExtendedHours, ClientOrderID: req.ClientOrderID,
		TrailPrice: old.TrailPrice, TrailPercent: old.TrailPercent}
	if old.Type == "trailing_stop" {
		nr.StopPrice = nil // derived from the mark, not asked for
		if req.Trail != nil && old.TrailPrice != nil {
			nr.TrailPrice = req.Trail
		} else if req.Trail != nil {
			nr.TrailPercent = req.Trail
		}
		if req.StopPrice != nil {
			return alpaca.OrderJSON{}, &tradekit.ParamError{Param: "stop_price", Msg: "is only allowed on a stop or stop_limit order"}
		}
	}
	if old.Notional != nil {
		nr.Notional = old.Notional
		if req.Qty != nil {
			return alpaca.OrderJSON{}, &tradekit.ParamError{Param: "qty", Msg: "cannot be set on a notional order"}
		}
	} else {
		q := old.Qty
		nr.Qty = &q
	}
	if req.Qty != nil {
		nr.Qty = req.Qty
	}
	if req.LimitPrice != nil {
		nr.LimitPrice = req.LimitPrice
	}
	if req.StopPrice != nil {
		nr.StopPrice = req.StopPrice
	}
	if req.TimeInForce != "" {
		nr.TimeInForce = req.TimeInForce
	}
	o, last, err := b.newOrder(ctx, accountID, nr)
	if err != nil {
		return alpaca.OrderJSON{}, err
	}
	o.Replaces = &old.ID
	err = b.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		a, err := lockAccount(ctx, tx, account{ID: accountID}, 1, o.SubmittedAt)
		if err != nil {
			return err
		}
		now := b.clock()
		old.Status, old.ReplacedBy, old.ReplacedAt, old.UpdatedAt = statusReplaced, &o.ID, &now, now
		ok, err := closeOrder(ctx, tx, &old, "replaced_by", "replaced_at")
		if err != nil {
			return err
		}
		if !ok {
			return &apiError{http.StatusUnprocessableEntity, codeInvalid, "order is not replaceable: it is no longer open"}
		}
		open, dup, err := openOrdersAnd(ctx, tx, accountID, o)
		if err != nil {
			return err
		}
		if dup {
			return &apiError{http.StatusUnprocessableEntity, codeDuplicateClient, "client_order_id must be unique"}
		}
		var held decimal.Decimal
		if o.Side == string(brokers.Sell) {
			p, _, err := positionOf(ctx, tx, accountID, o.Symbol)
			if err != nil {
				return err
			}
			held = p.Qty
		}
		if err := b.afford(ctx, tx, a, o, open, held, last); err != nil {
			return err
		}
		return insertOrders(ctx, tx, a.OrderSeq, o)
	})
	if err != nil {
		return alpaca.OrderJSON{}, err
	}
	b.placedOne(o)
	return orderJSON(*o), nil
}

// handleReplace answers PATCH /v2/orders/{id} with the new order.
func (b *Broker) handleReplace(w http.ResponseWriter, r *http.Request, a account) error {
	id, err := uuid.Parse(r.PathValue("id"))
	if err != nil {
		return fmt.Errorf("paper: %w", tradekit.ErrNotFound)
	}
	var req alpaca.ReplaceRequestJSON
	if err := decodeJSON(r.Body, &req, "an order replacement"); err != nil {
		return err
	}
	o, err := b.Replace(r.Context(), a.ID, id, req)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, o)
}

// handleCancelAll answers DELETE /v2/orders: it cancels every open order
// of the account and answers 207 with one item per order, Alpaca's
// {"id", "status", "body"}: 200 and the canceled order, or the error of
// an order that filled meanwhile.
func (b *Broker) handleCancelAll(w http.ResponseWriter, r *http.Request, a account) error {
	out, err := b.cancelAll(r.Context(), a.ID)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusMultiStatus, out)
}

// cancelAll cancels the account's open orders and returns one item per
// order.
func (b *Broker) cancelAll(ctx context.Context, accountID uuid.UUID) ([]alpaca.MultiStatusJSON, error) {
	open, err := openOrders(ctx, b.db, accountID)
	if err != nil {
		return nil, err
	}
	out := make([]alpaca.MultiStatusJSON, 0, len(open))
	for _, o := range open {
		err := b.Cancel(ctx, accountID, o.ID)
		var ae *apiError
		if errors.As(err, &ae) && o.ParentID != nil {
			// Cancelled already with its group?
			if c, cerr := orderByID(ctx, b.db, accountID, o.ID); cerr == nil && c.Status == statusCanceled {
				err = nil
			}
		}
		switch {
		case err == nil:
			c, err := orderByID(ctx, b.db, accountID, o.ID)
			if err != nil {
				return nil, err
			}
			out = append(out, alpaca.MultiStatusJSON{ID: o.ID.String(), Status: http.StatusOK, Body: orderJSON(c)})
		case errors.As(err, &ae):
			out = append(out, alpaca.MultiStatusJSON{ID: o.ID.String(), Status: ae.status, Body: alpaca.ErrorJSON{Code: ae.code, Message: ae.msg}})
		default:
			return nil, err
		}
	}
	return out, nil
}
