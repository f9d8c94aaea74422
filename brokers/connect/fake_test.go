package connect

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers"
)

// fakeBroker is a brokers.Trader holding one account in memory: cash,
// positions and orders, which fill only when a test says so (fill), or
// on placement (autoFill) or on their first read (fillOnRead) for market
// orders, at the symbol's mark. Before and After inject failures. It is
// safe for concurrent use.
type fakeBroker struct {
	// Before, when set, runs at the start of every call with the
	// method's name; an error it returns is the call's answer, and the
	// call does nothing else. It runs without the broker's lock held.
	Before func(method string) error
	// After, when set, runs once a call has done its work; an error it
	// returns replaces the answer, as an answer lost on the way back.
	After func(method string) error

	now func() time.Time

	mu         sync.Mutex
	acct       brokers.Account
	positions  map[string]*brokers.Position
	marks      map[string]decimal.Decimal // the price market orders fill at
	orders     map[string]*fakeOrder      // by the broker's id
	byClient   map[string]string          // the broker's id by client order id
	external   []brokers.Fill             // fills of orders placed elsewhere than Tradekit
	history    []brokers.EquityPoint
	autoFill   bool // market orders fill when placed
	fillOnRead bool // market orders fill when first read with Order
	asyncStop  bool // CancelOrder leaves the order pending_cancel
	// stopHeld is, by symbol, the quantity the stop-loss legs of filled
	// buys with a StopLossPrice hold: a sell of more than the position
	// less it is refused, until ReleaseStopLosses frees it.
	stopHeld   map[string]decimal.Decimal
	seq        int
	calls      map[string]int
	requests   []brokers.OrderRequest // every PlaceOrder that reached the broker's book
	fillsAfter []time.Time            // the after argument of every Fills call
}

var _ brokers.Trader = (*fakeBroker)(nil)

// fakeOrder is an order as the fake broker holds it.
type fakeOrder struct {
	req   brokers.OrderRequest
	state brokers.OrderState
}

// newFakeBroker returns a broker holding an account of 100,000 USD in
// cash and nothing else.
func newFakeBroker(now func() time.Time) *fakeBroker {
	return &fakeBroker{
		now:       now,
		acct:      brokers.Account{ID: "acct-1", Number: "PA0001", Status: "ACTIVE", Currency: "USD", Cash: dec("100000"), Equity: dec("100000")},
		positions: map[string]*brokers.Position{},
		marks:     map[string]decimal.Decimal{},
		orders:    map[string]*fakeOrder{},
		byClient:  map[string]string{},
		calls:     map[string]int{},
		stopHeld:  map[string]decimal.Decimal{},
	}
}

// call counts a call of method and runs Before.
func (b *fakeBroker) call(method string) error {
	b.mu.Lock()
	b.calls[method]++
	before := b.Before
	b.mu.Unlock()
	if before != nil {
		return before(method)
	}
	return nil
}

// done runs After.
func (b *fakeBroker) done(method string) error {
	b.mu.Lock()
	after := b.After
	b.mu.Unlock()
	if after != nil {
		return after(method)
	}
	return nil
}

// count returns how many times method was called.
func (b *fakeBroker) count(method string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.calls[method]
}

// set runs f under the broker's lock, to change its fields.
func (b *fakeBroker) set(f func(b *fakeBroker)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	f(b)
}

// equityLocked returns the cash plus the positions at their marks.
func (b *fakeBroker) equityLocked() decimal.Decimal {
	e := b.acct.Cash
	for sym, p := range b.positions {
		e = e.Add(p.Quantity.Mul(b.marks[sym]))
	}
	return e
}

func (b *fakeBroker) Account(context.Context) (brokers.Account, error) {
	if err := b.call("Account"); err != nil {
		return brokers.Account{}, err
	}
	b.mu.Lock()
	a := b.acct
	a.Equity = b.equityLocked()
	b.mu.Unlock()
	return a, b.done("Account")
}

func (b *fakeBroker) Positions(context.Context) ([]brokers.Position, error) {
	if err := b.call("Positions"); err != nil {
		return nil, err
	}
	b.mu.Lock()
	out := make([]brokers.Position, 0, len(b.positions))
	for sym, p := range b.positions {
		x := *p
		x.MarketValue = p.Quantity.Mul(b.marks[sym])
		x.CostBasis = p.Quantity.Mul(p.AvgEntryPrice)
		out = append(out, x)
	}
	b.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Symbol < out[j].Symbol })
	return out, b.done("Positions")
}

// Fills returns the closed orders with fills, as Alpaca's dialect does
// (one fill per order, at its average price), and the external fills,
// after the given time, oldest first.
func (b *fakeBroker) Fills(_ context.Context, after time.Time) ([]brokers.Fill, error) {
	if err := b.call("Fills"); err != nil {
		return nil, err
	}
	b.mu.Lock()
	b.fillsAfter = append(b.fillsAfter, after)
	var out []brokers.Fill
	for _, o := range b.orders {
		st := o.state
		if !st.Status.Final() || !st.FilledQuantity.IsPositive() || st.FilledPrice == nil {
			continue
		}
		at := st.UpdatedAt
		if st.FilledAt != nil {
			at = *st.FilledAt
		}
		out = append(out, brokers.Fill{ID: st.ID, Symbol: o.req.Symbol, Side: o.req.Side, Quantity: st.FilledQuantity,
			Price: *st.FilledPrice, Time: at})
	}
	for _, f := range b.external {
		if f.Time.After(after) {
			out = append(out, f)
		}
	}
	b.mu.Unlock()
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out, b.done("Fills")
}

func (b *fakeBroker) History(context.Context) ([]brokers.EquityPoint, error) {
	if err := b.call("History"); err != nil {
		return nil, err
	}
	b.mu.Lock()
	out := append([]brokers.EquityPoint(nil), b.history...)
	b.mu.Unlock()
	return out, b.done("History")
}

// PlaceOrder books the order, once per client order id.
func (b *fakeBroker) PlaceOrder(_ context.Context, r brokers.OrderRequest) (brokers.OrderState, error) {
	if err := b.call("PlaceOrder"); err != nil {
		return brokers.OrderState{}, err
	}
	b.mu.Lock()
	id, ok := b.byClient[r.ClientOrderID]
	if p := b.positions[r.Symbol]; !ok && r.Side == brokers.Sell && p != nil && r.Quantity.GreaterThan(p.Quantity.Sub(b.stopHeld[r.Symbol])) {
		b.mu.Unlock()
		return brokers.OrderState{}, &brokers.RefusedError{Reason: "insufficient qty available for order", Code: 40310000}
	}
	if !ok {
		b.seq++
		id = fmt.Sprintf("b-%d", b.seq)
		now := b.now().UTC()
		b.orders[id] = &fakeOrder{req: r, state: brokers.OrderState{ID: id, ClientOrderID: r.ClientOrderID,
			Status: brokers.Pending, BrokerStatus: "new", SubmittedAt: now, UpdatedAt: now}}
		b.byClient[r.ClientOrderID] = id
		b.requests = append(b.requests, r)
		if b.autoFill && r.Type == brokers.Market {
			b.fillLocked(id, r.Quantity, b.marks[r.Symbol], decimal.Zero)
		}
	}
	st := b.orders[id].state
	b.mu.Unlock()
	return st, b.done("PlaceOrder")
}

func (b *fakeBroker) Order(_ context.Context, id string) (brokers.OrderState, error) {
	if err := b.call("Order"); err != nil {
		return brokers.OrderState{}, err
	}
	b.mu.Lock()
	o, ok := b.orders[id]
	if ok && b.fillOnRead && o.req.Type == brokers.Market && o.state.Status == brokers.Pending {
		b.fillLocked(id, o.req.Quantity.Sub(o.state.FilledQuantity), b.marks[o.req.Symbol], decimal.Zero)
	}
	var st brokers.OrderState
	if ok {
		st = o.state
	}
	b.mu.Unlock()
	if !ok {
		return brokers.OrderState{}, fmt.Errorf("fake: order %s: %w", id, tradekit.ErrNotFound)
	}
	return st, b.done("Order")
}

// Orders returns the orders submitted after the given time, oldest
// first; a market order fills on this read as on Order's with fillOnRead.
func (b *fakeBroker) Orders(_ context.Context, after time.Time) ([]brokers.OrderState, error) {
	if err := b.call("Orders"); err != nil {
		return nil, err
	}
	b.mu.Lock()
	var ids []string
	for id, o := range b.orders {
		if o.state.SubmittedAt.After(after) {
			ids = append(ids, id)
		}
	}
	var out []brokers.OrderState
	for _, id := range ids {
		o := b.orders[id]
		if b.fillOnRead && o.req.Type == brokers.Market && o.state.Status == brokers.Pending {
			b.fillLocked(id, o.req.Quantity.Sub(o.state.FilledQuantity), b.marks[o.req.Symbol], decimal.Zero)
		}
		out = append(out, o.state)
	}
	b.mu.Unlock()
	sort.SliceStable(out, func(i, j int) bool { return out[i].SubmittedAt.Before(out[j].SubmittedAt) })
	return out, b.done("Orders")
}

func (b *fakeBroker) OrderByClientID(_ context.Context, clientOrderID string) (brokers.OrderState, error) {
	if err := b.call("OrderByClientID"); err != nil {
		return brokers.OrderState{}, err
	}
	b.mu.Lock()
	id, ok := b.byClient[clientOrderID]
	var st brokers.OrderState
	if ok {
		st = b.orders[id].state
	}
	b.mu.Unlock()
	if !ok {
		return brokers.OrderState{}, fmt.Errorf("fake: client order %s: %w", clientOrderID, tradekit.ErrNotFound)
	}
	return st, b.done("OrderByClientID")
}

func (b *fakeBroker) CancelOrder(_ context.Context, id string) error {
	if err := b.call("CancelOrder"); err != nil {
		return err
	}
	b.mu.Lock()
	o, ok := b.orders[id]
	var err error
	switch {
	case !ok:
		err = fmt.Errorf("fake: order %s: %w", id, tradekit.ErrNotFound)
	case o.state.Status.Final():
		err = fmt.Errorf("fake: order %s is %s: %w", id, o.state.Status, tradekit.ErrConflict)
	case b.asyncStop:
		o.state.BrokerStatus = "pending_cancel"
	default:
		now := b.now().UTC()
		o.state.Status, o.state.BrokerStatus, o.state.CancelledAt, o.state.UpdatedAt = brokers.Cancelled, "canceled", &now, now
	}
	b.mu.Unlock()
	if err != nil {
		return err
	}
	return b.done("CancelOrder")
}

// ReleaseStopLosses frees the stop-loss legs of symbol, all at once, when
// a sell of qty needs them and the position has qty, and reports one
// cancellation.
func (b *fakeBroker) ReleaseStopLosses(_ context.Context, symbol string, qty decimal.Decimal) (int, error) {
	if err := b.call("ReleaseStopLosses"); err != nil {
		return 0, err
	}
	b.mu.Lock()
	n := 0
	if p := b.positions[symbol]; p != nil && b.stopHeld[symbol].IsPositive() && !qty.GreaterThan(p.Quantity) &&
		qty.GreaterThan(p.Quantity.Sub(b.stopHeld[symbol])) {
		delete(b.stopHeld, symbol)
		n = 1
	}
	b.mu.Unlock()
	return n, b.done("ReleaseStopLosses")
}

// fill fills qty more of the broker's order id at price, charging
// commission, as the broker's matcher would.
func (b *fakeBroker) fill(id string, qty, price, commission decimal.Decimal) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.fillLocked(id, qty, price, commission)
}

func (b *fakeBroker) fillLocked(id string, qty, price, commission decimal.Decimal) {
	o := b.orders[id]
	if o == nil {
		panic("fake: fill of unknown order " + id)
	}
	st := &o.state
	paid := decimal.Zero
	if st.FilledPrice != nil {
		paid = st.FilledQuantity.Mul(*st.FilledPrice)
	}
	st.FilledQuantity = st.FilledQuantity.Add(qty)
	avg := paid.Add(qty.Mul(price)).DivRound(st.FilledQuantity, 10)
	st.FilledPrice = &avg
	st.Commission = st.Commission.Add(commission)
	now := b.now().UTC()
	st.UpdatedAt = now
	st.BrokerStatus = "partially_filled"
	if st.FilledQuantity.Equal(o.req.Quantity) {
		st.Status, st.BrokerStatus, st.FilledAt = brokers.Filled, "filled", &now
	}
	sign := sideSign(o.req.Side)
	b.acct.Cash = b.acct.Cash.Sub(qty.Mul(price).Mul(sign)).Sub(commission)
	p := b.positions[o.req.Symbol]
	if p == nil {
		p = &brokers.Position{Symbol: o.req.Symbol}
		b.positions[o.req.Symbol] = p
	}
	after := p.Quantity.Add(qty.Mul(sign))
	if o.req.Side == brokers.Buy {
		p.AvgEntryPrice = p.Quantity.Mul(p.AvgEntryPrice).Add(qty.Mul(price)).DivRound(after, 10)
	}
	p.Quantity = after
	if o.req.Side == brokers.Buy && o.req.StopLossPrice != nil {
		b.stopHeld[o.req.Symbol] = b.stopHeld[o.req.Symbol].Add(qty)
	}
	if after.IsZero() {
		delete(b.positions, o.req.Symbol)
	}
	b.marks[o.req.Symbol] = price
}

// finish ends the broker's order id with status (cancelled, rejected)
// and the broker's word for it.
func (b *fakeBroker) finish(id string, status brokers.OrderStatus, word string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now().UTC()
	st := &b.orders[id].state
	st.Status, st.BrokerStatus, st.UpdatedAt = status, word, now
	if status == brokers.Cancelled {
		st.CancelledAt = &now
	}
}

// state returns the broker's state of its order id.
func (b *fakeBroker) state(id string) brokers.OrderState {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.orders[id].state
}

// orderRequests returns the orders that reached the broker's book.
func (b *fakeBroker) orderRequests() []brokers.OrderRequest {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]brokers.OrderRequest(nil), b.requests...)
}

// requestCount returns how many orders reached the broker's book.
func (b *fakeBroker) requestCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.requests)
}

// roundTripFunc is an http.RoundTripper answering every request itself:
// brokers' OAuth endpoints without a server.
type roundTripFunc func(r *http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// dec returns the decimal s.
func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// decp returns a pointer to the decimal s.
func decp(s string) *decimal.Decimal {
	d := dec(s)
	return &d
}
