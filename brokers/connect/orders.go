package connect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/indicators"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/marketdata/calendar"
)

// MaxClientOrderID is the longest client order id, in characters.
const MaxClientOrderID = 64

// The order tracker's timing: a pending order is read from its broker
// at intervals of an eighth of its age, at least minCheck and at most
// maxCheck apart, so a market order is seen filled within a fraction of a
// second and a resting limit order costs a request every half minute. An
// order the broker has not acknowledged sendDeadline after it was
// accepted is rejected.
const (
	minCheck     = 200 * time.Millisecond
	maxCheck     = 30 * time.Second
	sendDeadline = time.Minute
	atrPeriod    = 14
	atrHistory   = 120 // calendar days of prices read for an ATR(14)
	atrPlaces    = 8   // decimal places of an ATR as a guardrail reads it
)

// checkAfter returns how long after now to read an order of the given
// age from its broker again.
func checkAfter(age time.Duration) time.Duration {
	return min(max(age/8, minCheck), maxCheck)
}

// OrderInput is an order as a user asks for it.
type OrderInput struct {
	ConnectionID uuid.UUID
	Asset        marketdata.Asset
	// Order is the order; its Symbol and AssetType are taken from Asset.
	Order brokers.Order
	// ClientOrderID, when not empty, is the user's idempotency key: at
	// most [MaxClientOrderID] characters, unique among the user's orders.
	ClientOrderID string
}

// Placement is what [Service.PlaceOrder] did with an order.
type Placement struct {
	// Order is the order recorded: pending (sent to the broker, or to be
	// sent), filled, cancelled, or rejected with RejectRule and
	// RejectReason.
	Order Order
	// Replayed reports that Order is an earlier order with the same
	// client order id and parameters, returned again.
	Replayed bool
	// Check is every guardrail's evaluation; zero when Replayed.
	Check brokers.Result
}

// PlaceOrder checks in's order against the user's guardrails and the
// account behind the connection, records it, and sends it to the broker
// when it passes.
//
// With a client order id that the user already used, PlaceOrder places
// nothing: it returns that order as it is now, Replayed, when the
// parameters are the same, and an error wrapping [tradekit.ErrConflict]
// when they differ.
//
// The guardrail check, the count of the day's orders and the recording
// run under a lock per user that every instance takes (a PostgreSQL
// advisory transaction lock; SQLite serialises writers already), so
// concurrent orders of one user are checked one after the other and
// maxDailyTrades is exact. An order that breaks a guardrail is recorded
// rejected, with every broken rule, and never sent. An order the broker
// refuses is recorded rejected with the broker's reason (RejectRule
// [RuleBroker]). An order the broker cannot be reached for stays pending:
// the order tracker ([Service.TrackOrders]) sends it again, and rejects
// it when the broker has not acknowledged it within a minute.
//
// PlaceOrder returns an error, and records nothing, for a malformed
// order (wrapping [tradekit.ErrInvalid]), a connection that is not the
// user's ([tradekit.ErrNotFound]) or not active ([tradekit.ErrConflict]),
// and a broker that cannot be read ([tradekit.ErrUnavailable] or
// [tradekit.ErrUnauthorized]).
func (s *Service) PlaceOrder(ctx context.Context, userID uuid.UUID, in OrderInput) (Placement, error) {
	o, hash, err := prepare(in)
	if err != nil {
		return Placement{}, err
	}
	if in.ClientOrderID != "" {
		prev, ok, err := NewStore(s.db).orderByClientID(ctx, userID, in.ClientOrderID)
		if err != nil || ok {
			return replay(prev, hash, err)
		}
	}
	conn, tr, err := s.trader(ctx, userID, in.ConnectionID)
	if err != nil {
		return Placement{}, err
	}
	cc, err := s.checkContext(ctx, conn, tr, in.Asset, o)
	if err != nil {
		return Placement{}, err
	}

	// One placement per user at a time in this process, then in the
	// database: the waiters queue here without holding a connection.
	mu := &s.placing[userID[15]%uint8(len(s.placing))]
	mu.Lock()
	defer mu.Unlock()
	now := s.now()
	var p Placement
	err = s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := lockUser(ctx, tx, userID); err != nil {
			return err
		}
		st := NewStore(tx)
		if in.ClientOrderID != "" {
			prev, ok, err := st.orderByClientID(ctx, userID, in.ClientOrderID)
			if err != nil || ok {
				p, err = replay(prev, hash, err)
				return err
			}
		}
		g, _, err := st.Guardrails(ctx, userID)
		if err != nil {
			return err
		}
		if cc.TradesToday, err = st.acceptedSince(ctx, userID, brokers.UTCDay(now)); err != nil {
			return err
		}
		if p.Check, err = brokers.Check(o, g, cc); err != nil {
			return err
		}
		p.Order = newOrder(userID, in, o, hash, now)
		if v := p.Check.Violations; len(v) > 0 {
			rejection, err := json.Marshal(v)
			if err != nil {
				return fmt.Errorf("connect: encode the rejection: %w", err)
			}
			p.Order.Status, p.Order.RejectRule, p.Order.RejectReason = brokers.Rejected, v[0].Rule, v[0].Message
			p.Order.Rejection, p.Order.NextCheckAt = string(rejection), nil
		}
		if _, err := tx.NewInsert().Model(&p.Order).Exec(ctx); err != nil {
			return fmt.Errorf("connect: record the order: %w", err)
		}
		return nil
	})
	if err != nil || p.Replayed || p.Order.Status != brokers.Pending {
		return p, err
	}
	// Recorded: the order is sent even if the client stops waiting.
	s.send(context.WithoutCancel(ctx), tr, &p.Order)
	return p, nil
}

// prepare returns the order of in, validated, and its parameters' hash.
func prepare(in OrderInput) (brokers.Order, string, error) {
	o := in.Order
	o.Symbol, o.AssetType = marketdata.NormalizeSymbol(in.Asset.Symbol), string(in.Asset.Type)
	if err := o.Validate(); err != nil {
		return brokers.Order{}, "", err
	}
	if n := utf8.RuneCountInString(in.ClientOrderID); n > MaxClientOrderID {
		return brokers.Order{}, "", &tradekit.ParamError{Param: "clientOrderId",
			Msg: fmt.Sprintf("must be at most %d characters, not %d", MaxClientOrderID, n)}
	}
	return o, paramsHash(in.ConnectionID, in.Asset.ID, o), nil
}

// replay returns the earlier order prev, with the same client order id as
// an order whose parameters hash to hash, or err when err is not nil.
func replay(prev Order, hash string, err error) (Placement, error) {
	if err != nil {
		return Placement{}, err
	}
	if prev.ParamsHash != hash {
		return Placement{}, fmt.Errorf("connect: %w", tradekit.Errorf(tradekit.ErrConflict,
			"clientOrderId %s was used for order %s with other parameters; use a new clientOrderId for a new order",
			tradekit.Quote(*prev.ClientOrderID), prev.ID))
	}
	return Placement{Order: prev, Replayed: true}, nil
}

// newOrder returns the pending order of in, created at now.
func newOrder(userID uuid.UUID, in OrderInput, o brokers.Order, hash string, now time.Time) Order {
	out := Order{
		ID: uuid.New(), UserID: userID, ConnectionID: in.ConnectionID, AssetID: in.Asset.ID,
		Symbol: o.Symbol, AssetType: o.AssetType, Side: o.Side, Type: o.Type, Quantity: o.Quantity,
		LimitPrice: o.LimitPrice, StopLossPrice: o.StopLossPrice, Status: brokers.Pending, ParamsHash: hash,
		CreatedAt: now, UpdatedAt: now,
	}
	if in.ClientOrderID != "" {
		id := in.ClientOrderID
		out.ClientOrderID = &id
	}
	// Should the broker not answer, the tracker sends it again.
	next := now.Add(time.Second)
	out.NextCheckAt = &next
	return out
}

// PreviewOrder runs every check [Service.PlaceOrder] runs on in, against
// the account as it is now, and records and sends nothing. Its errors are
// PlaceOrder's; a client order id is checked for its length only.
func (s *Service) PreviewOrder(ctx context.Context, userID uuid.UUID, in OrderInput) (brokers.Result, error) {
	o, _, err := prepare(in)
	if err != nil {
		return brokers.Result{}, err
	}
	conn, tr, err := s.trader(ctx, userID, in.ConnectionID)
	if err != nil {
		return brokers.Result{}, err
	}
	cc, err := s.checkContext(ctx, conn, tr, in.Asset, o)
	if err != nil {
		return brokers.Result{}, err
	}
	st := NewStore(s.db)
	g, _, err := st.Guardrails(ctx, userID)
	if err != nil {
		return brokers.Result{}, err
	}
	if cc.TradesToday, err = st.acceptedSince(ctx, userID, brokers.UTCDay(s.now())); err != nil {
		return brokers.Result{}, err
	}
	return brokers.Check(o, g, cc)
}

// now returns the current time as stored: UTC, to the microsecond.
func (s *Service) now() time.Time {
	return s.cfg.Now().UTC().Truncate(time.Microsecond)
}

// trader returns the user's active connection id and its broker client.
func (s *Service) trader(ctx context.Context, userID, id uuid.UUID) (Connection, brokers.Trader, error) {
	c, err := NewStore(s.db).Connection(ctx, userID, id)
	if err != nil {
		return Connection{}, nil, err
	}
	if c.Status != Active {
		return Connection{}, nil, fmt.Errorf("connect: %w", tradekit.Errorf(tradekit.ErrConflict,
			"broker connection %s is %s: orders go through an active connection only", c.ID, c.Status))
	}
	tr, err := s.traderOf(&c)
	return c, tr, err
}

// traderOf returns the broker client of the active connection c.
func (s *Service) traderOf(c *Connection) (brokers.Trader, error) {
	p, ok := s.byName[c.Provider]
	if !ok {
		return nil, fmt.Errorf("connect: %w", tradekit.Errorf(tradekit.ErrUnavailable, "the provider %s is not configured on this server", c.Provider))
	}
	sealer, err := s.sealer()
	if err != nil {
		return nil, err
	}
	tok, err := openTokens(sealer, c)
	if err != nil {
		return nil, err
	}
	return s.client(p, c, tok, sealer), nil
}

// checkContext reads what the guardrails need besides the order: the
// account's equity, cash and positions from the broker, now, and the
// latest stored close and ATR(14) of the order's asset and of every
// position's, from Tradekit's prices. A position is valued at its
// asset's latest close, or at the broker's market value when its symbol
// is no Tradekit asset or has no price; its stop-loss is that of the
// latest filled buy of the symbol through this connection that carried
// one.
func (s *Service) checkContext(ctx context.Context, conn Connection, tr brokers.Trader, asset marketdata.Asset, o brokers.Order) (brokers.Context, error) {
	acct, err := tr.Account(ctx)
	if err != nil {
		return brokers.Context{}, err
	}
	held, err := tr.Positions(ctx)
	if err != nil {
		return brokers.Context{}, err
	}
	md := marketdata.NewStore(s.db)
	today := calendar.DateOf(s.now())
	c := brokers.Context{Equity: acct.Equity, Cash: acct.Cash, Positions: make([]brokers.Held, 0, len(held))}
	var ok bool
	if c.Price, c.ATR, ok, err = market(ctx, md, asset.ID, today); err != nil {
		return brokers.Context{}, err
	}
	if !ok && o.Type == brokers.Market {
		return brokers.Context{}, &tradekit.ParamError{Param: "assetId",
			Msg: fmt.Sprintf("%s has no stored price, so a market order on it can be neither checked nor filled", o.Symbol)}
	}
	stops, err := NewStore(s.db).stops(ctx, conn.ID)
	if err != nil {
		return brokers.Context{}, err
	}
	for _, p := range held {
		h := brokers.Held{Symbol: marketdata.NormalizeSymbol(p.Symbol), Quantity: p.Quantity}
		a, err := md.AssetBySymbol(ctx, h.Symbol)
		switch {
		case err == nil:
			if h.Price, h.ATR, ok, err = market(ctx, md, a.ID, today); err != nil {
				return brokers.Context{}, err
			}
		case !errors.Is(err, tradekit.ErrNotFound):
			return brokers.Context{}, err
		}
		if h.Price.IsZero() && !p.Quantity.IsZero() {
			h.Price = p.MarketValue.DivRound(p.Quantity, atrPlaces).Abs()
		}
		if sp, ok := stops[h.Symbol]; ok && p.Quantity.IsPositive() {
			h.StopLossPrice = &sp
		}
		c.Positions = append(c.Positions, h)
	}
	return c, nil
}

// market returns the latest stored close of the asset, on or before
// today, and its ATR(14) over the past atrHistory days (zero when fewer
// than 15 closes are stored), rounded to atrPlaces; ok is false when the
// asset has no close.
func market(ctx context.Context, md *marketdata.Store, assetID uuid.UUID, today calendar.Date) (price, atr decimal.Decimal, ok bool, err error) {
	bars, err := md.Prices(ctx, assetID, today.AddDays(-atrHistory), today)
	if err != nil {
		return decimal.Decimal{}, decimal.Decimal{}, false, err
	}
	if len(bars) == 0 {
		last, err := md.LatestPrice(ctx, assetID)
		if errors.Is(err, tradekit.ErrNotFound) {
			return decimal.Decimal{}, decimal.Decimal{}, false, nil
		}
		if err != nil {
			return decimal.Decimal{}, decimal.Decimal{}, false, err
		}
		if last.Date.After(today) {
			return decimal.Decimal{}, decimal.Decimal{}, false, nil
		}
		return last.Close, decimal.Decimal{}, true, nil
	}
	price = bars[len(bars)-1].Close
	if len(bars) <= atrPeriod {
		return price, decimal.Decimal{}, true, nil
	}
	high, low, cl := make([]float64, len(bars)), make([]float64, len(bars)), make([]float64, len(bars))
	for i, b := range bars {
		high[i], low[i], cl[i] = b.High.InexactFloat64(), b.Low.InexactFloat64(), b.Close.InexactFloat64()
	}
	v := indicators.ATR(high, low, cl, atrPeriod)
	if last := v[len(v)-1]; !math.IsNaN(last) && !math.IsInf(last, 0) {
		atr = decimal.NewFromFloat(last).Round(atrPlaces)
	}
	return price, atr, true, nil
}

// send sends the pending order o to its broker and records the answer.
// An error that leaves it unknown whether the broker holds the order
// leaves it pending, for the tracker to resolve.
func (s *Service) send(ctx context.Context, tr brokers.Trader, o *Order) {
	st, err := tr.PlaceOrder(ctx, brokers.OrderRequest{ClientOrderID: o.ID.String(), Symbol: o.Symbol, Side: o.Side,
		Type: o.Type, Quantity: o.Quantity, LimitPrice: o.LimitPrice})
	now := s.now()
	var refused *brokers.RefusedError
	switch {
	case errors.As(err, &refused):
		err = s.reject(ctx, o, refused.Reason, now)
	case errors.Is(err, tradekit.ErrUnauthorized):
		err = s.reject(ctx, o, "the broker no longer accepts this connection's authorization: disconnect and connect again", now)
	case err != nil:
		s.cfg.Logger.Warn("sending an order to the broker failed; the order tracker retries", "order_id", o.ID, "err", err)
		return
	default:
		_, err = NewStore(s.db).settle(ctx, o, st, now, now.Add(minCheck))
	}
	if err != nil {
		s.cfg.Logger.Error("recording the broker's answer to an order failed", "order_id", o.ID, "err", err)
	}
}

// reject records the pending order o rejected by its broker for reason.
func (s *Service) reject(ctx context.Context, o *Order, reason string, now time.Time) error {
	o.Status, o.RejectRule, o.RejectReason, o.NextCheckAt, o.UpdatedAt = brokers.Rejected, RuleBroker, reason, nil, now
	_, err := s.db.NewUpdate().Model(o).Column("status", "reject_rule", "reject_reason", "next_check_at", "updated_at").
		WherePK().Where("status = ?", brokers.Pending).Exec(ctx)
	if err != nil {
		return fmt.Errorf("connect: reject order %s: %w", o.ID, err)
	}
	return nil
}

// TrackOrders does one round of the order tracker, which [Service.Run]
// runs every Config.OrderInterval: it reads each pending order that is
// due from its broker and records what it finds (a fill, a cancellation
// or a rejection, once, whichever instance sees it first), sends again
// the orders the broker never acknowledged, and starts a sync
// of every connection with a newly filled order, so that its portfolio
// shows the fill. Each order is claimed before it is read, so that one
// instance at a time reads it. It returns how many orders it read.
func (s *Service) TrackOrders(ctx context.Context) (int, error) {
	now := s.now()
	var due []Order
	err := s.db.NewSelect().Model(&due).Where("status = ? AND next_check_at <= ?", brokers.Pending, now).
		Order("next_check_at").Limit(100).Scan(ctx)
	if err != nil {
		return 0, fmt.Errorf("connect: due orders: %w", err)
	}
	n := 0
	for i := range due {
		o := &due[i]
		next := now.Add(checkAfter(now.Sub(o.CreatedAt)))
		res, err := s.db.NewUpdate().Model((*Order)(nil)).Set("next_check_at = ?", next).
			Where("id = ? AND status = ? AND next_check_at <= ?", o.ID, brokers.Pending, now).Exec(ctx)
		if err != nil {
			return n, fmt.Errorf("connect: claim order %s: %w", o.ID, err)
		}
		if k, err := res.RowsAffected(); err != nil || k != 1 {
			continue // another instance has it
		}
		o.NextCheckAt = &next
		n++
		if err := s.track(ctx, o, now, next); err != nil && ctx.Err() == nil {
			s.cfg.Logger.Warn("reading an order from the broker failed", "order_id", o.ID, "err", err)
		}
	}
	return n, nil
}

// track reads the pending order o from its broker and records its state.
func (s *Service) track(ctx context.Context, o *Order, now, next time.Time) error {
	st := NewStore(s.db)
	c, err := st.connection(ctx, o.ConnectionID)
	if err != nil {
		return err
	}
	if c.Status != Active {
		// The broker cannot be asked; keep looking, slowly, in case the
		// user connects the account again.
		return nil
	}
	tr, err := s.traderOf(&c)
	if err != nil {
		return err
	}
	var bs brokers.OrderState
	if o.BrokerOrderID != nil {
		bs, err = tr.Order(ctx, *o.BrokerOrderID)
	} else {
		bs, err = tr.OrderByClientID(ctx, o.ID.String())
		if errors.Is(err, tradekit.ErrNotFound) {
			if now.Sub(o.CreatedAt) > sendDeadline {
				return s.reject(ctx, o, "the broker could not be reached to place the order", now)
			}
			s.send(ctx, tr, o)
			return nil
		}
	}
	if err != nil {
		return err
	}
	final, err := st.settle(ctx, o, bs, now, next)
	if err != nil || !final || o.Status != brokers.Filled {
		return err
	}
	if _, err := s.StartSync(ctx, o.UserID, o.ConnectionID); err != nil {
		return fmt.Errorf("connect: sync after a fill: %w", err)
	}
	return nil
}

// CancelOrder cancels the user's pending order id at its broker and
// records it cancelled. The error wraps [tradekit.ErrNotFound] for an
// order that is not the user's, and [tradekit.ErrConflict] for one that
// is not pending, or that filled before the broker could cancel it, or
// whose connection is no longer active.
//
// A broker that cancels asynchronously (Alpaca answers a cancellation
// with pending_cancel) has accepted to cancel: the order is recorded
// cancelled then.
func (s *Service) CancelOrder(ctx context.Context, userID, id uuid.UUID) (Order, error) {
	st := NewStore(s.db)
	o, err := st.Order(ctx, userID, id)
	if err != nil {
		return Order{}, err
	}
	if o.Status != brokers.Pending {
		return Order{}, notPending(o)
	}
	_, tr, err := s.trader(ctx, userID, o.ConnectionID)
	if err != nil {
		return Order{}, err
	}
	var bs brokers.OrderState
	if o.BrokerOrderID != nil {
		bs.ID = *o.BrokerOrderID
	} else if bs, err = tr.OrderByClientID(ctx, o.ID.String()); errors.Is(err, tradekit.ErrNotFound) {
		// The broker never had it: cancelling is Tradekit's alone.
		return s.cancelled(ctx, o, brokers.OrderState{BrokerStatus: "never placed"})
	} else if err != nil {
		return Order{}, err
	}
	if err := tr.CancelOrder(ctx, bs.ID); err != nil && !errors.Is(err, tradekit.ErrConflict) {
		return Order{}, err
	}
	if bs, err = tr.Order(ctx, bs.ID); err != nil {
		return Order{}, err
	}
	if bs.Status == brokers.Pending || bs.Status == brokers.Cancelled {
		return s.cancelled(ctx, o, bs)
	}
	now := s.now()
	if _, err := st.settle(ctx, &o, bs, now, now); err != nil {
		return Order{}, err
	}
	return Order{}, notPending(o)
}

// cancelled records the pending order o cancelled, as the broker's state
// bs says; when o is no longer pending, it returns the conflict.
func (s *Service) cancelled(ctx context.Context, o Order, bs brokers.OrderState) (Order, error) {
	now := s.now()
	o.Status, o.CancelledAt, o.NextCheckAt, o.UpdatedAt = brokers.Cancelled, utcOr(bs.CancelledAt, now), nil, now
	o.BrokerStatus = bs.BrokerStatus
	res, err := s.db.NewUpdate().Model(&o).Column("status", "cancelled_at", "next_check_at", "broker_status", "updated_at").
		WherePK().Where("status = ?", brokers.Pending).Exec(ctx)
	if err != nil {
		return Order{}, fmt.Errorf("connect: cancel order %s: %w", o.ID, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		cur, err := NewStore(s.db).Order(ctx, o.UserID, o.ID)
		if err != nil {
			return Order{}, err
		}
		if cur.Status != brokers.Cancelled {
			return Order{}, notPending(cur)
		}
		return cur, nil
	}
	return o, nil
}

// notPending is the conflict of cancelling o, which is not pending.
func notPending(o Order) error {
	return fmt.Errorf("connect: %w", tradekit.Errorf(tradekit.ErrConflict,
		"order %s is %s: only a pending order can be cancelled", o.ID, o.Status))
}
