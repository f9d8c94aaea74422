package connect

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/marketdata"
)

// Store keeps connections, OAuth states, sync logs and portfolios. It
// works on a database or inside a transaction: build it from either.
type Store struct {
	db bun.IDB
}

// NewStore returns a Store on db, a *bun.DB or a bun.Tx.
func NewStore(db bun.IDB) *Store {
	return &Store{db: db}
}

// connectionNotFound is the error for a connection that does not exist or
// is another user's.
func connectionNotFound(id uuid.UUID) error {
	return fmt.Errorf("connect: %w", tradekit.Errorf(tradekit.ErrNotFound, "broker connection %s not found", id))
}

// InsertConnection stores a new connection.
func (s *Store) InsertConnection(ctx context.Context, c *Connection) error {
	if _, err := s.db.NewInsert().Model(c).Exec(ctx); err != nil {
		return fmt.Errorf("connect: insert connection: %w", err)
	}
	return nil
}

// Connection returns the user's connection id. The error wraps
// [tradekit.ErrNotFound] when there is none or it is another user's.
func (s *Store) Connection(ctx context.Context, userID, id uuid.UUID) (Connection, error) {
	var c Connection
	err := s.db.NewSelect().Model(&c).Where("id = ? AND user_id = ?", id, userID).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return Connection{}, connectionNotFound(id)
	}
	if err != nil {
		return Connection{}, fmt.Errorf("connect: connection %s: %w", id, err)
	}
	return c, nil
}

// connection returns connection id, whoever owns it.
func (s *Store) connection(ctx context.Context, id uuid.UUID) (Connection, error) {
	var c Connection
	err := s.db.NewSelect().Model(&c).Where("id = ?", id).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return Connection{}, connectionNotFound(id)
	}
	if err != nil {
		return Connection{}, fmt.Errorf("connect: connection %s: %w", id, err)
	}
	return c, nil
}

// Connections returns the user's connections, oldest first.
func (s *Store) Connections(ctx context.Context, userID uuid.UUID) ([]Connection, error) {
	list := []Connection{}
	if err := s.db.NewSelect().Model(&list).Where("user_id = ?", userID).Order("created_at", "id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("connect: connections: %w", err)
	}
	return list, nil
}

// CountActive returns the number of the user's active connections, each
// of which owns a portfolio.
func (s *Store) CountActive(ctx context.Context, userID uuid.UUID) (int, error) {
	n, err := s.db.NewSelect().Model((*Connection)(nil)).Where("user_id = ? AND status = ?", userID, Active).Count(ctx)
	if err != nil {
		return 0, fmt.Errorf("connect: count connections: %w", err)
	}
	return n, nil
}

// CountAllActive returns the number of active connections of every user:
// each holds tokens sealed with the server's key.
func (s *Store) CountAllActive(ctx context.Context) (int, error) {
	n, err := s.db.NewSelect().Model((*Connection)(nil)).Where("status = ?", Active).Count(ctx)
	if err != nil {
		return 0, fmt.Errorf("connect: count connections: %w", err)
	}
	return n, nil
}

// CountActiveOf returns the number of active connections of the users
// with the given ids together: an account's members share its plan's
// portfolios.
func (s *Store) CountActiveOf(ctx context.Context, userIDs []uuid.UUID) (int, error) {
	if len(userIDs) == 0 {
		return 0, nil
	}
	n, err := s.db.NewSelect().Model((*Connection)(nil)).Where("user_id IN (?) AND status = ?", bun.In(userIDs), Active).Count(ctx)
	if err != nil {
		return 0, fmt.Errorf("connect: count connections: %w", err)
	}
	return n, nil
}

// waiting returns how many of the user's connections wait for an
// authorization at now (pending, with an OAuth state neither used nor
// expired), and when the first of those states expires.
func (s *Store) waiting(ctx context.Context, userID uuid.UUID, now time.Time) (int, time.Time, error) {
	var row struct {
		N     int       `bun:"n"`
		First time.Time `bun:"first"`
	}
	err := s.db.NewRaw(`SELECT COUNT(*) AS n, COALESCE(MIN(st.expires_at), ?) AS first
		FROM broker_connections AS c JOIN broker_oauth_states AS st ON st.connection_id = c.id
		WHERE c.user_id = ? AND c.status = ? AND st.used_at IS NULL AND st.expires_at > ?`,
		now, userID, Pending, now).Scan(ctx, &row)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("connect: count pending connections: %w", err)
	}
	return row.N, row.First, nil
}

// updateConnection writes the given columns of c.
func (s *Store) updateConnection(ctx context.Context, c *Connection, columns ...string) error {
	if _, err := s.db.NewUpdate().Model(c).Column(columns...).WherePK().Exec(ctx); err != nil {
		return fmt.Errorf("connect: update connection %s: %w", c.ID, err)
	}
	return nil
}

// oauthState is a pending connection's single-use OAuth state.
type oauthState struct {
	bun.BaseModel `bun:"table:broker_oauth_states"`

	StateHash    string     `bun:"state_hash,pk"`
	ConnectionID uuid.UUID  `bun:"connection_id"`
	CodeVerifier string     `bun:"code_verifier"` // sealed
	ExpiresAt    time.Time  `bun:"expires_at"`
	UsedAt       *time.Time `bun:"used_at"`
}

// takeState marks the state with the given hash used and returns it. The
// error wraps [tradekit.ErrNotFound] when there is no such state or it
// was used before: a replay changes nothing.
func (s *Store) takeState(ctx context.Context, hash string, now time.Time) (oauthState, error) {
	res, err := s.db.NewUpdate().Model((*oauthState)(nil)).Set("used_at = ?", now).
		Where("state_hash = ? AND used_at IS NULL", hash).Exec(ctx)
	if err != nil {
		return oauthState{}, fmt.Errorf("connect: take state: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return oauthState{}, fmt.Errorf("connect: %w", tradekit.Errorf(tradekit.ErrNotFound,
			"unknown or already used OAuth state: start the connection again"))
	}
	var st oauthState
	if err := s.db.NewSelect().Model(&st).Where("state_hash = ?", hash).Scan(ctx); err != nil {
		return oauthState{}, fmt.Errorf("connect: read state: %w", err)
	}
	return st, nil
}

// claimSync marks the active connection syncing under syncID unless a
// sync younger than orphanAfter runs, and reports whether it did.
func (s *Store) claimSync(ctx context.Context, id, syncID uuid.UUID, now time.Time, orphanAfter time.Duration) (bool, error) {
	res, err := s.db.NewUpdate().Model((*Connection)(nil)).
		Set("sync_id = ?, sync_status = ?, sync_started_at = ?", syncID, Syncing, now).
		Where("id = ? AND status = ?", id, Active).
		Where("(sync_status <> ? OR sync_started_at IS NULL OR sync_started_at < ?)", Syncing, now.Add(-orphanAfter)).
		Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("connect: claim sync: %w", err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// Logs returns the sync log of the user's connection id, newest first.
func (s *Store) Logs(ctx context.Context, userID, id uuid.UUID) ([]SyncLog, error) {
	if _, err := s.Connection(ctx, userID, id); err != nil {
		return nil, err
	}
	list := []SyncLog{}
	if err := s.db.NewSelect().Model(&list).Where("connection_id = ?", id).Order("started_at DESC", "id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("connect: sync logs: %w", err)
	}
	return list, nil
}

// portfolioNotFound is the error for a portfolio that does not exist or
// is another user's.
func portfolioNotFound(id uuid.UUID) error {
	return fmt.Errorf("connect: %w", tradekit.Errorf(tradekit.ErrNotFound, "portfolio %s not found", id))
}

// Portfolios returns the user's portfolios with their positions, oldest
// first.
func (s *Store) Portfolios(ctx context.Context, userID uuid.UUID) ([]Portfolio, error) {
	list := []Portfolio{}
	if err := s.db.NewSelect().Model(&list).Where("user_id = ?", userID).Order("updated_at", "id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("connect: portfolios: %w", err)
	}
	for i := range list {
		if err := s.positions(ctx, &list[i]); err != nil {
			return nil, err
		}
	}
	return list, nil
}

// Portfolio returns the user's portfolio id with its positions. The error
// wraps [tradekit.ErrNotFound] when there is none or it is another user's.
func (s *Store) Portfolio(ctx context.Context, userID, id uuid.UUID) (Portfolio, error) {
	return s.portfolioWhere(ctx, portfolioNotFound(id), "id = ? AND user_id = ?", id, userID)
}

// PortfolioByID returns portfolio id with its positions, whoever owns
// it. The error wraps [tradekit.ErrNotFound] when there is none.
func (s *Store) PortfolioByID(ctx context.Context, id uuid.UUID) (Portfolio, error) {
	return s.portfolioWhere(ctx, portfolioNotFound(id), "id = ?", id)
}

// PortfolioOf returns the portfolio of connection id with its positions:
// its ledger. The error wraps [tradekit.ErrNotFound] before the
// connection's first sync.
func (s *Store) PortfolioOf(ctx context.Context, connectionID uuid.UUID) (Portfolio, error) {
	return s.portfolioWhere(ctx, fmt.Errorf("connect: %w", tradekit.Errorf(tradekit.ErrNotFound,
		"broker connection %s has no portfolio yet: its first sync has not finished", connectionID)),
		"connection_id = ?", connectionID)
}

// portfolioWhere returns the portfolio the condition selects, with its
// positions, or notFound when there is none.
func (s *Store) portfolioWhere(ctx context.Context, notFound error, where string, args ...any) (Portfolio, error) {
	var p Portfolio
	err := s.db.NewSelect().Model(&p).Where(where, args...).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return Portfolio{}, notFound
	}
	if err != nil {
		return Portfolio{}, fmt.Errorf("connect: portfolio: %w", err)
	}
	return p, s.positions(ctx, &p)
}

// OpenQuantity returns the quantity of symbol the connection's open
// orders on side have yet to fill.
func (s *Store) OpenQuantity(ctx context.Context, connectionID uuid.UUID, symbol string, side brokers.Side) (decimal.Decimal, error) {
	var open []Order
	err := s.db.NewSelect().Model(&open).Column("quantity", "ledger_qty").
		Where("connection_id = ? AND symbol = ? AND side = ? AND status = ?", connectionID, symbol, side, brokers.Pending).Scan(ctx)
	if err != nil {
		return decimal.Decimal{}, fmt.Errorf("connect: open orders of %s: %w", connectionID, err)
	}
	sum := decimal.Zero
	for _, o := range open {
		sum = sum.Add(o.Quantity.Sub(o.LedgerQty))
	}
	return sum, nil
}

func (s *Store) positions(ctx context.Context, p *Portfolio) error {
	p.Positions = []Position{}
	if err := s.db.NewSelect().Model(&p.Positions).Where("portfolio_id = ?", p.ID).Order("symbol").Scan(ctx); err != nil {
		return fmt.Errorf("connect: positions of portfolio %s: %w", p.ID, err)
	}
	return nil
}

// History returns the daily equity of the user's portfolio id, oldest
// first. Errors as [Store.Portfolio].
func (s *Store) History(ctx context.Context, userID, id uuid.UUID) ([]EquityPoint, error) {
	var owned bool
	owned, err := s.db.NewSelect().Model((*Portfolio)(nil)).Where("id = ? AND user_id = ?", id, userID).Exists(ctx)
	if err != nil {
		return nil, fmt.Errorf("connect: portfolio %s: %w", id, err)
	}
	if !owned {
		return nil, portfolioNotFound(id)
	}
	return s.HistoryByID(ctx, id)
}

// HistoryByID returns the daily equity of portfolio id, oldest first,
// whoever owns it; none for a portfolio that does not exist.
func (s *Store) HistoryByID(ctx context.Context, id uuid.UUID) ([]EquityPoint, error) {
	list := []EquityPoint{}
	if err := s.db.NewSelect().Model(&list).Where("portfolio_id = ?", id).Order("date").Scan(ctx); err != nil {
		return nil, fmt.Errorf("connect: history of portfolio %s: %w", id, err)
	}
	return list, nil
}

// Fills returns the fills of portfolio id, newest first (by the time they
// filled, then by the broker's id), whoever owns it; none for a portfolio
// that does not exist.
func (s *Store) Fills(ctx context.Context, id uuid.UUID) ([]Fill, error) {
	list := []Fill{}
	if err := s.db.NewSelect().Model(&list).Where("portfolio_id = ?", id).Order("filled_at DESC", "broker_id DESC").Scan(ctx); err != nil {
		return nil, fmt.Errorf("connect: fills of portfolio %s: %w", id, err)
	}
	return list, nil
}

// Providers returns the provider of each portfolio's connection, by
// portfolio id, whoever owns them. Ids with no portfolio are left out.
func (s *Store) Providers(ctx context.Context, portfolioIDs []uuid.UUID) (map[uuid.UUID]string, error) {
	out := make(map[uuid.UUID]string, len(portfolioIDs))
	if len(portfolioIDs) == 0 {
		return out, nil
	}
	var rows []struct {
		ID       uuid.UUID `bun:"id"`
		Provider string    `bun:"provider"`
	}
	err := s.db.NewSelect().TableExpr("portfolios AS p").ColumnExpr("p.id, c.provider").
		Join("JOIN broker_connections AS c ON c.id = p.connection_id").
		Where("p.id IN (?)", bun.In(portfolioIDs)).Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("connect: providers of portfolios: %w", err)
	}
	for _, r := range rows {
		out[r.ID] = r.Provider
	}
	return out, nil
}

// UpdatedAt returns when each portfolio last changed (its
// [Portfolio.UpdatedAt]: a sync or a fill), by portfolio id, whoever owns
// them. Ids with no portfolio are left out.
func (s *Store) UpdatedAt(ctx context.Context, portfolioIDs []uuid.UUID) (map[uuid.UUID]time.Time, error) {
	out := make(map[uuid.UUID]time.Time, len(portfolioIDs))
	if len(portfolioIDs) == 0 {
		return out, nil
	}
	var list []Portfolio
	err := s.db.NewSelect().Model(&list).Column("id", "updated_at").Where("id IN (?)", bun.In(portfolioIDs)).Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("connect: portfolios' updates: %w", err)
	}
	for _, p := range list {
		out[p.ID] = p.UpdatedAt
	}
	return out, nil
}

// saveFills adds the fills the portfolio p lacks, numbered from
// p.FillSeq + 1 in the order they filled, and returns p's id when it
// added any (announced on PostgreSQL's [FillsChannel] at commit), else
// uuid.Nil. Run it in a transaction under the ledger's lock, with p as
// the transaction read it.
func (s *Store) saveFills(ctx context.Context, p *Portfolio, fills []Fill) (uuid.UUID, error) {
	if len(fills) == 0 {
		return uuid.Nil, nil
	}
	ids := make([]string, len(fills))
	for i, f := range fills {
		ids[i] = f.BrokerID
	}
	var held []string
	err := s.db.NewSelect().Model((*Fill)(nil)).Column("broker_id").
		Where("portfolio_id = ? AND broker_id IN (?)", p.ID, bun.In(ids)).Scan(ctx, &held)
	if err != nil {
		return uuid.Nil, fmt.Errorf("connect: fills held: %w", err)
	}
	fresh := slices.DeleteFunc(slices.Clone(fills), func(f Fill) bool { return slices.Contains(held, f.BrokerID) })
	if len(fresh) == 0 {
		return uuid.Nil, nil
	}
	slices.SortStableFunc(fresh, func(a, b Fill) int { return a.FilledAt.Compare(b.FilledAt) })
	for i := range fresh {
		p.FillSeq++
		fresh[i].PortfolioID, fresh[i].Seq = p.ID, p.FillSeq
	}
	if _, err := s.db.NewInsert().Model(&fresh).Exec(ctx); err != nil {
		return uuid.Nil, fmt.Errorf("connect: save fills: %w", err)
	}
	if _, err := s.db.NewUpdate().Model(p).Column("fill_seq").WherePK().Exec(ctx); err != nil {
		return uuid.Nil, fmt.Errorf("connect: save fills: %w", err)
	}
	return p.ID, s.notifyFill(ctx, p.ID)
}

// saveHistory upserts the portfolio's daily equity points.
func (s *Store) saveHistory(ctx context.Context, portfolioID uuid.UUID, history []EquityPoint) error {
	for i := range history {
		history[i].PortfolioID = portfolioID
	}
	if len(history) == 0 {
		return nil
	}
	_, err := s.db.NewInsert().Model(&history).On("CONFLICT (portfolio_id, date) DO UPDATE").
		Set("equity = EXCLUDED.equity, flow = EXCLUDED.flow").Exec(ctx)
	if err != nil {
		return fmt.Errorf("connect: save history: %w", err)
	}
	return nil
}

// lastFill returns the time of the portfolio's newest fill, zero when it
// has none.
func (s *Store) lastFill(ctx context.Context, connectionID uuid.UUID) (time.Time, error) {
	var t []time.Time
	err := s.db.NewSelect().Model((*Fill)(nil)).ColumnExpr("f.filled_at").
		ModelTableExpr("portfolio_fills AS f").Join("JOIN portfolios AS p ON p.id = f.portfolio_id").
		Where("p.connection_id = ?", connectionID).OrderExpr("f.filled_at DESC").Limit(1).Scan(ctx, &t)
	if err != nil {
		return time.Time{}, fmt.Errorf("connect: last fill: %w", err)
	}
	if len(t) == 0 {
		return time.Time{}, nil
	}
	return t[0], nil
}

// dateOf returns the calendar day of t in UTC as stored.
func dateOf(t time.Time) marketdata.SQLDate {
	return marketdata.SQLDate(calendar.DateOf(t.UTC()))
}
