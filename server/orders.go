package server

import (
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bunrouter"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/brokers/connect"
)

// orderJSON is an order as the API shows it: the spec's fields, then
// those of the CONTRACT's trading additions.
type orderJSON struct {
	ID           string     `json:"id"`
	ConnectionID string     `json:"connectionId"`
	AssetID      string     `json:"assetId"`
	Symbol       string     `json:"symbol"`
	Side         string     `json:"side"`
	Type         string     `json:"type"`
	Quantity     number     `json:"quantity"`
	LimitPrice   *number    `json:"limitPrice"`
	Status       string     `json:"status"`
	CreatedAt    timestamp  `json:"createdAt"`
	FilledAt     *timestamp `json:"filledAt"`

	ClientOrderID  *string    `json:"clientOrderId"`
	StopLossPrice  *number    `json:"stopLossPrice"`
	FilledPrice    *number    `json:"filledPrice"`
	FilledQuantity *number    `json:"filledQuantity"`
	Commission     *number    `json:"commission"`
	RejectReason   *string    `json:"rejectReason"`
	CancelledAt    *timestamp `json:"cancelledAt"`
}

func newOrderJSON(o connect.Order) orderJSON {
	return orderJSON{
		ID: o.ID.String(), ConnectionID: o.ConnectionID.String(), AssetID: o.AssetID.String(), Symbol: o.Symbol,
		Side: string(o.Side), Type: string(o.Type), Quantity: number(o.Quantity), LimitPrice: optNumber(o.LimitPrice),
		Status: string(o.Status), CreatedAt: timestamp(o.CreatedAt), FilledAt: optTimestamp(o.FilledAt),
		ClientOrderID: o.ClientOrderID, StopLossPrice: optNumber(o.StopLossPrice), FilledPrice: optNumber(o.FilledPrice),
		FilledQuantity: optNumber(o.FilledQuantity), Commission: optNumber(o.Commission), RejectReason: nonEmpty(o.RejectReason),
		CancelledAt: optTimestamp(o.CancelledAt),
	}
}

// optNumber returns d as a number, nil for nil.
func optNumber(d *decimal.Decimal) *number {
	if d == nil {
		return nil
	}
	n := number(*d)
	return &n
}

// optTimestamp returns t as a timestamp, nil for nil.
func optTimestamp(t *time.Time) *timestamp {
	if t == nil {
		return nil
	}
	ts := timestamp(*t)
	return &ts
}

// ruleJSON is one guardrail's evaluation, in a preview and in the details
// of a rejection.
type ruleJSON struct {
	Rule    string  `json:"rule"`
	Limit   number  `json:"limit"`
	Actual  number  `json:"actual"`
	OK      *bool   `json:"ok,omitempty"` // in a preview
	Message *string `json:"message,omitempty"`
}

// orderPlaces is the most decimal places of a quantity or price, Alpaca's
// precision for fractional quantities.
const orderPlaces = 9

// orderCreateParams are the parameters of POST /api/v1/brokers/orders.
// Package brokers checks the order's own rules ([brokers.Order.Validate]);
// the bounds of amounts are the server's: below 10^15, which keeps every
// notional within the 20 integer digits of the NUMERIC(38, 18) columns,
// with at most orderPlaces places.
type orderCreateParams struct {
	ConnectionID  uuid.UUID         `query:"connectionId" validate:"required"`
	AssetID       uuid.UUID         `query:"assetId" validate:"required"`
	Side          brokers.Side      `query:"side" validate:"required"`
	Type          brokers.OrderType `query:"type" validate:"required"`
	Quantity      *decimal.Decimal  `query:"quantity" validate:"required,lt=1000000000000000"`
	LimitPrice    *decimal.Decimal  `query:"limitPrice" validate:"omitnil,lt=1000000000000000"`
	StopLossPrice *decimal.Decimal  `query:"stopLossPrice" validate:"omitnil,lt=1000000000000000"`
	ClientOrderID string            `query:"clientOrderId"`
	Preview       bool              `query:"preview"`
}

// order returns the order the parameters describe, without its symbol.
func (p *orderCreateParams) order() brokers.Order {
	return brokers.Order{Side: p.Side, Type: p.Type, Quantity: *p.Quantity, LimitPrice: p.LimitPrice, StopLossPrice: p.StopLossPrice}
}

// check checks the amounts' places and the order's own rules, with a
// stand-in symbol: the asset is looked up afterwards.
func (p *orderCreateParams) check() error {
	for _, a := range []struct {
		name string
		d    *decimal.Decimal
	}{{"quantity", p.Quantity}, {"limitPrice", p.LimitPrice}, {"stopLossPrice", p.StopLossPrice}} {
		if err := checkPlaces(a.name, a.d, orderPlaces); err != nil {
			return err
		}
	}
	o := p.order()
	o.Symbol = "stand-in"
	return o.Validate()
}

// orderInput returns the order of p; the connect service reads its asset
// beside its other reads, and refuses an unknown one as a bad assetId.
func orderInput(p *orderCreateParams) connect.OrderInput {
	return connect.OrderInput{ConnectionID: p.ConnectionID, AssetID: p.AssetID, Order: p.order(), ClientOrderID: p.ClientOrderID}
}

// handleOrderCreate serves POST /api/v1/brokers/orders: with preview=true
// it answers what the checks find and places nothing.
func (s *Server) handleOrderCreate(w http.ResponseWriter, req bunrouter.Request, p *orderCreateParams) error {
	in := orderInput(p)
	userID := principal(req.Context()).UserID
	if p.Preview {
		r, err := s.connect.PreviewOrder(req.Context(), userID, in)
		if err != nil {
			return err
		}
		return s.writeData(w, newPreviewJSON(in, r))
	}
	placed, err := s.connect.PlaceOrder(req.Context(), userID, in)
	if err != nil {
		return err
	}
	if placed.Replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	if placed.Order.Status == brokers.Rejected {
		return rejection(placed.Order)
	}
	return s.writeData(w, newOrderJSON(placed.Order))
}

// rejection returns the 422 ORDER_REJECTED of the rejected order o: the
// first broken rule with its limit and actual value, every broken rule,
// and the recorded order's id.
func rejection(o connect.Order) error {
	details := map[string]any{"rule": o.RejectRule, "orderId": o.ID.String()}
	vs, err := o.Violations()
	if err != nil {
		return err
	}
	if len(vs) > 0 {
		rules := make([]ruleJSON, len(vs))
		for i, v := range vs {
			msg := v.Message
			rules[i] = ruleJSON{Rule: v.Rule, Limit: number(v.Limit), Actual: number(v.Actual), Message: &msg}
		}
		details["limit"], details["actual"], details["rules"] = rules[0].Limit, rules[0].Actual, rules
		if vs[0].Rule == brokers.RuleHeldQuantity {
			// Named as what they are: what may be sold, what was asked.
			details["held"], details["requested"] = rules[0].Limit, rules[0].Actual
		}
	} else {
		details["reason"] = o.RejectReason
	}
	return &tradekit.Error{Kind: tradekit.ErrRejected, Details: details,
		Msg: fmt.Sprintf("order rejected by %s: %s", o.RejectRule, o.RejectReason)}
}

// previewJSON is the answer of a preview: what placing the order would do.
type previewJSON struct {
	Preview   bool       `json:"preview"`  // always true
	Accepted  bool       `json:"accepted"` // whether every guardrail holds
	Symbol    string     `json:"symbol"`
	Side      string     `json:"side"`
	Type      string     `json:"type"`
	Quantity  number     `json:"quantity"`
	Price     number     `json:"price"`             // the execution price checked: the limit, else the latest close
	Notional  number     `json:"estimatedNotional"` // quantity × price
	Position  number     `json:"positionAfter"`     // the signed quantity held after the order
	PosPct    number     `json:"positionPctAfter"`  // its value in percent of equity
	RiskPct   number     `json:"portfolioRiskPctAfter"`
	Trades    int        `json:"tradesToday"` // orders accepted today (UTC), this one included
	Rules     []ruleJSON `json:"rules"`
	Violation *string    `json:"rejectReason"` // the first broken rule's message, null when accepted
}

func newPreviewJSON(in connect.OrderInput, r connect.Preview) previewJSON {
	out := previewJSON{Preview: true, Accepted: r.OK(), Symbol: r.Asset.Symbol, Side: string(in.Order.Side),
		Type: string(in.Order.Type), Quantity: number(in.Order.Quantity), Price: number(r.Price), Notional: number(r.Notional),
		Position: number(r.Position), PosPct: number(r.PositionPct), RiskPct: number(r.RiskPct), Trades: r.Trades,
		Rules: make([]ruleJSON, len(r.Rules))}
	for i, rc := range r.Rules {
		ok := rc.OK
		out.Rules[i] = ruleJSON{Rule: rc.Rule, Limit: number(rc.Limit), Actual: number(rc.Actual), OK: &ok, Message: nonEmpty(rc.Message)}
	}
	if len(r.Violations) > 0 {
		out.Violation = &r.Violations[0].Message
	}
	return out
}

// listJSON is the envelope of a paginated list.
type listJSON struct {
	Data any      `json:"data"`
	Meta metaJSON `json:"meta"`
}

// metaJSON describes a page of a list.
type metaJSON struct {
	Total int `json:"total"` // items in the whole list
	Page  int `json:"page"`  // from 1
	Limit int `json:"limit"` // items per page
}

// orderListParams are the parameters of GET /api/v1/brokers/orders.
type orderListParams struct {
	Status brokers.OrderStatus `query:"status" validate:"omitempty,oneof=pending filled cancelled rejected"`
	Side   brokers.Side        `query:"side" validate:"omitempty,oneof=buy sell"`
	pageParams
}

// handleOrderList serves GET /api/v1/brokers/orders: the key owner's
// orders, newest first, a page at a time.
func (s *Server) handleOrderList(w http.ResponseWriter, req bunrouter.Request, p *orderListParams) error {
	f := connect.OrderFilter{Status: p.Status, Side: p.Side, Page: p.Page, Limit: p.Limit}
	list, total, err := s.trading.Orders(req.Context(), principal(req.Context()).UserID, f)
	if err != nil {
		return err
	}
	out := make([]orderJSON, len(list))
	for i, o := range list {
		out[i] = newOrderJSON(o)
	}
	s.writeJSON(w, http.StatusOK, listJSON{Data: out, Meta: metaJSON{Total: total, Page: f.Page, Limit: f.Limit}})
	return nil
}

// handleOrderDelete serves DELETE /api/v1/brokers/orders/:id.
func (s *Server) handleOrderDelete(w http.ResponseWriter, req bunrouter.Request, p *idParams) error {
	o, err := s.connect.CancelOrder(req.Context(), principal(req.Context()).UserID, p.ID)
	if err != nil {
		return err
	}
	return s.writeData(w, map[string]string{"id": o.ID.String(), "status": string(o.Status)})
}

// handleOrderGet serves GET /api/v1/brokers/orders/:id (beyond the spec):
// one of the key owner's orders.
func (s *Server) handleOrderGet(w http.ResponseWriter, req bunrouter.Request, p *idParams) error {
	o, err := s.trading.Order(req.Context(), principal(req.Context()).UserID, p.ID)
	if err != nil {
		return err
	}
	return s.writeData(w, newOrderJSON(o))
}
