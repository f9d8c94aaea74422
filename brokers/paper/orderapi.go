package paper

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/google/uuid"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers/alpaca"
)

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
