package connect

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/internal/database"
	"github.com/tradekit/tradekit/marketdata"
)

// StartSync starts a sync of the user's connection id in the background
// and returns its log entry, status syncing. When a sync of it already
// runs, it returns that one. Syncing a pending or disconnected connection
// is an error wrapping [tradekit.ErrConflict].
func (s *Service) StartSync(ctx context.Context, userID, id uuid.UUID) (SyncLog, error) {
	st := NewStore(s.db)
	c, err := st.Connection(ctx, userID, id)
	if err != nil {
		return SyncLog{}, err
	}
	if c.Status != Active {
		return SyncLog{}, fmt.Errorf("connect: %w", tradekit.Errorf(tradekit.ErrConflict,
			"the connection is %s: only an active connection syncs", c.Status))
	}
	log, started, err := s.claim(ctx, c)
	if err != nil || !started {
		return log, err
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.runSync(context.WithoutCancel(ctx), c.ID, log)
	}()
	return log, nil
}

// claim marks c syncing and writes the log entry of a new sync; when a
// sync of c already runs it returns that one, started false.
func (s *Service) claim(ctx context.Context, c Connection) (log SyncLog, started bool, err error) {
	now := s.cfg.Now().UTC()
	log = SyncLog{ID: uuid.New(), ConnectionID: c.ID, Status: Syncing, StartedAt: now}
	err = s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		ok, err := NewStore(tx).claimSync(ctx, c.ID, log.ID, now, s.cfg.SyncTimeout)
		if err != nil || !ok {
			return err
		}
		started = true
		if _, err := tx.NewInsert().Model(&log).Exec(ctx); err != nil {
			return fmt.Errorf("connect: insert sync log: %w", err)
		}
		return nil
	})
	if err != nil || started {
		return log, started, err
	}
	// Another sync runs: answer with it.
	cur, err := NewStore(s.db).connection(ctx, c.ID)
	if err != nil {
		return SyncLog{}, false, err
	}
	if cur.SyncID == nil || cur.Status != Active {
		return SyncLog{}, false, fmt.Errorf("connect: %w", tradekit.Errorf(tradekit.ErrConflict, "the connection is %s", cur.Status))
	}
	err = s.db.NewSelect().Model(&log).Where("id = ?", *cur.SyncID).Scan(ctx)
	if err != nil {
		return SyncLog{}, false, fmt.Errorf("connect: running sync: %w", err)
	}
	return log, false, nil
}

// runSync pulls the account into the connection's portfolio and closes
// the log entry, completed or failed.
func (s *Service) runSync(ctx context.Context, id uuid.UUID, log SyncLog) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.SyncTimeout-5*time.Second)
	defer cancel()
	start := time.Now()
	n, err := s.pull(ctx, id)
	s.cfg.Observe.synced(start, err)
	now := s.cfg.Now().UTC()
	log.CompletedAt = &now
	c := Connection{ID: id, SyncStatus: Completed, UpdatedAt: now}
	columns := []string{"sync_status", "last_error", "updated_at"}
	if err != nil {
		log.Status, log.Error = Failed, publicSyncError(err)
		c.SyncStatus, c.LastError = Failed, log.Error
		s.cfg.Logger.Warn("broker sync failed", "connection_id", id, "sync_id", log.ID, "err", err)
	} else {
		log.Status, log.PositionsSynced = Completed, &n
		c.LastSyncAt = &now
		columns = append(columns, "last_sync_at")
	}
	wctx, wcancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer wcancel()
	err = s.db.RunInTx(wctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewUpdate().Model(&log).Column("status", "positions_synced", "error", "completed_at").WherePK().Exec(ctx); err != nil {
			return err
		}
		// Only the sync that holds the connection closes it.
		_, err := tx.NewUpdate().Model(&c).Column(columns...).WherePK().Where("sync_id = ?", log.ID).Exec(ctx)
		return err
	})
	if err != nil {
		s.cfg.Logger.Error("recording a broker sync failed", "connection_id", id, "sync_id", log.ID, "err", err)
	}
}

// publicSyncError is what a failed sync's log tells the user.
// It words the broker's failures as everyone does ([FailureReason]); a
// sync that ran out of time failed as an unreachable broker does.
func publicSyncError(err error) string {
	reason := FailureReason(err)
	switch {
	case reason == UnavailableReason, reason == "" && errors.Is(err, context.DeadlineExceeded):
		return UnavailableReason + "; the next sync will try again"
	case reason != "":
		return reason
	}
	return "the sync failed on the server; the next sync will try again"
}

// pull reads the account, positions, recent fills and daily equity of
// connection id into its portfolio and returns the number of positions.
//
// It reconciles the ledger with the broker: the portfolio's cash and
// positions become the broker's, and each open order's share of them
// (its fills so far) is noted, so that its later fills are applied once.
// The differences the ledger had are logged and kept on the connection.
// The broker answers in several requests, so the open orders are read
// before and after the account and positions, and the whole read again
// while they moved (at most three times). When a fill was applied to the
// ledger while the broker was being read, the ledger is left as it is for
// the next sync; the fills and the equity history are saved either way.
//
// Its steps: the ledger's version and open orders ([Service.ledgerOf]),
// the broker's account ([Service.readBroker]), the portfolio it makes
// ([Service.brokerPortfolio]), its fills and equity ([fillsOf],
// [equityOf]), and the reconciliation with the ledger in one transaction
// ([Service.storePull]).
func (s *Service) pull(ctx context.Context, id uuid.UUID) (int, error) {
	c, err := NewStore(s.db).connection(ctx, id)
	if err != nil {
		return 0, err
	}
	tr, err := s.traderOf(&c)
	if err != nil {
		return 0, err
	}
	version, open, err := s.ledgerOf(ctx, c.ID)
	if err != nil {
		return 0, err
	}
	r, err := s.readBroker(ctx, tr, c.ID, open)
	if err != nil {
		return 0, err
	}
	now := s.now()
	pf, err := s.brokerPortfolio(ctx, c, r.account, r.positions, now)
	if err != nil {
		return 0, err
	}
	recorded, err := s.storePull(ctx, c, version, r, &pf, now)
	if err != nil {
		return 0, err
	}
	if recorded != uuid.Nil && s.cfg.OnFill != nil {
		s.cfg.OnFill(recorded)
	}
	return len(pf.Positions), nil
}

// ledgerOf returns the version of connection id's ledger, -1 when it has
// none yet, and its open orders.
func (s *Service) ledgerOf(ctx context.Context, id uuid.UUID) (int64, []Order, error) {
	version := int64(-1) // no ledger yet
	var cur Portfolio
	if err := s.db.NewSelect().Model(&cur).Column("version").Where("connection_id = ?", id).Scan(ctx); err == nil {
		version = cur.Version
	} else if !errors.Is(err, sql.ErrNoRows) {
		return 0, nil, fmt.Errorf("connect: the ledger of %s: %w", id, err)
	}
	var open []Order
	err := s.db.NewSelect().Model(&open).Where("connection_id = ? AND status = ?", id, brokers.Pending).Scan(ctx)
	if err != nil {
		return 0, nil, fmt.Errorf("connect: open orders of %s: %w", id, err)
	}
	return version, open, nil
}

// brokerRead is what a pull reads from the broker.
type brokerRead struct {
	account    brokers.Account
	positions  []brokers.Position
	states     map[uuid.UUID]brokers.OrderState // the open orders, as the broker holds them
	consistent bool                             // the account, positions and orders were read unmoved ([snapshot])
	fills      []Fill                           // the recent fills ([fillsOf])
	equity     []EquityPoint                    // the daily equity ([equityOf])
}

// readBroker reads connection id's account from its broker tr: a
// snapshot of the account, positions and open orders, the fills since a
// month before the last fill held (a year back for a first pull), and
// the equity history.
func (s *Service) readBroker(ctx context.Context, tr brokers.Trader, id uuid.UUID, open []Order) (brokerRead, error) {
	var r brokerRead
	var err error
	r.account, r.positions, r.states, r.consistent, err = snapshot(ctx, tr, func(ctx context.Context) (map[uuid.UUID]brokers.OrderState, error) {
		return orderStates(ctx, tr, open)
	})
	if err != nil {
		return brokerRead{}, err
	}
	after, err := NewStore(s.db).lastFill(ctx, id)
	if err != nil {
		return brokerRead{}, err
	}
	if after.IsZero() {
		after = s.cfg.Now().AddDate(-1, 0, 0)
	} else {
		// The broker filters orders by when they were submitted: look a
		// month behind the last fill, so an order submitted before it
		// and filled since is not missed. Fills already held are kept
		// once (by the broker's id).
		after = after.AddDate(0, -1, 0)
	}
	fills, err := tr.Fills(ctx, after)
	if err != nil {
		return brokerRead{}, err
	}
	history, err := tr.History(ctx)
	if err != nil {
		return brokerRead{}, err
	}
	r.fills, r.equity = fillsOf(fills), equityOf(history, r.account, s.cfg.Now())
	return r, nil
}

// brokerPortfolio returns connection c's portfolio as the broker's
// account and positions make it, a new one (the reconciliation keeps the
// ledger's id), each position with its asset when Tradekit lists its
// symbol.
func (s *Service) brokerPortfolio(ctx context.Context, c Connection, acct brokers.Account, positions []brokers.Position, now time.Time) (Portfolio, error) {
	pf := Portfolio{ID: uuid.New(), UserID: c.UserID, ConnectionID: c.ID, Currency: acct.Currency, Cash: acct.Cash,
		Equity: acct.Equity, UpdatedAt: now}
	md := marketdata.NewStore(s.db)
	for _, x := range positions {
		pos := Position{Symbol: x.Symbol, Quantity: x.Quantity, AverageCost: x.AvgEntryPrice}
		if !x.MarketValue.IsZero() || !x.Quantity.IsZero() {
			v := x.MarketValue
			pos.BrokerValue = &v
		}
		if a, err := md.AssetBySymbol(ctx, x.Symbol); err == nil {
			pos.AssetID = &a.ID
		} else if !errors.Is(err, tradekit.ErrNotFound) {
			return Portfolio{}, err
		}
		pf.Positions = append(pf.Positions, pos)
	}
	return pf, nil
}

// fillsOf returns the broker's fills as the ledger stores them.
func fillsOf(fills []brokers.Fill) []Fill {
	fs := make([]Fill, len(fills))
	for i, f := range fills {
		fs[i] = Fill{BrokerID: f.ID, Symbol: f.Symbol, Side: string(f.Side), Quantity: f.Quantity, Price: f.Price, FilledAt: f.Time.UTC()}
	}
	return fs
}

// equityOf returns the broker's equity history as the ledger stores it:
// today's equity is the account's, whatever the history's last bar;
// today's flow is the bar's.
func equityOf(history []brokers.EquityPoint, acct brokers.Account, now time.Time) []EquityPoint {
	hs := make([]EquityPoint, 0, len(history))
	for _, h := range history {
		hs = append(hs, EquityPoint{Date: dateOf(h.Date), Equity: h.Equity, Flow: h.Flow})
	}
	today := EquityPoint{Date: dateOf(now), Equity: acct.Equity}
	hs = slices.DeleteFunc(hs, func(e EquityPoint) bool {
		if e.Date == today.Date {
			today.Flow = e.Flow
			return true
		}
		return false
	})
	return append(hs, today)
}

// storePull reconciles connection c's ledger with the broker's portfolio
// pf, under the user's and the ledger's locks, when the ledger is still
// at the version the pull began from (version) and the broker's read was
// consistent, or when there is no ledger yet; otherwise pf becomes the
// ledger's, left for the next sync. It saves r's fills and equity either
// way, and returns the portfolio of a fill it recorded, uuid.Nil if none.
func (s *Service) storePull(ctx context.Context, c Connection, version int64, r brokerRead, pf *Portfolio, now time.Time) (uuid.UUID, error) {
	var recorded uuid.UUID
	err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := database.LockUser(ctx, tx, c.UserID); err != nil {
			return err
		}
		if err := lockLedger(ctx, tx, c.ID); err != nil {
			return err
		}
		st := NewStore(tx)
		b, err := st.book(ctx, c.ID, c.UserID, now)
		exists := err == nil
		if err != nil && !errors.Is(err, errNoLedger) {
			return err
		}
		if !exists || r.consistent && b.Version == version {
			d, err := st.reconcile(ctx, &c, b.Portfolio, exists, pf, r.states, now)
			if err != nil {
				return err
			}
			if d != "" {
				s.cfg.Logger.Warn("the ledger differed from the broker; the broker's account is taken",
					"connection_id", c.ID, "differences", d)
			}
		} else {
			*pf = b.Portfolio
		}
		if recorded, err = st.saveFills(ctx, pf, r.fills); err != nil {
			return err
		}
		return st.saveHistory(ctx, pf.ID, r.equity)
	})
	return recorded, err
}

// orderStates reads the orders from the broker: by their id there, or,
// for one whose acknowledgement was lost, by the client order id it was
// sent with. An order the broker does not hold is left out.
func orderStates(ctx context.Context, tr brokers.Trader, orders []Order) (map[uuid.UUID]brokers.OrderState, error) {
	out := make(map[uuid.UUID]brokers.OrderState, len(orders))
	for _, o := range orders {
		var st brokers.OrderState
		var err error
		if o.BrokerOrderID != nil {
			st, err = tr.Order(ctx, *o.BrokerOrderID)
		} else {
			st, err = tr.OrderByClientID(ctx, o.ID.String())
		}
		if errors.Is(err, tradekit.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out[o.ID] = st
	}
	return out, nil
}

// snapshot reads the account, its positions and, when open is not nil,
// the states of its open orders, as of one moment. The broker answers
// them in separate requests, so a fill between them would pair the cash
// from before it with the positions from after it, and the portfolio
// would hold shares nobody paid for until the next sync. The account and
// the open orders are read again after the positions, and the whole read
// again while the cash or an order's fills moved in between (at most
// three times; a busier account keeps the last read, with consistent
// false, which the next sync corrects).
func snapshot(ctx context.Context, b brokers.Broker, open func(context.Context) (map[uuid.UUID]brokers.OrderState, error)) (
	acct brokers.Account, positions []brokers.Position, states map[uuid.UUID]brokers.OrderState, consistent bool, err error) {
	if open == nil {
		open = func(context.Context) (map[uuid.UUID]brokers.OrderState, error) { return nil, nil }
	}
	if acct, err = b.Account(ctx); err != nil {
		return
	}
	if states, err = open(ctx); err != nil {
		return
	}
	for try := 1; ; try++ {
		if positions, err = b.Positions(ctx); err != nil {
			return
		}
		again, err := b.Account(ctx)
		if err != nil {
			return brokers.Account{}, nil, nil, false, err
		}
		later, err := open(ctx)
		if err != nil {
			return brokers.Account{}, nil, nil, false, err
		}
		consistent = again.Cash.Equal(acct.Cash) && sameFills(states, later)
		if consistent || try == 3 {
			return again, positions, later, consistent, nil
		}
		acct, states = again, later
	}
}

// sameFills reports whether the orders in a and b have the same fills.
func sameFills(a, b map[uuid.UUID]brokers.OrderState) bool {
	if len(a) != len(b) {
		return false
	}
	for id, x := range a {
		y, ok := b[id]
		if !ok || !x.FilledQuantity.Equal(y.FilledQuantity) || x.Status != y.Status {
			return false
		}
	}
	return true
}
