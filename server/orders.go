package server

import (
	"fmt"
	"net/http"
	"slices"
	"time"

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

// maxOrderAmount bounds quantities and prices: 10^15 keeps every notional
// within the 20 integer digits of the NUMERIC(38, 18) columns.
var maxOrderAmount = decimal.New(1, 15)

// orderPlaces is the most decimal places of a quantity or price, Alpaca's
// precision for fractional quantities.
const orderPlaces = 9

// queryAmount returns the query parameter name as a positive decimal of at
// most orderPlaces places below maxOrderAmount, nil when it is absent.
func queryAmount(req bunrouter.Request, name string) (*decimal.Decimal, error) {
	s := req.URL.Query().Get(name)
	if s == "" {
		return nil, nil
	}
	d, err := decimal.NewFromString(s)
	switch {
	case err != nil:
		return nil, invalidParam(name, "must be a decimal number such as 10 or 2.5, got %s", tradekit.Quote(s))
	case !d.IsPositive():
		return nil, invalidParam(name, "must be positive, got %s", tradekit.Quote(s))
	case !d.Equal(d.Truncate(orderPlaces)):
		return nil, invalidParam(name, "must have at most %d decimal places, got %s", orderPlaces, tradekit.Quote(s))
	case !d.LessThan(maxOrderAmount):
		return nil, invalidParam(name, "must be below %s, got %s", maxOrderAmount, tradekit.Quote(s))
	}
	return &d, nil
}

// queryEnum returns the query parameter name, one of values, or "" when
// it is absent and not required.
func queryEnum[T ~string](req bunrouter.Request, name string, required bool, values ...T) (T, error) {
	s := T(req.URL.Query().Get(name))
	if s == "" && !required {
		return "", nil
	}
	if !slices.Contains(values, s) {
		return "", invalidParam(name, "must be one of %v, got %s", values, tradekit.Quote(string(s)))
	}
	return s, nil
}

// parseOrder reads the parameters of POST /api/v1/brokers/orders, each
// checked on its own, in the order of the spec; the order's own rules
// (limitPrice with the type, the stop against the price) are checked by
// package brokers.
func (s *Server) parseOrder(req bunrouter.Request) (connect.OrderInput, error) {
	var in connect.OrderInput
	var err error
	if in.ConnectionID, err = queryUUID(req, "connectionId"); err != nil {
		return in, err
	}
	if in.AssetID, err = queryUUID(req, "assetId"); err != nil {
		return in, err
	}
	o := &in.Order
	if o.Side, err = queryEnum(req, "side", true, brokers.Buy, brokers.Sell); err != nil {
		return in, err
	}
	if o.Type, err = queryEnum(req, "type", true, brokers.Market, brokers.Limit); err != nil {
		return in, err
	}
	q, err := queryAmount(req, "quantity")
	if err != nil {
		return in, err
	}
	if q == nil {
		return in, invalidParam("quantity", "is required")
	}
	o.Quantity = *q
	if o.LimitPrice, err = queryAmount(req, "limitPrice"); err != nil {
		return in, err
	}
	if o.StopLossPrice, err = queryAmount(req, "stopLossPrice"); err != nil {
		return in, err
	}
	in.ClientOrderID = req.URL.Query().Get("clientOrderId")
	return in, nil
}

// handleOrderCreate serves POST /api/v1/brokers/orders: with preview=true
// it answers what the checks find and places nothing.
func (s *Server) handleOrderCreate(w http.ResponseWriter, req bunrouter.Request) error {
	preview, err := queryBool(req, "preview", false)
	if err != nil {
		return err
	}
	in, err := s.parseOrder(req)
	if err != nil {
		return err
	}
	userID := principal(req.Context()).UserID
	if preview {
		r, err := s.connect.PreviewOrder(req.Context(), userID, in)
		if err != nil {
			return err
		}
		return s.writeData(w, newPreviewJSON(in, r))
	}
	p, err := s.connect.PlaceOrder(req.Context(), userID, in)
	if err != nil {
		return err
	}
	if p.Replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	if p.Order.Status == brokers.Rejected {
		return rejection(p.Order)
	}
	return s.writeData(w, newOrderJSON(p.Order))
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

// The page size of the orders list (spec 8).
const (
	defaultOrderPage = 20
	maxOrderPage     = 100
)

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

// handleOrderList serves GET /api/v1/brokers/orders: the key owner's
// orders, newest first, a page at a time. limit above 100 is a 400, not
// clamped, so that a client never silently gets fewer than it asked for.
func (s *Server) handleOrderList(w http.ResponseWriter, req bunrouter.Request) error {
	var f connect.OrderFilter
	var err error
	if f.Status, err = queryEnum(req, "status", false, brokers.Pending, brokers.Filled, brokers.Cancelled, brokers.Rejected); err != nil {
		return err
	}
	if f.Side, err = queryEnum(req, "side", false, brokers.Buy, brokers.Sell); err != nil {
		return err
	}
	if f.Page, err = queryInt(req, "page", 1, 1, 1_000_000); err != nil {
		return err
	}
	if f.Limit, err = queryInt(req, "limit", defaultOrderPage, 1, maxOrderPage); err != nil {
		return err
	}
	list, total, err := connect.NewStore(s.db).Orders(req.Context(), principal(req.Context()).UserID, f)
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
func (s *Server) handleOrderDelete(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathUUID(req, "id")
	if err != nil {
		return err
	}
	o, err := s.connect.CancelOrder(req.Context(), principal(req.Context()).UserID, id)
	if err != nil {
		return err
	}
	return s.writeData(w, map[string]string{"id": o.ID.String(), "status": string(o.Status)})
}

// handleOrderGet serves GET /api/v1/brokers/orders/:id (beyond the spec):
// one of the key owner's orders.
func (s *Server) handleOrderGet(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathUUID(req, "id")
	if err != nil {
		return err
	}
	o, err := connect.NewStore(s.db).Order(req.Context(), principal(req.Context()).UserID, id)
	if err != nil {
		return err
	}
	return s.writeData(w, newOrderJSON(o))
}
