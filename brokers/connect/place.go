package connect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/database"
	"github.com/tradekit/tradekit/marketdata"
)

// PlaceOrder checks in's order against the user's guardrails and the
// connection's exposure ledger, records it, and sends it to the broker
// when it passes.
//
// With a client order id that the user already used, PlaceOrder places
// nothing: it returns that order as it is now, Replayed, when the
// parameters are the same, and an error wrapping [tradekit.ErrConflict]
// when they differ.
//
// The guardrail check, the count of the day's orders and the recording
// of the order with its reservation run in one transaction under a lock
// per user that every instance takes (a PostgreSQL advisory transaction
// lock; SQLite serialises writers already), against the ledger as the
// previous order left it: concurrent orders of one user, on any number
// of instances, accept exactly what a sequential run would. No broker is
// read for the check. An order that breaks a guardrail is recorded
// rejected, with every broken rule, and never sent. An order the broker
// refuses is recorded rejected with the broker's reason (RejectRule
// [RuleBroker]). An order the broker cannot be reached for stays pending:
// the order tracker ([Service.TrackOrders]) sends it again, and rejects
// it when the broker has not acknowledged it within a minute.
//
// PlaceOrder returns an error, and records nothing, for a malformed
// order (wrapping [tradekit.ErrInvalid]), a connection that is not the
// user's ([tradekit.ErrNotFound]) or not active ([tradekit.ErrConflict]),
// and, before the connection's first sync, a broker that cannot be read
// ([tradekit.ErrUnavailable] or [tradekit.ErrUnauthorized]).
func (s *Service) PlaceOrder(ctx context.Context, userID uuid.UUID, in OrderInput) (Placement, error) {
	start := time.Now()
	p, err := s.placeOrder(ctx, userID, in)
	s.cfg.Observe.placed(start, p, err)
	return p, err
}

// placeOrder is [Service.PlaceOrder], unobserved.
func (s *Service) placeOrder(ctx context.Context, userID uuid.UUID, in OrderInput) (Placement, error) {
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
	p, tr, err := s.accept(ctx, userID, in, o, hash)
	if errors.Is(err, errNoLedger) {
		// The first sync has not written the ledger yet: write it now.
		if err = s.firstPull(ctx, in.ConnectionID); err == nil {
			p, tr, err = s.accept(ctx, userID, in, o, hash)
		}
	}
	if err != nil || p.Replayed || p.Order.Status != brokers.Pending {
		return p, err
	}
	// Recorded: the order is sent even if the client stops waiting. One
	// the broker could not take stays pending, for the tracker.
	_ = s.send(context.WithoutCancel(ctx), tr, &p.Order)
	return p, nil
}

// accept checks o against the user's guardrails, the connection's ledger
// and the quotes of the assets, and records it, pending with its
// reservation or rejected, in one transaction under the user's lock (see
// [Service.PlaceOrder]); it returns the trader of the connection. One
// statement reads the asset, the connection, the guardrails and the
// ledger ([Store.orderBook]); the asset's quote is kept per price version
// ([quotes.at]).
func (s *Service) accept(ctx context.Context, userID uuid.UUID, in OrderInput, o brokers.Order, hash string) (Placement, brokers.Trader, error) {
	now := s.now()
	var p Placement
	var tr brokers.Trader
	err := database.RunInTx(ctx, s.db, func(ctx context.Context, tx bun.IDB) error {
		if err := database.LockUser(ctx, tx, userID); err != nil {
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
		ob, err := s.orderBook(ctx, st, userID, in, now)
		if err != nil {
			return err
		}
		if tr, err = s.traderOf(&ob.Connection); err != nil {
			return err
		}
		o = withAsset(o, ob.Asset)
		q, err := s.quotes.at(ctx, tx, ob.Asset.ID, ob.AssetVersion, calendar.DateOf(now))
		if err != nil {
			return err
		}
		cc, reserve, err := s.checkContext(ctx, st, ob.book, in.AssetID, o, now, map[uuid.UUID]quote{ob.Asset.ID: q})
		if err != nil {
			return noPrice(err, o.Symbol)
		}
		cc.CanShort = s.byName[ob.Connection.Provider].CanShort
		if p.Check, err = brokers.Check(o, ob.Guardrails, cc); err != nil {
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
		} else {
			p.Order.ReservedPrice = &reserve
		}
		// Written with the commit: nothing here reads it back.
		if err := database.ExecWithNext(ctx, tx, database.InsertRows(tx, &p.Order, "")); err != nil {
			return fmt.Errorf("connect: record the order: %w", err)
		}
		return nil
	})
	return p, tr, err
}

// orderBook reads the book of in's connection with the connection and
// in's asset through st ([Store.orderBook]), and refuses an unknown
// asset, then a connection that is not the user's or not active, as
// PlaceOrder does.
func (s *Service) orderBook(ctx context.Context, st *Store, userID uuid.UUID, in OrderInput, now time.Time) (orderBook, error) {
	ob, err := st.orderBook(ctx, in.ConnectionID, userID, in.AssetID, brokers.UTCDay(now))
	if errors.Is(err, errNoBook) {
		return orderBook{}, s.noBook(ctx, st.db, userID, in)
	}
	if err != nil {
		return orderBook{}, err
	}
	if ob.Asset.ID == uuid.Nil {
		return orderBook{}, unknownAsset(in.AssetID)
	}
	if err := checkActive(ob.Connection); err != nil {
		return orderBook{}, err
	}
	return ob, nil
}

// noBook returns why [Store.orderBook] found no row for in, read through
// tx, in PlaceOrder's order: an unknown asset, a connection that is not
// the user's or not active, else errNoLedger.
func (s *Service) noBook(ctx context.Context, tx bun.IDB, userID uuid.UUID, in OrderInput) error {
	if _, err := marketdata.NewStore(tx).Asset(ctx, in.AssetID); errors.Is(err, tradekit.ErrNotFound) {
		return unknownAsset(in.AssetID)
	} else if err != nil {
		return err
	}
	c, err := NewStore(tx).Connection(ctx, userID, in.ConnectionID)
	if err != nil {
		return err
	}
	if err := checkActive(c); err != nil {
		return err
	}
	return errNoLedger
}

// Preview is what [Service.PreviewOrder] finds of an order.
type Preview struct {
	brokers.Result
	// Asset is the order's asset.
	Asset marketdata.Asset
}

// PreviewOrder runs every check [Service.PlaceOrder] runs on in, against
// the ledger as it is now, and records and sends nothing. Its errors are
// PlaceOrder's; a client order id is checked for its length only.
func (s *Service) PreviewOrder(ctx context.Context, userID uuid.UUID, in OrderInput) (Preview, error) {
	o, _, err := prepare(in)
	if err != nil {
		return Preview{}, err
	}
	r, err := s.preview(ctx, userID, in, o)
	if errors.Is(err, errNoLedger) {
		// The first sync has not written the ledger yet: write it now.
		if err = s.firstPull(ctx, in.ConnectionID); err == nil {
			r, err = s.preview(ctx, userID, in, o)
		}
	}
	return r, err
}

// preview checks o against the ledger as it is now, read as an order's
// check reads it (see [Service.accept]), without the lock.
func (s *Service) preview(ctx context.Context, userID uuid.UUID, in OrderInput, o brokers.Order) (Preview, error) {
	st, now := NewStore(s.db), s.now()
	ob, err := s.orderBook(ctx, st, userID, in, now)
	if err != nil {
		return Preview{}, err
	}
	p := Preview{Asset: ob.Asset}
	q, err := s.quotes.at(ctx, s.db, ob.Asset.ID, ob.AssetVersion, calendar.DateOf(now))
	if err != nil {
		return Preview{}, err
	}
	cc, _, err := s.checkContext(ctx, st, ob.book, in.AssetID, o, now, map[uuid.UUID]quote{ob.Asset.ID: q})
	if err != nil {
		return Preview{}, noPrice(err, p.Asset.Symbol)
	}
	cc.CanShort = s.byName[ob.Connection.Provider].CanShort
	p.Result, err = brokers.Check(withAsset(o, p.Asset), ob.Guardrails, cc)
	return p, err
}

// errNoPrice reports a market order on an asset without a stored price.
var errNoPrice = errors.New("connect: the asset has no stored price")

// noPrice returns err, or for errNoPrice the ParamError naming the asset's
// symbol.
func noPrice(err error, symbol string) error {
	if errors.Is(err, errNoPrice) {
		return &tradekit.ParamError{Param: "assetId",
			Msg: fmt.Sprintf("%s has no stored price, so a market order on it can be neither checked nor filled", symbol)}
	}
	return err
}

// firstPull writes the ledger of a connection whose first sync has not
// yet: one pull per connection at a time in this process, which the
// orders waiting for it share.
func (s *Service) firstPull(ctx context.Context, connectionID uuid.UUID) error {
	_, err, _ := s.pulling.Do(connectionID.String(), func() (any, error) {
		return s.pull(context.WithoutCancel(ctx), connectionID)
	})
	return err
}

// trader returns the user's active connection id and its broker client.
func (s *Service) trader(ctx context.Context, userID, id uuid.UUID) (Connection, brokers.Trader, error) {
	c, err := s.activeConnection(ctx, userID, id)
	if err != nil {
		return Connection{}, nil, err
	}
	tr, err := s.traderOf(&c)
	return c, tr, err
}

// activeConnection returns the user's connection id, or an error when it
// is not the user's ([tradekit.ErrNotFound]) or not active
// ([tradekit.ErrConflict]).
func (s *Service) activeConnection(ctx context.Context, userID, id uuid.UUID) (Connection, error) {
	c, err := NewStore(s.db).Connection(ctx, userID, id)
	if err != nil {
		return Connection{}, err
	}
	if err := checkActive(c); err != nil {
		return Connection{}, err
	}
	return c, nil
}

// checkActive refuses ([tradekit.ErrConflict]) a connection that is not
// active.
func checkActive(c Connection) error {
	if c.Status != Active {
		return fmt.Errorf("connect: %w", tradekit.Errorf(tradekit.ErrConflict,
			"broker connection %s is %s: orders go through an active connection only", c.ID, c.Status))
	}
	return nil
}

// checkContext returns what the guardrails need besides the order o on
// the asset assetID, from the connection's book b (see [Store.book]) and
// the quotes of the assets, read through st (those in known are not read
// again): the count of the user's orders accepted today (UTC), the
// ledger's cash, its positions valued at their assets' latest closes
// (equity is the cash plus their values), the stop-loss each carries,
// the open orders' reservations, and the order's asset's latest close and
// ATR(14). A position whose symbol is no Tradekit asset or has no price
// is valued at the broker's value, else at its average cost. It also
// returns the price at which the order would reserve exposure: its limit
// price, or the latest close plus Config.SlippageBps. The error is
// errNoPrice for a market order on an asset without a stored price.
func (s *Service) checkContext(ctx context.Context, st *Store, b book, assetID uuid.UUID, o brokers.Order, now time.Time, known map[uuid.UUID]quote) (brokers.Context, decimal.Decimal, error) {
	today := calendar.DateOf(now)
	seen := map[uuid.UUID]quote{} // each asset's quote read once
	for id, q := range known {
		seen[id] = q
	}
	quoteOf := func(id uuid.UUID) (quote, error) {
		if q, ok := seen[id]; ok {
			return q, nil
		}
		q, err := s.quotes.get(ctx, st.db, id, today)
		seen[id] = q
		return q, err
	}
	q, err := quoteOf(assetID)
	if err != nil {
		return brokers.Context{}, decimal.Decimal{}, err
	}
	if !q.ok && o.Type == brokers.Market {
		return brokers.Context{}, decimal.Decimal{}, errNoPrice
	}
	c := brokers.Context{Price: q.price, ATR: q.atr, Cash: b.Cash, Equity: b.Cash, TradesToday: b.Trades,
		Positions: make([]brokers.Held, 0, len(b.Positions)), Open: make([]brokers.Reservation, 0, len(b.Open))}
	for _, p := range b.Positions {
		h := brokers.Held{Symbol: marketdata.NormalizeSymbol(p.Symbol), Quantity: p.Quantity}
		if p.AssetID != nil {
			pq, err := quoteOf(*p.AssetID)
			if err != nil {
				return brokers.Context{}, decimal.Decimal{}, err
			}
			h.Price, h.ATR = pq.price, pq.atr
		}
		if h.Price.IsZero() && p.BrokerValue != nil && !p.Quantity.IsZero() {
			h.Price = p.BrokerValue.DivRound(p.Quantity, atrPlaces).Abs()
		}
		if h.Price.IsZero() {
			h.Price = p.AverageCost
		}
		if p.Quantity.IsPositive() {
			h.StopLossPrice = p.StopLossPrice
		}
		c.Equity = c.Equity.Add(p.Quantity.Mul(h.Price))
		c.Positions = append(c.Positions, h)
	}
	for _, x := range b.Open {
		r := brokers.Reservation{Symbol: x.Symbol, Quantity: x.Quantity.Sub(x.LedgerQty).Mul(sideSign(x.Side)),
			StopLossPrice: x.StopLossPrice}
		xq, err := quoteOf(x.AssetID)
		if err != nil {
			return brokers.Context{}, decimal.Decimal{}, err
		}
		r.Price, r.ATR = xq.price, xq.atr
		if x.ReservedPrice != nil {
			r.Price = *x.ReservedPrice
		}
		c.Open = append(c.Open, r)
	}
	reserve := q.price.Add(q.price.Mul(s.cfg.SlippageBps).Shift(-4))
	if o.LimitPrice != nil {
		reserve = *o.LimitPrice
	}
	return c, reserve, nil
}
