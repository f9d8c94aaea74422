package paper

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/brokers/alpaca"
	"github.com/tradekit/tradekit/marketdata"
)

// The statuses of the paper broker's orders, Alpaca's words: an order is
// open (new) until it is filled, canceled or rejected.
const (
	statusNew      = "new"
	statusFilled   = "filled"
	statusCanceled = "canceled"
	statusRejected = "rejected"
)

// maxClientOrderID is the longest client_order_id, Alpaca's limit.
const maxClientOrderID = 48

// matchBatch is the most open orders one pass of [Broker.Match] reads.
const matchBatch = 500

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

// Place places an order in the account with the given id, as POST
// /v2/orders does, and returns it open (status "new"); the matching
// engine ([Broker.Match]) fills it. Only market and limit orders on
// symbols of Tradekit assets with a stored price are taken; time in
// force day or gtc is stored, and paper orders never expire.
//
// In one transaction, with the account locked, Place refuses (403,
// Alpaca's code 40310000) a buy whose cost, with the cost of the
// account's open buys, is more than the cash, and a sell of more than
// the position less the account's open sells. An order's cost is its
// quantity at its limit price, or at the fill price of the latest close
// for a market order, plus the commission. A client_order_id the account
// used already is a 422 with Alpaca's code 40010001.
func (b *Broker) Place(ctx context.Context, accountID uuid.UUID, req alpaca.OrderRequestJSON) (alpaca.OrderJSON, error) {
	o, last, err := b.newOrder(ctx, accountID, req)
	if err != nil {
		return alpaca.OrderJSON{}, err
	}
	err = b.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		a, err := accountByID(ctx, tx, accountID, true)
		if err != nil {
			return err
		}
		open, dup, err := openOrdersAnd(ctx, tx, accountID, o.ClientOrderID)
		if err != nil {
			return err
		}
		if dup {
			return &apiError{http.StatusUnprocessableEntity, codeDuplicateClient, "client_order_id must be unique"}
		}
		if err := b.afford(ctx, tx, a, o, open, last); err != nil {
			return err
		}
		return insertOrder(ctx, tx, o)
	})
	if err != nil {
		return alpaca.OrderJSON{}, err
	}
	select {
	case b.kick <- struct{}{}:
	default: // a pass is due already
	}
	return orderJSON(*o), nil
}

// newOrder checks req and returns the open order it asks for, and the
// latest close of its asset.
func (b *Broker) newOrder(ctx context.Context, accountID uuid.UUID, req alpaca.OrderRequestJSON) (*order, decimal.Decimal, error) {
	symbol := marketdata.NormalizeSymbol(req.Symbol)
	switch {
	case symbol == "":
		return nil, decimal.Decimal{}, &tradekit.ParamError{Param: "symbol", Msg: "is required"}
	case req.Side != string(brokers.Buy) && req.Side != string(brokers.Sell):
		return nil, decimal.Decimal{}, &tradekit.ParamError{Param: "side", Msg: "must be buy or sell"}
	case req.Type != string(brokers.Market) && req.Type != string(brokers.Limit):
		return nil, decimal.Decimal{}, &tradekit.ParamError{Param: "type", Msg: "must be market or limit: the paper broker takes no other"}
	case req.TimeInForce != "day" && req.TimeInForce != "gtc":
		return nil, decimal.Decimal{}, &tradekit.ParamError{Param: "time_in_force", Msg: "must be day or gtc"}
	case !req.Qty.IsPositive() || !fits(req.Qty, qtyScale):
		return nil, decimal.Decimal{}, &tradekit.ParamError{Param: "qty", Msg: "must be positive, with at most 9 decimal places"}
	case req.Type == string(brokers.Limit) && req.LimitPrice == nil:
		return nil, decimal.Decimal{}, &tradekit.ParamError{Param: "limit_price", Msg: "is required for a limit order"}
	case req.Type == string(brokers.Market) && req.LimitPrice != nil:
		return nil, decimal.Decimal{}, &tradekit.ParamError{Param: "limit_price", Msg: "is not allowed on a market order"}
	case req.LimitPrice != nil && (!req.LimitPrice.IsPositive() || !fits(*req.LimitPrice, qtyScale)):
		return nil, decimal.Decimal{}, &tradekit.ParamError{Param: "limit_price", Msg: "must be positive, with at most 9 decimal places"}
	case len(req.ClientOrderID) > maxClientOrderID:
		return nil, decimal.Decimal{}, &tradekit.ParamError{Param: "client_order_id", Msg: fmt.Sprintf("must be at most %d characters", maxClientOrderID)}
	}
	a, err := b.md.AssetBySymbol(ctx, symbol)
	if errors.Is(err, tradekit.ErrNotFound) {
		return nil, decimal.Decimal{}, &tradekit.ParamError{Param: "symbol", Msg: fmt.Sprintf("%s is not traded here: no Tradekit asset has it", symbol)}
	}
	if err != nil {
		return nil, decimal.Decimal{}, fmt.Errorf("paper: %w", err)
	}
	last, err := b.closes.get(ctx, a.ID)
	if errors.Is(err, tradekit.ErrNotFound) {
		return nil, decimal.Decimal{}, &tradekit.ParamError{Param: "symbol", Msg: fmt.Sprintf("%s is not traded here: it has no stored price", symbol)}
	} else if err != nil {
		return nil, decimal.Decimal{}, err
	}
	now := b.clock()
	id := uuid.New()
	o := &order{
		ID: id, AccountID: accountID, ClientOrderID: req.ClientOrderID, AssetID: &a.ID, Symbol: symbol, AssetClass: assetClass(a),
		Side: req.Side, Type: req.Type, TimeInForce: req.TimeInForce, Status: statusNew, Qty: req.Qty, FilledQty: decimal.Zero,
		LimitPrice: req.LimitPrice, CreatedAt: now, UpdatedAt: now, SubmittedAt: now,
	}
	if o.ClientOrderID == "" {
		o.ClientOrderID = id.String()
	}
	return o, last.Close, nil
}

// afford checks that account a can pay for order o or hold what it sells,
// beside its open orders.
func (b *Broker) afford(ctx context.Context, db bun.IDB, a account, o *order, open []order, last decimal.Decimal) error {
	if o.Side == string(brokers.Sell) {
		p, _, err := positionOf(ctx, db, a.ID, o.Symbol)
		if err != nil {
			return err
		}
		available := p.Qty
		for _, x := range open {
			if x.Side == string(brokers.Sell) && x.Symbol == o.Symbol {
				available = available.Sub(x.Qty)
			}
		}
		if o.Qty.GreaterThan(available) {
			return refused("insufficient qty available for order (requested: %s, available: %s)", o.Qty, decimal.Max(available, decimal.Zero))
		}
		return nil
	}
	closes := map[uuid.UUID]decimal.Decimal{*o.AssetID: last} // o's, read just before
	// Read through db, the transaction: on SQLite a read through the pool
	// could wait for a connection that the writers queued behind this
	// transaction hold.
	md := marketdata.NewStore(db)
	cost := func(x *order) (decimal.Decimal, error) {
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
// does, at once. The error wraps [tradekit.ErrNotFound] for an order the
// account does not have, and is a 422 for one that is not open: a cancel
// racing a fill loses or wins as a whole.
func (b *Broker) Cancel(ctx context.Context, accountID, id uuid.UUID) error {
	o, err := orderByID(ctx, b.db, accountID, id)
	if err != nil {
		return err
	}
	now := b.clock()
	o.Status, o.CanceledAt, o.UpdatedAt = statusCanceled, &now, now
	ok, err := closeOrder(ctx, b.db, &o, "canceled_at")
	if err != nil {
		return err
	}
	if !ok {
		return &apiError{http.StatusUnprocessableEntity, codeInvalid, "order is not cancelable"}
	}
	return nil
}

// Run fills orders until ctx is done: it runs [Broker.Match] every
// Config.MatchInterval, and at once after each placement through this
// Broker. Any number of Brokers may run on one database.
func (b *Broker) Run(ctx context.Context) {
	t := time.NewTicker(b.matchEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-b.kick:
		}
		if _, err := b.Match(ctx); err != nil && ctx.Err() == nil {
			b.log.Warn("paper: matching orders failed", "error", err)
		}
	}
}

// Match fills the open orders that can fill at their asset's latest
// stored close (see Config.SlippageBps for the price), oldest first, and
// returns how many it filled. A market order always can; a limit buy
// when the close is at or below its limit, a limit sell when it is at or
// above. A fill the account can no longer afford, or a sell of more than
// it holds, rejects the order instead.
//
// Each fill runs in a transaction that locks the account and moves the
// order from open to filled only if it is still open, so that an order
// fills once, and its cash and position change once, however many
// Brokers run Match on the database at the same time, and a cancel that
// races it either wins or loses.
func (b *Broker) Match(ctx context.Context) (int, error) {
	open, err := openOrders(ctx, b.db, uuid.Nil, matchBatch)
	if err != nil || len(open) == 0 {
		return 0, err
	}
	closes := map[uuid.UUID]*decimal.Decimal{} // nil: no close
	filled := 0
	for i := range open {
		o := &open[i]
		if o.AssetID == nil {
			continue
		}
		c, ok := closes[*o.AssetID]
		if !ok {
			p, err := b.closes.get(ctx, *o.AssetID)
			switch {
			case err == nil:
				c = &p.Close
			case !errors.Is(err, tradekit.ErrNotFound):
				return filled, err
			}
			closes[*o.AssetID] = c
		}
		if c == nil {
			continue
		}
		price, ok := b.fillPrice(o.Side, *c, o.LimitPrice)
		if !ok {
			continue
		}
		done, err := b.fillOpen(ctx, o, price)
		if err != nil {
			return filled, err
		}
		if done {
			filled++
		}
	}
	return filled, nil
}

// fillOpen fills the open order o at price, or rejects it when the
// account cannot pay or deliver, and reports whether it filled it.
func (b *Broker) fillOpen(ctx context.Context, o *order, price decimal.Decimal) (bool, error) {
	filled := false
	err := b.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		a, err := accountByID(ctx, tx, o.AccountID, true)
		if err != nil {
			return err
		}
		p, _, err := positionOf(ctx, tx, o.AccountID, o.Symbol)
		if err != nil {
			return err
		}
		now := b.clock()
		cash, h, err := apply(a.Cash, holding{Qty: p.Qty, Avg: p.AvgEntryPrice}, o.Symbol, brokers.Side(o.Side), o.Qty, price, b.commission)
		if errors.Is(err, tradekit.ErrRejected) || err == nil && (!fits(cash, avgScale) || !fits(h.Avg, avgScale) || !fits(h.Qty, avgScale)) {
			o.Status, o.UpdatedAt = statusRejected, now
			_, err := closeOrder(ctx, tx, o)
			return err
		}
		if err != nil {
			return err
		}
		commission := b.commission
		o.Status, o.FilledQty, o.FilledAvgPrice, o.Commission, o.FilledAt, o.UpdatedAt = statusFilled, o.Qty, &price, &commission, &now, now
		if ok, err := closeOrder(ctx, tx, o, "filled_qty", "filled_avg_price", "commission", "filled_at"); err != nil || !ok {
			return err // filled or cancelled meanwhile: nothing else changes
		}
		if err := updateCash(ctx, tx, o.AccountID, cash); err != nil {
			return err
		}
		filled = true
		return savePosition(ctx, tx, position{AccountID: o.AccountID, Symbol: o.Symbol, Qty: h.Qty, AvgEntryPrice: h.Avg, UpdatedAt: now})
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
	dec := json.NewDecoder(io.LimitReader(r.Body, maxOrderBody))
	if err := dec.Decode(&req); err != nil {
		return &tradekit.ParamError{Param: "body", Msg: "must be an order as JSON: " + strings.TrimPrefix(err.Error(), "json: ")}
	}
	o, err := b.Place(r.Context(), a.ID, req)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, o)
}

// handleOrder answers GET /v2/orders/{id}.
func (b *Broker) handleOrder(w http.ResponseWriter, r *http.Request, a account) error {
	id, err := uuid.Parse(r.PathValue("id"))
	if err != nil {
		return fmt.Errorf("paper: %w", tradekit.ErrNotFound)
	}
	o, err := orderByID(r.Context(), b.db, a.ID, id)
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
	return writeJSON(w, http.StatusOK, orderJSON(o))
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
