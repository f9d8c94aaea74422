package paper

import (
	"context"
	"errors"
	"fmt"
	"net/http"

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
		if l.Scope != nil && !hasScope(*l.Scope, ScopeTrading) {
			return errScope(ScopeTrading)
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
