package paper

import (
	"context"
	"errors"
	"net/http"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/brokers/alpaca"
)

// hundred is 100, the whole of a percentage.
var hundred = decimal.New(100, 0)

// ClosePosition closes the account's position in symbol, as DELETE
// /v2/positions/{symbol} does: it places a market sell, day, of qty, or
// of percentage (0 to 100) of the position, truncated to 9 decimal
// places, or of the whole position when both are nil, and returns the
// order, open until the matching engine fills it. The order is checked
// as [Broker.Place] checks any, so the open sells of the position count
// against it. The error is a 404 when the account holds no symbol, and a
// 422 for a qty and a percentage together, or out of range.
func (b *Broker) ClosePosition(ctx context.Context, accountID uuid.UUID, symbol string, qty, percentage *decimal.Decimal) (alpaca.OrderJSON, error) {
	p, ok, err := positionOf(ctx, b.db, accountID, symbol)
	if err != nil {
		return alpaca.OrderJSON{}, err
	}
	if !ok {
		return alpaca.OrderJSON{}, errNoPosition
	}
	q := p.Qty
	switch {
	case qty != nil && percentage != nil:
		return alpaca.OrderJSON{}, &tradekit.ParamError{Param: "qty", Msg: "qty and percentage cannot both be set"}
	case qty != nil:
		if !qty.IsPositive() || !fits(*qty, qtyScale) || qty.GreaterThan(p.Qty) {
			return alpaca.OrderJSON{}, &tradekit.ParamError{Param: "qty", Msg: "must be positive, with at most 9 decimal places, and at most the position"}
		}
		q = *qty
	case percentage != nil:
		if !percentage.IsPositive() || percentage.GreaterThan(hundred) {
			return alpaca.OrderJSON{}, &tradekit.ParamError{Param: "percentage", Msg: "must be more than 0 and at most 100"}
		}
		q = p.Qty.Mul(*percentage).Shift(-2).Truncate(qtyScale)
		if !q.IsPositive() {
			return alpaca.OrderJSON{}, &tradekit.ParamError{Param: "percentage", Msg: "is less than the smallest quantity, 0.000000001"}
		}
	}
	return b.Place(ctx, accountID, alpaca.OrderRequestJSON{Symbol: symbol, Qty: &q, Side: string(brokers.Sell), Type: "market", TimeInForce: "day"})
}

// optDecimal parses an optional decimal query parameter.
func optDecimal(r *http.Request, param string) (*decimal.Decimal, error) {
	s := r.URL.Query().Get(param)
	if s == "" {
		return nil, nil
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return nil, &tradekit.ParamError{Param: param, Msg: "must be a number"}
	}
	return &d, nil
}

// handleClose answers DELETE /v2/positions/{symbol} (a symbol or an
// asset id) with the closing order; qty or percentage close part of it.
func (b *Broker) handleClose(w http.ResponseWriter, r *http.Request, a account) error {
	symbol, err := b.positionSymbol(r.Context(), r.PathValue("symbol"))
	if err != nil {
		return err
	}
	qty, err := optDecimal(r, "qty")
	if err != nil {
		return err
	}
	pct, err := optDecimal(r, "percentage")
	if err != nil {
		return err
	}
	o, err := b.ClosePosition(r.Context(), a.ID, symbol, qty, pct)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, o)
}

// handleCloseAll answers DELETE /v2/positions: it cancels the account's
// open orders first when cancel_orders is true, then closes each position
// with a market sell, and answers 207 with one item per position,
// Alpaca's {"symbol", "status", "body"}: 200 and the order, or the error
// that refused it (a position whose open sells cover it already).
func (b *Broker) handleCloseAll(w http.ResponseWriter, r *http.Request, a account) error {
	ctx := r.Context()
	switch r.URL.Query().Get("cancel_orders") {
	case "", "false":
	case "true":
		if _, err := b.cancelAll(ctx, a.ID); err != nil {
			return err
		}
	default:
		return &tradekit.ParamError{Param: "cancel_orders", Msg: "must be true or false"}
	}
	ps, err := positions(ctx, b.db, a.ID)
	if err != nil {
		return err
	}
	out := make([]alpaca.MultiStatusJSON, 0, len(ps))
	for _, p := range ps {
		o, err := b.ClosePosition(ctx, a.ID, p.Symbol, nil, nil)
		if err == nil {
			out = append(out, alpaca.MultiStatusJSON{Symbol: p.Symbol, Status: http.StatusOK, Body: o})
			continue
		}
		status, body, ok := apiErrorOf(err)
		if !ok {
			return err
		}
		out = append(out, alpaca.MultiStatusJSON{Symbol: p.Symbol, Status: status, Body: body})
	}
	return writeJSON(w, http.StatusMultiStatus, out)
}

// apiErrorOf returns the status and body that the API answers for err,
// and false for an error that answers 500.
func apiErrorOf(err error) (int, alpaca.ErrorJSON, bool) {
	var ae *apiError
	switch {
	case errors.As(err, &ae):
		return ae.status, alpaca.ErrorJSON{Code: ae.code, Message: ae.msg}, true
	case tradekit.Param(err) != "":
		return http.StatusUnprocessableEntity, alpaca.ErrorJSON{Code: codeInvalid, Message: tradekit.Message(err)}, true
	}
	return 0, alpaca.ErrorJSON{}, false
}
