package copytrading

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/brokers/connect"
	"github.com/tradekit/tradekit/marketdata"
)

// OrderPlacer places orders for users, through their guardrails:
// *connect.Service.
type OrderPlacer interface {
	PlaceOrder(ctx context.Context, userID uuid.UUID, in connect.OrderInput) (connect.Placement, error)
}

// The copy engine's timing and precision.
const (
	// DefaultCopyInterval is how often [Service.Run] looks for leader
	// fills to copy.
	DefaultCopyInterval = 250 * time.Millisecond
	// stopCheckEvery is how often Run checks every copying follow's
	// copy stop-loss, besides before each copy.
	stopCheckEvery = 10 * time.Second
	// claimTimeout is how long a claimed copy may stay unfinished (its
	// instance stopped) before another instance takes it up again.
	claimTimeout = 30 * time.Second
	// copyPlaces is the decimal places of a copy's quantity, rounded down.
	copyPlaces = 4
	// copyBatch is the most (fill, follow) pairs one pass reads.
	copyBatch = 200
)

// The statuses of a copy event.
const (
	eventClaimed  = "claimed"
	eventPlaced   = "placed"
	eventRejected = "rejected"
	eventSkipped  = "skipped"
	eventNotified = "notified"
)

// copyEvent is a row of copy_events: one leader fill taken up for one
// follow.
type copyEvent struct {
	bun.BaseModel `bun:"table:copy_events"`

	FollowID  uuid.UUID  `bun:"follow_id,pk"`
	FillID    string     `bun:"fill_id,pk"`
	Status    string     `bun:"status"`
	OrderID   *uuid.UUID `bun:"order_id"`
	Reason    string     `bun:"reason"`
	CreatedAt time.Time  `bun:"created_at"`
	UpdatedAt time.Time  `bun:"updated_at"`
}

// work is a leader fill that a follow has yet to take up.
type work struct {
	Follow      `bun:",extend"`
	Slug        string          `bun:"slug"`
	DisplayName string          `bun:"display_name"`
	LeaderPF    uuid.UUID       `bun:"leader_portfolio_id"`
	FillID      string          `bun:"fill_id"`
	Symbol      string          `bun:"fill_symbol"`
	Side        string          `bun:"fill_side"`
	Quantity    decimal.Decimal `bun:"fill_quantity"`
	Price       decimal.Decimal `bun:"fill_price"`
	FilledAt    time.Time       `bun:"fill_at"`
	EventStatus *string         `bun:"event_status"`
	EventAt     *time.Time      `bun:"event_at"`
}

// Run copies leader fills every Config.CopyInterval, and checks the copy
// stop-losses every 10 seconds, until ctx is done. Any number of
// instances may run it on one database: each (fill, follow) is taken up
// once.
func (s *Service) Run(ctx context.Context) {
	if s.orders == nil {
		return
	}
	t := time.NewTicker(s.copyEvery)
	defer t.Stop()
	lastStops := time.Time{}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if time.Since(lastStops) >= stopCheckEvery {
			if err := s.CheckStops(ctx); err != nil && ctx.Err() == nil {
				s.log.Warn("copytrading: checking copy stop-losses failed", "err", err)
			}
			lastStops = time.Now()
		}
		if _, err := s.Copy(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("copytrading: copying leader fills failed", "err", err)
		}
	}
}

// Copy takes up the fills of published leaders that their live follows
// have not: each follow with notifications on gets a leader-trade
// notification, and each follow with auto-sync on a mirrored order (see
// the package documentation for its size), placed through the
// follower's connection and guardrails. Fills are taken in the order they
// filled, from the time the follow began or its auto-sync was last turned
// on. Each (fill, follow) is claimed in the database first, so that it is
// taken up once however many instances run Copy, and an instance leaves a
// follow alone for the pass when another holds a claim of it, so that a
// follow's copies are placed in fill order. A claim left unfinished for
// 30 seconds (its instance stopped) is taken up again, and the order it
// places then carries the same client order id, so it is never placed
// twice. It returns how many pairs it took up.
func (s *Service) Copy(ctx context.Context) (int, error) {
	now := s.clock()
	var todo []work
	err := s.db.NewSelect().TableExpr("follows AS follow").ColumnExpr("follow.*").
		ColumnExpr("lp.slug, lp.display_name, lp.portfolio_id AS leader_portfolio_id").
		ColumnExpr("pf.broker_id AS fill_id, pf.symbol AS fill_symbol, pf.side AS fill_side, pf.quantity AS fill_quantity").
		ColumnExpr("pf.price AS fill_price, pf.filled_at AS fill_at, ce.status AS event_status, ce.updated_at AS event_at").
		Join("JOIN leader_profiles AS lp ON lp.id = follow.leader_profile_id AND lp.unpublished_at IS NULL").
		Join("JOIN portfolio_fills AS pf ON pf.portfolio_id = lp.portfolio_id AND pf.filled_at >= follow.copy_since").
		Join("LEFT JOIN copy_events AS ce ON ce.follow_id = follow.id AND ce.fill_id = pf.broker_id").
		Where("follow.unfollowed_at IS NULL AND (follow.auto_sync OR follow.notifications)").
		Where("(ce.follow_id IS NULL OR ce.status = ?)", eventClaimed).
		OrderExpr("pf.filled_at, pf.broker_id, follow.id").Limit(copyBatch).Scan(ctx, &todo)
	if err != nil {
		return 0, fmt.Errorf("copytrading: fills to copy: %w", err)
	}
	// A follow's fills are taken up one at a time, in order: a follow
	// another instance is at (a live claim, or a claim lost to it) waits
	// for the next pass.
	busy := map[uuid.UUID]bool{}
	n := 0
	for i := range todo {
		w := &todo[i]
		if busy[w.ID] {
			continue
		}
		if w.EventAt != nil && w.EventAt.After(now.Add(-claimTimeout)) {
			busy[w.ID] = true
			continue
		}
		ok, err := s.claim(ctx, w, now)
		if err != nil {
			return n, err
		}
		if !ok {
			busy[w.ID] = true
			continue
		}
		n++
		if err := s.take(ctx, w); err != nil {
			return n, err
		}
	}
	return n, nil
}

// claim records that this instance takes w up, and reports whether it
// did: false when another instance claimed it first.
func (s *Service) claim(ctx context.Context, w *work, now time.Time) (bool, error) {
	var res sql.Result
	var err error
	if w.EventStatus == nil {
		e := copyEvent{FollowID: w.ID, FillID: w.FillID, Status: eventClaimed, CreatedAt: now, UpdatedAt: now}
		res, err = s.db.NewInsert().Model(&e).On("CONFLICT (follow_id, fill_id) DO NOTHING").Exec(ctx)
	} else {
		res, err = s.db.NewUpdate().Model((*copyEvent)(nil)).Set("updated_at = ?", now).
			Where("follow_id = ? AND fill_id = ? AND status = ? AND updated_at < ?", w.ID, w.FillID, eventClaimed, now.Add(-claimTimeout)).Exec(ctx)
	}
	if err != nil {
		return false, fmt.Errorf("copytrading: claim a copy: %w", err)
	}
	k, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("copytrading: claim a copy: %w", err)
	}
	return k == 1, nil
}

// take handles the claimed fill w for its follow.
func (s *Service) take(ctx context.Context, w *work) error {
	trade := fmt.Sprintf("%s (%s) %s %s %s at %s", w.DisplayName, w.Slug, pastTense(w.Side), w.Quantity, w.Symbol, w.Price)
	data := map[string]string{"followId": w.ID.String(), "leaderProfileId": w.LeaderProfileID.String(), "fillId": w.FillID}
	if w.Notifications {
		if err := notify(ctx, s.db, w.UserID, KindLeaderTrade, trade, s.clock(), data); err != nil {
			return err
		}
	}
	if !w.AutoSync {
		return s.finish(ctx, w, eventNotified, nil, "")
	}
	stopped, err := s.checkStop(ctx, &w.Follow)
	if err != nil {
		return err
	}
	if stopped {
		return s.finish(ctx, w, eventSkipped, nil, "auto-sync stopped by the copy stop-loss")
	}
	in, reason, err := s.size(ctx, w)
	if err != nil {
		return err
	}
	if reason != "" {
		return s.finish(ctx, w, eventSkipped, nil, reason)
	}
	p, err := s.orders.PlaceOrder(ctx, w.UserID, in)
	switch {
	case err == nil && p.Order.Status != brokers.Rejected:
		return s.finish(ctx, w, eventPlaced, &p.Order.ID, "")
	case err == nil:
		reason = p.Order.RejectReason
		data["orderId"] = p.Order.ID.String()
	default:
		var te *tradekit.Error
		var pe *tradekit.ParamError
		switch {
		case errors.As(err, &te):
			reason = te.Msg
		case errors.As(err, &pe):
			reason = pe.Error()
		case errors.Is(err, tradekit.ErrUnavailable), errors.Is(err, tradekit.ErrUnauthorized):
			reason = "your broker could not be reached or refused the connection's authorization"
		default:
			return err
		}
	}
	msg := fmt.Sprintf("copying %s was rejected: %s", trade, reason)
	if err := notify(ctx, s.db, w.UserID, KindCopyRejected, msg, s.clock(), data); err != nil {
		return err
	}
	var orderID *uuid.UUID
	if err == nil {
		orderID = &p.Order.ID
	}
	return s.finish(ctx, w, eventRejected, orderID, reason)
}

// finish records how w was taken up.
func (s *Service) finish(ctx context.Context, w *work, status string, orderID *uuid.UUID, reason string) error {
	_, err := s.db.NewUpdate().Model((*copyEvent)(nil)).Set("status = ?, order_id = ?, reason = ?, updated_at = ?", status, orderID, reason, s.clock()).
		Where("follow_id = ? AND fill_id = ?", w.ID, w.FillID).Exec(ctx)
	if err != nil {
		return fmt.Errorf("copytrading: record a copy: %w", err)
	}
	return nil
}

// pastTense returns "bought" or "sold".
func pastTense(side string) string {
	if side == string(brokers.Sell) {
		return "sold"
	}
	return "bought"
}

// copyOrderID returns the client order id of the copy of a fill for a
// follow: the same for every attempt, so that the order is placed once.
func copyOrderID(followID uuid.UUID, fillID string) string {
	sum := sha256.Sum256([]byte(followID.String() + "\n" + fillID))
	return "copy-" + hex.EncodeToString(sum[:16])
}

// size returns the mirrored order of w, or the reason there is none; see
// the package documentation for the formulas.
func (s *Service) size(ctx context.Context, w *work) (connect.OrderInput, string, error) {
	if w.ConnectionID == nil {
		return connect.OrderInput{}, "the follow has no connection to trade through", nil
	}
	leader, err := portfolioByID(ctx, s.db, w.LeaderPF)
	if err != nil {
		return connect.OrderInput{}, "", err
	}
	mine, err := portfolioOf(ctx, s.db, *w.ConnectionID)
	if errors.Is(err, sql.ErrNoRows) {
		return connect.OrderInput{}, "your connection has not synced yet", nil
	}
	if err != nil {
		return connect.OrderInput{}, "", err
	}
	asset, err := marketdata.NewStore(s.db).AssetBySymbol(ctx, w.Symbol)
	if errors.Is(err, tradekit.ErrNotFound) {
		return connect.OrderInput{}, fmt.Sprintf("%s is not a Tradekit asset", w.Symbol), nil
	}
	if err != nil {
		return connect.OrderInput{}, "", err
	}
	allocation := mine.Equity.Mul(w.AllocationPct).Shift(-2)
	held := heldOf(mine, w.Symbol)
	var qty decimal.Decimal
	if w.Side == string(brokers.Buy) {
		if !leader.Equity.IsPositive() || !w.Price.IsPositive() {
			return connect.OrderInput{}, "the leader's equity is not positive", nil
		}
		// The leader's trade as a share of the leader's equity, applied
		// to the allocation and scaled.
		notional := w.Quantity.Mul(w.Price).Mul(allocation).Mul(w.ScalingPct).Shift(-2).Div(leader.Equity)
		qty = notional.Div(w.Price)
		room := allocation.Mul(w.MaxPositionPct).Shift(-2).Div(w.Price).Sub(held)
		qty = decimal.Min(qty, room).RoundDown(copyPlaces)
		if !qty.IsPositive() {
			return connect.OrderInput{}, fmt.Sprintf("the copy rounds to no %s, or the position is at its maximum", w.Symbol), nil
		}
	} else {
		// The share of the leader's position sold, applied to the
		// follower's position.
		before := heldOf(leader, w.Symbol).Add(w.Quantity)
		if !held.IsPositive() || !before.IsPositive() {
			return connect.OrderInput{}, fmt.Sprintf("you hold no %s to sell", w.Symbol), nil
		}
		qty = decimal.Min(held.Mul(w.Quantity).Div(before), held).RoundDown(copyPlaces)
		if !qty.IsPositive() {
			return connect.OrderInput{}, fmt.Sprintf("the copy rounds to no %s", w.Symbol), nil
		}
	}
	return connect.OrderInput{ConnectionID: *w.ConnectionID, Asset: asset,
		Order:         brokers.Order{Side: brokers.Side(w.Side), Type: brokers.Market, Quantity: qty},
		ClientOrderID: copyOrderID(w.ID, w.FillID)}, "", nil
}

// portfolioByID returns a portfolio with its positions, whoever owns it.
func portfolioByID(ctx context.Context, db bun.IDB, id uuid.UUID) (connect.Portfolio, error) {
	var p connect.Portfolio
	if err := db.NewSelect().Model(&p).Where("id = ?", id).Scan(ctx); err != nil {
		return connect.Portfolio{}, fmt.Errorf("copytrading: portfolio %s: %w", id, err)
	}
	return p, positionsOf(ctx, db, &p)
}

// portfolioOf returns the portfolio of a connection with its positions;
// the error wraps sql.ErrNoRows when the connection has none yet.
func portfolioOf(ctx context.Context, db bun.IDB, connectionID uuid.UUID) (connect.Portfolio, error) {
	var p connect.Portfolio
	if err := db.NewSelect().Model(&p).Where("connection_id = ?", connectionID).Scan(ctx); err != nil {
		return connect.Portfolio{}, fmt.Errorf("copytrading: portfolio of %s: %w", connectionID, err)
	}
	return p, positionsOf(ctx, db, &p)
}

func positionsOf(ctx context.Context, db bun.IDB, p *connect.Portfolio) error {
	if err := db.NewSelect().Model(&p.Positions).Where("portfolio_id = ?", p.ID).Scan(ctx); err != nil {
		return fmt.Errorf("copytrading: positions of %s: %w", p.ID, err)
	}
	return nil
}

// heldOf returns the portfolio's quantity of symbol, zero if none.
func heldOf(p connect.Portfolio, symbol string) decimal.Decimal {
	for _, x := range p.Positions {
		if x.Symbol == symbol {
			return x.Quantity
		}
	}
	return decimal.Zero
}

// CheckStops checks the copy stop-loss of every follow with auto-sync on
// (see [Service.Run]).
func (s *Service) CheckStops(ctx context.Context) error {
	var list []Follow
	if err := s.db.NewSelect().Model(&list).Where("auto_sync AND unfollowed_at IS NULL").Scan(ctx); err != nil {
		return fmt.Errorf("copytrading: copying follows: %w", err)
	}
	for i := range list {
		if _, err := s.checkStop(ctx, &list[i]); err != nil {
			return err
		}
	}
	return nil
}

// checkStop turns f's auto-sync off, and notifies the follower, when the
// copies have lost CopyStopLossPct percent of the allocation or more;
// it reports whether it did. The copies' result is
//
//	Σ sells' filled value − Σ buys' filled value − Σ commissions
//	  + Σ per symbol (net quantity copied × latest close)
//
// over the follow's filled copies, and the allocation is the follower's
// equity × AllocationPct / 100.
func (s *Service) checkStop(ctx context.Context, f *Follow) (bool, error) {
	if f.ConnectionID == nil {
		return false, nil
	}
	var orders []connect.Order
	err := s.db.NewSelect().Model(&orders).
		Where("status = ? AND id IN (SELECT order_id FROM copy_events WHERE follow_id = ? AND order_id IS NOT NULL)", brokers.Filled, f.ID).
		Scan(ctx)
	if err != nil {
		return false, fmt.Errorf("copytrading: copies of %s: %w", f.ID, err)
	}
	if len(orders) == 0 {
		return false, nil
	}
	mine, err := portfolioOf(ctx, s.db, *f.ConnectionID)
	if err != nil {
		return false, err
	}
	allocation := mine.Equity.Mul(f.AllocationPct).Shift(-2)
	if !allocation.IsPositive() {
		return false, nil
	}
	result := decimal.Zero
	net := map[uuid.UUID]decimal.Decimal{}
	for _, o := range orders {
		if o.FilledQuantity == nil || o.FilledPrice == nil {
			continue
		}
		value := o.FilledQuantity.Mul(*o.FilledPrice)
		if o.Side == brokers.Buy {
			result, net[o.AssetID] = result.Sub(value), net[o.AssetID].Add(*o.FilledQuantity)
		} else {
			result, net[o.AssetID] = result.Add(value), net[o.AssetID].Sub(*o.FilledQuantity)
		}
		if o.Commission != nil {
			result = result.Sub(*o.Commission)
		}
	}
	md := marketdata.NewStore(s.db)
	for id, q := range net {
		if q.IsZero() {
			continue
		}
		p, err := md.LatestPrice(ctx, id)
		if err != nil {
			return false, err
		}
		result = result.Add(q.Mul(p.Close))
	}
	lossPct := result.Neg().Shift(2).Div(allocation)
	if lossPct.LessThan(f.CopyStopLossPct) {
		return false, nil
	}
	now := s.clock()
	reason := fmt.Sprintf("the copies lost %s%% of the allocation, at or over the copy stop-loss of %s%%", lossPct.StringFixed(2), f.CopyStopLossPct)
	err = s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewUpdate().Model((*Follow)(nil)).Set("auto_sync = ?, stopped_reason = ?, updated_at = ?", false, reason, now).
			Where("id = ? AND auto_sync", f.ID).Exec(ctx)
		if err != nil {
			return fmt.Errorf("copytrading: stop auto-sync: %w", err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return nil // stopped already, maybe by another instance
		}
		return notify(ctx, tx, f.UserID, KindCopyStopped, "auto-sync stopped: "+reason, now,
			map[string]string{"followId": f.ID.String(), "leaderProfileId": f.LeaderProfileID.String()})
	})
	if err != nil {
		return false, err
	}
	f.AutoSync, f.StoppedReason = false, reason
	return true, nil
}
