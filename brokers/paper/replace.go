package paper

import (
	"context"
	"fmt"
	"net/http"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/brokers/alpaca"
)

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
