package connect

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"reflect"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/brokers"
)

// This file holds what other packages need of connect's tables inside
// their own statements and transactions (package copytrading's copy
// engine and demo leaders), so that they name none of them: a join to
// compose into a query, reads that take a subquery of order ids, and the
// storing of a whole account's history.

// NextFill returns a function for [bun.SelectQuery.Apply] that joins the
// query, as alias, to the fill that a reader of a portfolio's fills takes
// next, and selects the fill's columns each under its name prefixed with
// prefix: what a field of type [Fill] tagged bun:"embed:<prefix>" of the
// reader's row scans. The fill is, of the portfolio whose id is
// portfolioID, the one with the least [Fill.Seq] above afterSeq, the
// reader's watermark. It is an inner join: a row with no fill after its
// watermark drops out. The fills' index on (portfolio_id, seq) finds each
// row's fill in one probe. [FillKey] and [FillTime] name the fill's id
// and time in the rest of the query.
//
// alias, portfolioID, afterSeq and prefix are written into the statement
// as they are: pass a table alias, columns of the query and a constant,
// never input.
//
// The join, for alias pf, portfolioID lp.portfolio_id and afterSeq
// follow.copied_seq:
//
//	JOIN portfolio_fills AS pf ON pf.portfolio_id = lp.portfolio_id AND pf.seq =
//	  (SELECT min(nf.seq) FROM portfolio_fills AS nf
//	   WHERE nf.portfolio_id = lp.portfolio_id AND nf.seq > follow.copied_seq)
func NextFill(alias, portfolioID, afterSeq, prefix string) func(*bun.SelectQuery) *bun.SelectQuery {
	return func(q *bun.SelectQuery) *bun.SelectQuery {
		for _, f := range q.DB().Table(reflect.TypeFor[Fill]()).Fields {
			q = q.ColumnExpr("?.? AS ?", bun.Safe(alias), bun.Ident(f.Name), bun.Ident(prefix+f.Name))
		}
		return q.Join("JOIN portfolio_fills AS ? ON ?.portfolio_id = ? AND ?.seq = "+
			"(SELECT min(nf.seq) FROM portfolio_fills AS nf WHERE nf.portfolio_id = ? AND nf.seq > ?)",
			bun.Safe(alias), bun.Safe(alias), bun.Safe(portfolioID), bun.Safe(alias), bun.Safe(portfolioID), bun.Safe(afterSeq))
	}
}

// FillKey returns the column of the fill's id ([Fill.BrokerID], unique in
// its portfolio) in a query joined by [NextFill] as alias, for joining
// rows keyed by the fill.
func FillKey(alias string) bun.Safe { return bun.Safe(alias + ".broker_id") }

// FillTime returns the column of the fill's time ([Fill.FilledAt]) in a
// query joined by [NextFill] as alias, for ordering by it.
func FillTime(alias string) bun.Safe { return bun.Safe(alias + ".filled_at") }

// AssetOrders returns the orders in asset assetID whose ids the query ids
// selects, whoever owns them, with only Side, Status and FilledQuantity
// read (the other fields are zero): what they hold in the asset, and
// whether one is still open. ids selects one column of order ids; it runs
// as a subquery of the same statement, so the read is one snapshot.
func (s *Store) AssetOrders(ctx context.Context, ids *bun.SelectQuery, assetID uuid.UUID) ([]Order, error) {
	var list []Order
	err := s.db.NewSelect().Model(&list).Column("side", "status", "filled_quantity").
		Where("asset_id = ? AND id IN (?)", assetID, ids).Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("connect: orders in asset %s: %w", assetID, err)
	}
	return list, nil
}

// FilledOrders returns the filled orders whose ids the query ids selects,
// whoever owns them, whole. ids selects one column of order ids; it runs
// as a subquery of the same statement.
func (s *Store) FilledOrders(ctx context.Context, ids *bun.SelectQuery) ([]Order, error) {
	var list []Order
	err := s.db.NewSelect().Model(&list).Where("status = ? AND id IN (?)", brokers.Filled, ids).Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("connect: filled orders: %w", err)
	}
	return list, nil
}

// ConnectionOwner returns the user who owns connection id. The error
// wraps [tradekit.ErrNotFound] when there is no such connection.
func (s *Store) ConnectionOwner(ctx context.Context, id uuid.UUID) (uuid.UUID, error) {
	var c Connection
	err := s.db.NewSelect().Model(&c).Column("user_id").Where("id = ?", id).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return uuid.Nil, connectionNotFound(id)
	}
	if err != nil {
		return uuid.Nil, fmt.Errorf("connect: connection %s: %w", id, err)
	}
	return c.UserID, nil
}

// AccountHistory is a broker account as a sync would leave it, to be
// stored whole by [Store.InsertAccountHistory]: the connection, its
// portfolio with the positions (Portfolio.Positions), the account's
// fills in the order they were recorded, and its daily equity.
type AccountHistory struct {
	Connection Connection
	Portfolio  Portfolio
	Fills      []Fill
	Equity     []EquityPoint
}

// InsertAccountHistory stores h as it is: the connection, then its
// portfolio, the portfolio's positions, fills and equity points. It
// first ties them together in h: the portfolio's UserID and ConnectionID
// become the connection's, the PortfolioID of every position, fill and
// equity point the portfolio's, and the fills are numbered from 1 in
// their order (their Seq), the portfolio's FillSeq being the last. It
// announces no fill ([FillsChannel]): the fills are history.
//
// Build the Store on a transaction to store all of it or nothing; a
// connection, portfolio, position, fill or equity point already stored
// fails the insert.
func (s *Store) InsertAccountHistory(ctx context.Context, h *AccountHistory) error {
	c, p := &h.Connection, &h.Portfolio
	p.UserID, p.ConnectionID, p.FillSeq = c.UserID, c.ID, int64(len(h.Fills))
	for i := range p.Positions {
		p.Positions[i].PortfolioID = p.ID
	}
	for i := range h.Fills {
		h.Fills[i].PortfolioID, h.Fills[i].Seq = p.ID, int64(i+1)
	}
	for i := range h.Equity {
		h.Equity[i].PortfolioID = p.ID
	}
	if err := s.InsertConnection(ctx, c); err != nil {
		return err
	}
	if _, err := s.db.NewInsert().Model(p).Exec(ctx); err != nil {
		return fmt.Errorf("connect: insert portfolio: %w", err)
	}
	if len(p.Positions) > 0 {
		if _, err := s.db.NewInsert().Model(&p.Positions).Exec(ctx); err != nil {
			return fmt.Errorf("connect: insert positions: %w", err)
		}
	}
	if len(h.Fills) > 0 {
		if _, err := s.db.NewInsert().Model(&h.Fills).Exec(ctx); err != nil {
			return fmt.Errorf("connect: insert fills: %w", err)
		}
	}
	if len(h.Equity) > 0 {
		if _, err := s.db.NewInsert().Model(&h.Equity).Exec(ctx); err != nil {
			return fmt.Errorf("connect: insert equity: %w", err)
		}
	}
	return nil
}
