package copytrading

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/brokers/connect"
	"github.com/tradekit/tradekit/internal/database"
	"github.com/tradekit/tradekit/marketdata"
)

// OrderPlacer places orders for users, through their guardrails:
// *connect.Service.
type OrderPlacer interface {
	PlaceOrder(ctx context.Context, userID uuid.UUID, in connect.OrderInput) (connect.Placement, error)
}

// The copy engine's timing.
const (
	// DefaultCopyInterval is how often [Service.Run] looks for leader
	// fills to copy when nothing woke it: the safety net of the
	// wake-ups, and what finds the claims of a stopped instance.
	DefaultCopyInterval = time.Second
	// stopCheckEvery is how often Run checks every copying follow's
	// copy stop-loss, besides before each copy.
	stopCheckEvery = 10 * time.Second
	// leaseFor is how long a claim on a copy lasts unless its instance
	// renews it, which it does every leaseFor/3 while it works: a
	// stopped instance's copies are taken over within leaseFor plus a
	// pass.
	leaseFor = 5 * time.Second
	// deferFor is how long a leader's sell waits for the follower's copy
	// orders in its symbol to settle before it is sized on what is held.
	deferFor = 30 * time.Second
	// copyBatch is the most follows one pass reads a fill of.
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

	FollowID   uuid.UUID  `bun:"follow_id,pk"`
	FillID     string     `bun:"fill_id,pk"`
	Status     string     `bun:"status"`
	OrderID    *uuid.UUID `bun:"order_id"`
	Reason     string     `bun:"reason"`
	CreatedAt  time.Time  `bun:"created_at"`
	UpdatedAt  time.Time  `bun:"updated_at"`
	LeaseUntil *time.Time `bun:"lease_until"` // while claimed
}

// work is a leader fill that a follow has yet to take up.
type work struct {
	Follow      `bun:",extend"`
	Slug        string       `bun:"slug"`
	DisplayName string       `bun:"display_name"`
	LeaderPF    uuid.UUID    `bun:"leader_portfolio_id"`
	Fill        connect.Fill `bun:"embed:fill_"` // the next fill ([connect.NextFill])
	EventStatus *string      `bun:"event_status"`
	LeaseUntil  *time.Time   `bun:"event_lease_until"`
}

// Wake asks [Service.Run] for a pass now: a leader's fill was recorded.
// It never blocks.
func (s *Service) Wake() {
	select {
	case s.wake <- struct{}{}:
	default: // a pass is due already
	}
}

// Run copies leader fills until ctx is done: at once when woken
// ([Service.Wake], or on PostgreSQL a notification on
// [connect.FillsChannel] from any instance), and every
// Config.CopyInterval otherwise; it checks the copy stop-losses every 10
// seconds. Any number of instances may run it on one database: each
// (fill, follow) is taken up once.
func (s *Service) Run(ctx context.Context) {
	if s.orders == nil {
		return
	}
	if s.db.Dialect().Name() == dialect.PG {
		done := make(chan struct{})
		defer func() { <-done }() // no listener outlives Run
		go func() {
			defer close(done)
			s.listen(ctx)
		}()
	}
	t := time.NewTicker(s.copyEvery)
	defer t.Stop()
	lastStops := time.Time{}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.wake:
		}
		if time.Since(lastStops) >= stopCheckEvery {
			if err := s.CheckStops(ctx); err != nil && ctx.Err() == nil {
				s.log.Warn("copytrading: checking copy stop-losses failed", "err", err)
			}
			lastStops = time.Now()
		}
		for {
			// Again while a pass takes something up: it may have read
			// only a batch.
			n, err := s.Copy(ctx)
			if err != nil && ctx.Err() == nil {
				s.log.Warn("copytrading: copying leader fills failed", "err", err)
			}
			if err != nil || n == 0 {
				break
			}
		}
	}
}

// listen wakes Run on every fill announced on PostgreSQL until ctx is
// done. Run's ticker covers the gaps, and the whole of the work where
// notifications cannot reach this process (see [database.Listen]).
func (s *Service) listen(ctx context.Context) {
	database.Listen(ctx, s.db, connect.FillsChannel, s.copyEvery, s.log.With("service", "copytrading"),
		func(string) { s.Wake() }) // "" too: fills may have come while no one listened
}

// Copy takes up the fills of published leaders that their live follows
// have not: each follow with notifications on gets a leader-trade
// notification, and each follow with auto-sync on a mirrored order (see
// [Size]), placed through the follower's connection and guardrails.
// Fills are taken in the order they were recorded (their seq), from the
// follow's watermark (the last fill it took up), and only those that
// filled after the follow began or its auto-sync was last turned on.
//
// Each (fill, follow) is claimed in the database first, with a lease
// that the claiming instance renews while it works, so that it is taken
// up once however many instances run Copy; a follow whose next fill
// another instance holds is left alone for the pass, so that a follow's
// copies are placed in fill order. A claim whose lease lapsed (its
// instance stopped) is taken up again, and the order it places then
// carries the same client order id, so it is never placed twice. It
// returns how many pairs it took up (or passed over, for fills before
// the follow began).
func (s *Service) Copy(ctx context.Context) (int, error) {
	now := s.clock()
	var todo []work
	err := s.db.NewSelect().TableExpr("follows AS follow").ColumnExpr("follow.*").
		ColumnExpr("lp.slug, lp.display_name, lp.portfolio_id AS leader_portfolio_id").
		ColumnExpr("ce.status AS event_status, ce.lease_until AS event_lease_until").
		Join("JOIN leader_profiles AS lp ON lp.id = follow.leader_profile_id AND lp.unpublished_at IS NULL").
		// Each follow's next fill only: a follow takes its fills one at
		// a time, in order, and Run passes again while a pass takes
		// something up, so a follow with a long backlog, or one waiting,
		// never crowds the others out of a batch.
		Apply(connect.NextFill("pf", "lp.portfolio_id", "follow.copied_seq", "fill_")).
		Join("LEFT JOIN copy_events AS ce ON ce.follow_id = follow.id AND ce.fill_id = ?", connect.FillKey("pf")).
		Where("follow.unfollowed_at IS NULL AND (follow.auto_sync OR follow.notifications)").
		OrderExpr("?, follow.id", connect.FillTime("pf")).Limit(copyBatch).Scan(ctx, &todo)
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
		switch {
		case w.Fill.FilledAt.Before(w.CopySince):
			// Before the follow began: only the watermark moves.
			if err := s.finish(ctx, w, "", nil, ""); err != nil {
				return n, err
			}
			n++
			continue
		case w.EventStatus != nil && *w.EventStatus != eventClaimed:
			// Taken up already; the watermark lags behind it.
			if err := s.advance(ctx, s.db, w); err != nil {
				return n, err
			}
			n++
			continue
		case w.EventStatus != nil && w.LeaseUntil != nil && w.LeaseUntil.After(now):
			busy[w.ID] = true
			continue
		}
		ok, err := s.claim(ctx, w)
		if err != nil {
			return n, err
		}
		if !ok {
			busy[w.ID] = true
			continue
		}
		done, err := s.holding(ctx, w, func() (bool, error) { return s.take(ctx, w) })
		if err != nil {
			return n, err
		}
		if !done {
			busy[w.ID] = true
			continue
		}
		n++
	}
	return n, nil
}

// claim records that this instance takes w up, with a lease of leaseFor
// from now (not from the pass's start, which may be long past), and
// reports whether it did: false when another instance holds it.
func (s *Service) claim(ctx context.Context, w *work) (bool, error) {
	var res sql.Result
	var err error
	now := s.clock()
	until := now.Add(leaseFor)
	if w.EventStatus == nil {
		e := copyEvent{FollowID: w.ID, FillID: w.Fill.BrokerID, Status: eventClaimed, CreatedAt: now, UpdatedAt: now, LeaseUntil: &until}
		res, err = s.db.NewInsert().Model(&e).On("CONFLICT (follow_id, fill_id) DO NOTHING").Exec(ctx)
	} else {
		res, err = s.db.NewUpdate().Model((*copyEvent)(nil)).Set("updated_at = ?, lease_until = ?", now, until).
			Where("follow_id = ? AND fill_id = ? AND status = ?", w.ID, w.Fill.BrokerID, eventClaimed).
			Where("(lease_until IS NULL OR lease_until < ?)", now).Exec(ctx)
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

// holding runs f while renewing w's lease every leaseFor/3, and returns
// what f returns.
func (s *Service) holding(ctx context.Context, w *work, f func() (bool, error)) (bool, error) {
	stop := make(chan struct{})
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		t := time.NewTicker(leaseFor / 3)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			now := s.clock()
			_, err := s.db.NewUpdate().Model((*copyEvent)(nil)).Set("lease_until = ?", now.Add(leaseFor)).
				Where("follow_id = ? AND fill_id = ? AND status = ?", w.ID, w.Fill.BrokerID, eventClaimed).Exec(ctx)
			if err != nil && ctx.Err() == nil {
				s.log.Warn("copytrading: renewing a copy's lease failed", "follow_id", w.ID, "fill_id", w.Fill.BrokerID, "err", err)
			}
		}
	}()
	done, err := f()
	close(stop)
	<-renewed
	return done, err
}

// take handles the claimed fill w for its follow, and reports whether it
// is done with it: false when the copy must wait (a sell while the
// follower's earlier copies in its symbol are still open), in which case
// the claim is released for a later pass.
//
// The leader-trade notification says what became of the copy after what
// the leader did (see [copyNote]); a rejected copy is notified on its own
// too, with kind [KindCopyRejected], whatever the follow's notifications.
func (s *Service) take(ctx context.Context, w *work) (bool, error) {
	trade := fmt.Sprintf("%s (%s) %s %s %s at %s", w.DisplayName, w.Slug, pastTense(w.Fill.Side), w.Fill.Quantity, w.Fill.Symbol, w.Fill.Price)
	data := map[string]any{"followId": w.ID.String(), "leaderProfileId": w.LeaderProfileID.String(), "fillId": w.Fill.BrokerID}
	if !w.AutoSync {
		return true, s.finish(ctx, w, eventNotified, nil, "", s.notice(w, KindLeaderTrade, trade, data))
	}
	skip := func(reason string) error {
		c := copyNote{status: eventSkipped, reason: reason}
		return s.finish(ctx, w, eventSkipped, nil, reason, s.notice(w, KindLeaderTrade, trade+"; "+c.text(), c.data(data)))
	}
	stopped, err := s.checkStop(ctx, &w.Follow)
	if err != nil {
		return false, err
	}
	if stopped {
		return true, skip("auto-sync stopped by the copy stop-loss")
	}
	in, reason, wait, err := s.size(ctx, w)
	if err != nil {
		return false, err
	}
	if wait {
		return false, s.release(ctx, w)
	}
	if reason != "" {
		return true, skip(reason)
	}
	c := copyNote{side: in.Order.Side, quantity: in.Order.Quantity, symbol: w.Fill.Symbol}
	p, err := s.orders.PlaceOrder(ctx, w.UserID, in)
	switch {
	case err == nil && p.Order.Status != brokers.Rejected:
		c.status, c.orderID = eventPlaced, &p.Order.ID
		if s.placed != nil {
			s.placed(s.clock().Sub(w.Fill.FilledAt))
		}
		return true, s.finish(ctx, w, eventPlaced, &p.Order.ID, "", s.notice(w, KindLeaderTrade, trade+"; "+c.text(), c.data(data)))
	case err == nil:
		reason, c.orderID = p.Order.RejectReason, &p.Order.ID
	default:
		// The broker's failures in connect's words; any other error
		// leaves the copy to a later pass.
		if reason = connect.FailureReason(err); reason == "" {
			return false, err
		}
	}
	c.status, c.reason = eventRejected, reason
	msg := fmt.Sprintf("copying %s (%s) was rejected: %s", trade, c.order(), reason)
	return true, s.finish(ctx, w, eventRejected, c.orderID, reason, s.notice(w, KindLeaderTrade, trade+"; "+c.text(), c.data(data)),
		&notice{kind: KindCopyRejected, message: msg, data: c.data(data)})
}

// copyNote is what became of a copy, as its notifications tell it.
type copyNote struct {
	status   string // eventPlaced, eventRejected or eventSkipped
	side     brokers.Side
	quantity decimal.Decimal
	symbol   string
	orderID  *uuid.UUID // the copy's order, placed or rejected by the broker
	reason   string     // why it was skipped or rejected
}

// order returns the copy's order in words: "a market buy of 2 ACME".
func (c copyNote) order() string {
	return fmt.Sprintf("a market %s of %s %s", c.side, c.quantity, c.symbol)
}

// text returns the copy's outcome for the leader-trade notification:
//
//	copied: a market buy of 2 ACME, order <id>
//	not copied: <reason>
//	the copy, a market buy of 2 ACME, was rejected: <reason>
func (c copyNote) text() string {
	switch c.status {
	case eventPlaced:
		return fmt.Sprintf("copied: %s, order %s", c.order(), c.orderID)
	case eventRejected:
		return fmt.Sprintf("the copy, %s, was rejected: %s", c.order(), c.reason)
	}
	return "not copied: " + c.reason
}

// data returns the notification data base with the copy's outcome:
// copyStatus ("placed", "rejected" or "skipped"), and as they apply
// copySide, copyQuantity (a JSON number, digit for digit), orderId and
// reason.
func (c copyNote) data(base map[string]any) map[string]any {
	out := maps.Clone(base)
	out["copyStatus"] = c.status
	if c.status != eventSkipped {
		out["copySide"], out["copyQuantity"] = string(c.side), json.Number(c.quantity.String())
	}
	if c.orderID != nil {
		out["orderId"] = c.orderID.String()
	}
	if c.reason != "" {
		out["reason"] = c.reason
	}
	return out
}

// notice is a notification to write with a copy event.
type notice struct {
	kind, message string
	data          map[string]any
}

// notice returns the notification of kind for w's follower, nil when the
// follow has notifications off.
func (s *Service) notice(w *work, kind, message string, data map[string]any) *notice {
	if !w.Notifications {
		return nil
	}
	return &notice{kind: kind, message: message, data: maps.Clone(data)}
}

// finish records how w was taken up (status "" records nothing but the
// watermark), with its notifications, and moves the follow's watermark
// past w, in one transaction.
func (s *Service) finish(ctx context.Context, w *work, status string, orderID *uuid.UUID, reason string, notices ...*notice) error {
	now := s.clock()
	return s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if status != "" {
			_, err := tx.NewUpdate().Model((*copyEvent)(nil)).
				Set("status = ?, order_id = ?, reason = ?, updated_at = ?, lease_until = NULL", status, orderID, reason, now).
				Where("follow_id = ? AND fill_id = ?", w.ID, w.Fill.BrokerID).Exec(ctx)
			if err != nil {
				return fmt.Errorf("copytrading: record a copy: %w", err)
			}
		}
		for i, n := range notices {
			if n != nil {
				// A microsecond apart, so that they list in this order.
				at := now.Add(time.Duration(i) * time.Microsecond)
				if err := notify(ctx, tx, w.UserID, n.kind, n.message, at, n.data); err != nil {
					return err
				}
			}
		}
		return s.advance(ctx, tx, w)
	})
}

// advance moves w's follow's watermark to w's fill.
func (s *Service) advance(ctx context.Context, db bun.IDB, w *work) error {
	_, err := db.NewUpdate().Model((*Follow)(nil)).Set("copied_seq = ?", w.Fill.Seq).
		Where("id = ? AND copied_seq < ?", w.ID, w.Fill.Seq).Exec(ctx)
	if err != nil {
		return fmt.Errorf("copytrading: move the watermark: %w", err)
	}
	return nil
}

// release gives up the claim on w, so that a later pass takes it up.
func (s *Service) release(ctx context.Context, w *work) error {
	_, err := s.db.NewDelete().Model((*copyEvent)(nil)).
		Where("follow_id = ? AND fill_id = ? AND status = ?", w.ID, w.Fill.BrokerID, eventClaimed).Exec(ctx)
	if err != nil {
		return fmt.Errorf("copytrading: release a copy: %w", err)
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

// size returns the mirrored order of w (see [Size]), or the reason there
// is none, from the ledgers as of the fill: the leader's position before
// it, the follower's equity, its position less its open sells, and the
// net quantity the follow's filled copies bought in the symbol. A sell
// waits (wait true) while the follow has copy orders in the symbol still
// open, for up to deferFor after the fill: they are what it sells.
func (s *Service) size(ctx context.Context, w *work) (in connect.OrderInput, reason string, wait bool, err error) {
	if w.ConnectionID == nil {
		return connect.OrderInput{}, "the follow has no connection to trade through", false, nil
	}
	st := connect.NewStore(s.db)
	leader, err := st.PortfolioByID(ctx, w.LeaderPF)
	if err != nil {
		return connect.OrderInput{}, "", false, err
	}
	mine, err := st.PortfolioOf(ctx, *w.ConnectionID)
	if errors.Is(err, tradekit.ErrNotFound) {
		return connect.OrderInput{}, "your connection has not synced yet", false, nil
	}
	if err != nil {
		return connect.OrderInput{}, "", false, err
	}
	asset, err := marketdata.NewStore(s.db).AssetBySymbol(ctx, w.Fill.Symbol)
	if errors.Is(err, tradekit.ErrNotFound) {
		return connect.OrderInput{}, fmt.Sprintf("%s is not a Tradekit asset", w.Fill.Symbol), false, nil
	}
	if err != nil {
		return connect.OrderInput{}, "", false, err
	}
	copies, err := s.copies(ctx, w.ID, asset.ID)
	if err != nil {
		return connect.OrderInput{}, "", false, err
	}
	side := brokers.Side(w.Fill.Side)
	if side == brokers.Sell && copies.open && s.clock().Sub(w.Fill.FilledAt) < deferFor {
		return connect.OrderInput{}, "", true, nil
	}
	open, err := st.OpenQuantity(ctx, *w.ConnectionID, w.Fill.Symbol, brokers.Sell)
	if err != nil {
		return connect.OrderInput{}, "", false, err
	}
	held := heldOf(mine, w.Fill.Symbol)
	in2 := SizeInput{Side: side, Quantity: w.Fill.Quantity, Price: w.Fill.Price, LeaderEquity: leader.Equity,
		Equity: mine.Equity, Controls: w.Controls, Held: held.Sub(open), Copied: copies.net, Symbol: w.Fill.Symbol}
	if side == brokers.Buy {
		in2.Held = held
	}
	// The leader's position before the fill: as its ledger recorded it,
	// else (a fill a sync found) as the portfolio holds it now.
	before := heldOf(leader, w.Fill.Symbol)
	if w.Fill.PositionAfter != nil {
		before = *w.Fill.PositionAfter
	}
	if side == brokers.Sell {
		before = before.Add(w.Fill.Quantity)
	} else {
		before = before.Sub(w.Fill.Quantity)
	}
	in2.LeaderBefore = before
	qty, reason := Size(in2)
	if reason != "" {
		return connect.OrderInput{}, reason, false, nil
	}
	return connect.OrderInput{ConnectionID: *w.ConnectionID, AssetID: asset.ID,
		Order:         brokers.Order{Side: side, Type: brokers.Market, Quantity: qty},
		ClientOrderID: copyOrderID(w.ID, w.Fill.BrokerID)}, "", false, nil
}

// copied is what a follow's copies hold in one asset.
type copied struct {
	net  decimal.Decimal // bought less sold, by the filled copies
	open bool            // some copy order is still open
}

// copyOrders returns the query of the ids of the follow's copy orders,
// placed or rejected by the broker, to run as a subquery.
func (s *Service) copyOrders(followID uuid.UUID) *bun.SelectQuery {
	return s.db.NewSelect().ColumnExpr("order_id").TableExpr("copy_events").
		Where("follow_id = ? AND order_id IS NOT NULL", followID)
}

// copies returns what the follow's copy orders in the asset hold.
func (s *Service) copies(ctx context.Context, followID, assetID uuid.UUID) (copied, error) {
	orders, err := connect.NewStore(s.db).AssetOrders(ctx, s.copyOrders(followID), assetID)
	if err != nil {
		return copied{}, fmt.Errorf("copytrading: copies of %s: %w", followID, err)
	}
	var c copied
	for _, o := range orders {
		if o.Status == brokers.Pending {
			c.open = true
		}
		if o.FilledQuantity == nil {
			continue
		}
		if o.Side == brokers.Buy {
			c.net = c.net.Add(*o.FilledQuantity)
		} else {
			c.net = c.net.Sub(*o.FilledQuantity)
		}
	}
	return c, nil
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
	st := connect.NewStore(s.db)
	orders, err := st.FilledOrders(ctx, s.copyOrders(f.ID))
	if err != nil {
		return false, fmt.Errorf("copytrading: copies of %s: %w", f.ID, err)
	}
	if len(orders) == 0 {
		return false, nil
	}
	mine, err := st.PortfolioOf(ctx, *f.ConnectionID)
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
			map[string]any{"followId": f.ID.String(), "leaderProfileId": f.LeaderProfileID.String()})
	})
	if err != nil {
		return false, err
	}
	f.AutoSync, f.StoppedReason = false, reason
	return true, nil
}
