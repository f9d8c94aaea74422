package connect

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/internal/database"
	"github.com/tradekit/tradekit/marketdata"
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
	// AssetID is the asset to trade. It is read beside the order's other
	// reads; an unknown id is a *[tradekit.ParamError] naming assetId.
	AssetID uuid.UUID
	// Order is the order; its Symbol and AssetType are the asset's.
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

// prepare returns the order of in, validated, and its parameters' hash.
// The order's symbol and asset type are the asset's, set by withAsset once
// it is read; until then a stand-in symbol lets Validate check the rest.
func prepare(in OrderInput) (brokers.Order, string, error) {
	o := in.Order
	o.Symbol, o.AssetType = "", ""
	check := o
	check.Symbol = in.AssetID.String()
	if err := check.Validate(); err != nil {
		return brokers.Order{}, "", err
	}
	if n := utf8.RuneCountInString(in.ClientOrderID); n > MaxClientOrderID {
		return brokers.Order{}, "", &tradekit.ParamError{Param: "clientOrderId",
			Msg: fmt.Sprintf("must be at most %d characters, not %d", MaxClientOrderID, n)}
	}
	return o, paramsHash(in.ConnectionID, in.AssetID, o), nil
}

// withAsset returns o with the symbol and type of its asset a.
func withAsset(o brokers.Order, a marketdata.Asset) brokers.Order {
	o.Symbol, o.AssetType = marketdata.NormalizeSymbol(a.Symbol), string(a.Type)
	return o
}

// unknownAsset is the error of an order on an asset id that no asset has.
func unknownAsset(id uuid.UUID) error {
	return &tradekit.ParamError{Param: "assetId", Msg: "no asset has the id " + id.String()}
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
		ID: uuid.New(), UserID: userID, ConnectionID: in.ConnectionID, AssetID: in.AssetID,
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

// now returns the current time as stored: UTC, to the microsecond.
func (s *Service) now() time.Time {
	return s.cfg.Now().UTC().Truncate(time.Microsecond)
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

// send sends the pending order o to its broker and records the answer.
// An error that leaves it unknown whether the broker holds the order
// leaves it pending, for the tracker to resolve, and send returns it; a
// refusal over the broker's rate limit also puts the order's next check
// off until the broker said to come back (see [Service.waitOut]). A sell
// the broker refuses is sent once more when ReleaseStopLosses cancelled
// stop-loss legs holding the position (see the package doc).
func (s *Service) send(ctx context.Context, tr brokers.Trader, o *Order) error {
	req := brokers.OrderRequest{ClientOrderID: o.ID.String(), Symbol: o.Symbol, Side: o.Side,
		Type: o.Type, Quantity: o.Quantity, LimitPrice: o.LimitPrice, StopLossPrice: o.StopLossPrice}
	st, err := tr.PlaceOrder(ctx, req)
	var refused *brokers.RefusedError
	if errors.As(err, &refused) && o.Side == brokers.Sell {
		if n, rerr := tr.ReleaseStopLosses(ctx, o.Symbol, o.Quantity); rerr != nil {
			s.cfg.Logger.Warn("releasing the stop-losses a sell needs failed", "order_id", o.ID, "err", rerr)
		} else if n > 0 {
			st, err = tr.PlaceOrder(ctx, req)
		}
	}
	now := s.now()
	switch {
	case errors.As(err, &refused):
		err = s.reject(ctx, o, refused.Reason, now)
	case errors.Is(err, tradekit.ErrUnauthorized):
		err = s.reject(ctx, o, UnauthorizedReason, now)
	case err != nil:
		s.cfg.Logger.Warn("sending an order to the broker failed; the order tracker retries", "order_id", o.ID, "err", err)
		if wait, ok := brokers.RetryAfter(err); ok {
			s.waitOut(ctx, []Order{*o}, now.Add(wait))
		}
		return err
	default:
		_, err = s.record(ctx, o, st, now, now.Add(minCheck))
		if err == nil && o.Status == brokers.Pending && o.Type == brokers.Market && o.BrokerOrderID != nil {
			s.watch(tr, *o)
		}
	}
	if err != nil {
		s.cfg.Logger.Error("recording the broker's answer to an order failed", "order_id", o.ID, "err", err)
	}
	return nil
}

// waitOut puts the next check of the pending orders off until until,
// when the broker refused a request over its rate limit and said to come
// back then: the tracker, on any instance, leaves them alone meanwhile
// rather than spend requests on refusals. An order settled meanwhile, or
// due later already, keeps what it has.
func (s *Service) waitOut(ctx context.Context, orders []Order, until time.Time) {
	if len(orders) == 0 {
		return
	}
	ids := make([]uuid.UUID, len(orders))
	for i, o := range orders {
		ids[i] = o.ID
	}
	_, err := s.db.NewUpdate().Model((*Order)(nil)).Set("next_check_at = ?", until).
		Where("id IN (?) AND status = ? AND next_check_at < ?", bun.In(ids), brokers.Pending, until).
		Exec(context.WithoutCancel(ctx))
	if err != nil {
		s.cfg.Logger.Warn("putting orders' next checks off failed", "orders", len(orders), "err", err)
	}
}

// The timing of [Service.watch]: the first read watchFirst after the
// broker acknowledged the order, each next one twice as long after the
// one before, until watchFor has passed.
const (
	watchFirst = 4 * time.Millisecond
	watchFor   = 500 * time.Millisecond
)

// watch reads the market order o from its broker soon after it was
// acknowledged, at growing intervals, and records its state until it is
// final or watchFor has passed; the order tracker reads it anyway. A
// market order usually fills within milliseconds, and its fill is what a
// follower's copy waits for.
func (s *Service) watch(tr brokers.Trader, o Order) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), watchFor+5*time.Second)
		defer cancel()
		for wait, waited := watchFirst, time.Duration(0); waited < watchFor; wait, waited = 2*wait, waited+wait {
			time.Sleep(wait)
			bs, err := tr.Order(ctx, *o.BrokerOrderID)
			if err != nil {
				if wait, ok := brokers.RetryAfter(err); ok {
					s.waitOut(ctx, []Order{o}, s.now().Add(wait))
				}
				return // the tracker reads it
			}
			if bs.Status == brokers.Pending && bs.FilledQuantity.IsZero() {
				continue
			}
			now := s.now()
			if _, err := s.record(ctx, &o, bs, now, now.Add(checkAfter(now.Sub(o.CreatedAt)))); err != nil {
				s.cfg.Logger.Warn("recording an order's state failed; the order tracker retries", "order_id", o.ID, "err", err)
				return
			}
			if o.Status != brokers.Pending {
				return
			}
		}
	}()
}

// record records the broker's state st of pending order o (see
// [Store.settle]) and brings the ledger up to date with its fills, in one
// transaction under the ledger's lock (see [lockLedger]), and reports
// whether this call made the order final. A fill recorded for a
// portfolio is announced to Config.OnFill once the transaction commits
// (and, on PostgreSQL, to every instance listening on [FillsChannel]).
func (s *Service) record(ctx context.Context, o *Order, st brokers.OrderState, now, next time.Time) (bool, error) {
	if st.Status == brokers.Pending && st.FilledQuantity.Equal(o.LedgerQty) {
		// No fill the ledger lacks: the conditional update alone.
		_, err := NewStore(s.db).settle(ctx, o, st, now, next)
		return false, err
	}
	var final bool
	var filled uuid.UUID
	err := database.RunInTx(ctx, s.db, func(ctx context.Context, tx bun.IDB) error {
		if err := lockLedger(ctx, tx, o.ConnectionID); err != nil {
			return err
		}
		// settle reads back the ledger's share of the fills as the row
		// holds it under the lock.
		store := NewStore(tx)
		changed, err := store.settle(ctx, o, st, now, next)
		if err != nil || !changed {
			return err
		}
		final = o.Status.Final()
		filled, err = store.applyFill(ctx, o, now)
		return err
	})
	if err != nil {
		return false, err
	}
	if filled != uuid.Nil && s.cfg.OnFill != nil {
		s.cfg.OnFill(filled)
	}
	return final, nil
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

// The order tracker's batching: a round reads the pending orders of at
// most trackConnections connections that have an order due, and with
// each, those of its orders due within trackAhead (at most trackBatch),
// so that the orders of one connection come due together and share one
// read. The broker is asked for the orders submitted after the oldest of
// them less trackSkew, for the clocks of Tradekit and of the broker.
const (
	trackConnections = 100
	trackBatch       = 500
	trackAhead       = maxCheck / 4
	trackSkew        = time.Minute
)

// TrackOrders does one round of the order tracker, which [Service.Run]
// runs every Config.OrderInterval: for each connection with a pending
// order due, it reads the connection's orders from its broker with one
// list call (see [brokers.Trader.Orders]), however many are pending, and
// records what it finds for each due order (a fill, a cancellation or a
// rejection, once, whichever instance sees it first, with the fill
// applied to the ledger); it sends again the orders the broker never
// acknowledged. Orders due within a quarter of maxCheck are read with
// those due now, so that a connection's resting orders share their
// reads. Each order is claimed before it is read, so that one instance at
// a time reads it. It returns how many orders it read.
func (s *Service) TrackOrders(ctx context.Context) (int, error) {
	now := s.now()
	var conns []uuid.UUID
	err := s.db.NewSelect().Model((*Order)(nil)).ColumnExpr("DISTINCT connection_id").
		Where("status = ? AND next_check_at <= ?", brokers.Pending, now).Limit(trackConnections).Scan(ctx, &conns)
	if err != nil {
		return 0, fmt.Errorf("connect: connections with due orders: %w", err)
	}
	n := 0
	for _, c := range conns {
		k, err := s.trackConnection(ctx, c, now)
		n += k
		if err != nil {
			if ctx.Err() != nil {
				return n, nil
			}
			s.cfg.Logger.Warn("reading a connection's orders from the broker failed", "connection_id", c, "err", err)
		}
	}
	return n, nil
}

// trackConnection claims the pending orders of the connection due by
// now plus trackAhead, reads them from the broker with one list call, and
// records their state; it returns how many it claimed.
func (s *Service) trackConnection(ctx context.Context, connID uuid.UUID, now time.Time) (int, error) {
	var due []Order
	// An order is read ahead only if it is read less often than every
	// 2 × trackAhead (it is older than 16 × trackAhead), so that what one
	// round claims is not due within trackAhead again.
	err := s.db.NewSelect().Model(&due).Where("connection_id = ? AND status = ?", connID, brokers.Pending).
		Where("(next_check_at <= ? OR next_check_at <= ? AND created_at <= ?)", now, now.Add(trackAhead), now.Add(-16*trackAhead)).
		Order("next_check_at").Limit(trackBatch).Scan(ctx)
	if err != nil {
		return 0, fmt.Errorf("connect: due orders of connection %s: %w", connID, err)
	}
	claimed := due[:0]
	for i := range due {
		o := due[i]
		next := now.Add(checkAfter(now.Sub(o.CreatedAt)))
		res, err := s.db.NewUpdate().Model((*Order)(nil)).Set("next_check_at = ?", next).
			Where("id = ? AND status = ? AND next_check_at = ?", o.ID, brokers.Pending, *o.NextCheckAt).Exec(ctx)
		if err != nil {
			return len(claimed), fmt.Errorf("connect: claim order %s: %w", o.ID, err)
		}
		if k, err := res.RowsAffected(); err != nil || k != 1 {
			continue // another instance has it
		}
		o.NextCheckAt = &next
		claimed = append(claimed, o)
	}
	if len(claimed) == 0 {
		return 0, nil
	}
	c, err := NewStore(s.db).connection(ctx, connID)
	if err != nil {
		return len(claimed), err
	}
	if c.Status != Active {
		// The broker cannot be asked; keep looking, slowly, in case the
		// user connects the account again.
		return len(claimed), nil
	}
	tr, err := s.traderOf(&c)
	if err != nil {
		return len(claimed), err
	}
	oldest := claimed[0].CreatedAt
	for _, o := range claimed {
		if o.CreatedAt.Before(oldest) {
			oldest = o.CreatedAt
		}
	}
	listed, err := tr.Orders(ctx, oldest.Add(-trackSkew))
	if err != nil {
		if wait, ok := brokers.RetryAfter(err); ok {
			s.waitOut(ctx, claimed, now.Add(wait))
		}
		return len(claimed), err
	}
	byID := make(map[string]brokers.OrderState, len(listed))
	byClient := make(map[string]brokers.OrderState, len(listed))
	for _, st := range listed {
		byID[st.ID] = st
		if st.ClientOrderID != "" {
			byClient[st.ClientOrderID] = st
		}
	}
	for i := range claimed {
		o := &claimed[i]
		bs, ok := byClient[o.ID.String()]
		if o.BrokerOrderID != nil {
			bs, ok = byID[*o.BrokerOrderID]
		}
		err := s.track(ctx, tr, o, bs, ok, now, *o.NextCheckAt)
		if wait, limited := brokers.RetryAfter(err); limited {
			// The orders after it would be refused as well.
			s.waitOut(ctx, claimed[i:], now.Add(wait))
			return len(claimed), err
		}
		if err != nil && ctx.Err() == nil {
			s.cfg.Logger.Warn("recording an order's state failed", "order_id", o.ID, "err", err)
		}
	}
	return len(claimed), nil
}

// track records the state bs of the pending order o that the broker's
// list gave, if listed; an order the list lacks is read alone when the
// broker acknowledged it (a list bounded by submission time misses it
// only if the clocks disagree by more than trackSkew), and is sent again
// when the broker never had it, or rejected past sendDeadline.
func (s *Service) track(ctx context.Context, tr brokers.Trader, o *Order, bs brokers.OrderState, listed bool, now, next time.Time) error {
	var err error
	switch {
	case listed:
	case o.BrokerOrderID != nil:
		bs, err = tr.Order(ctx, *o.BrokerOrderID)
	default:
		bs, err = tr.OrderByClientID(ctx, o.ID.String())
		if errors.Is(err, tradekit.ErrNotFound) {
			if now.Sub(o.CreatedAt) > sendDeadline {
				return s.reject(ctx, o, "the broker could not be reached to place the order", now)
			}
			err := s.send(ctx, tr, o)
			if _, limited := brokers.RetryAfter(err); limited {
				return err // the orders after it wait too
			}
			return nil // send said what failed; the order stays pending
		}
	}
	if err != nil {
		return err
	}
	_, err = s.record(ctx, o, bs, now, next)
	return err
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
	return s.cancelAt(ctx, tr, o)
}

// cancelAt cancels the pending order o at its broker, through tr, and
// records what the broker then says of it: cancelled, with the fills it
// had before (into the ledger first), or final otherwise, which is the
// conflict of [Service.CancelOrder]. An order the broker never had is
// cancelled by Tradekit alone.
func (s *Service) cancelAt(ctx context.Context, tr brokers.Trader, o Order) (Order, error) {
	var bs brokers.OrderState
	var err error
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
	if !bs.FilledQuantity.Equal(o.LedgerQty) && (bs.Status == brokers.Pending || bs.Status == brokers.Cancelled) {
		// Fills the tracker has not seen yet: into the ledger first.
		now := s.now()
		if _, err := s.record(ctx, &o, bs, now, now.Add(minCheck)); err != nil {
			return Order{}, err
		}
		if o.Status == brokers.Cancelled {
			return o, nil
		}
		if o.Status != brokers.Pending {
			return Order{}, notPending(o)
		}
	}
	if bs.Status == brokers.Pending || bs.Status == brokers.Cancelled {
		return s.cancelled(ctx, o, bs)
	}
	now := s.now()
	if _, err := s.record(ctx, &o, bs, now, now); err != nil {
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
