package paper

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/internal/database"
)

// matchBatch is the most open orders one pass of [Broker.Match] reads
// at a time; a pass reads them all, a batch after another. (A variable
// for the tests.)
var matchBatch = 500

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
