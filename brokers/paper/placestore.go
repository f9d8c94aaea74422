package paper

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
	"github.com/uptrace/bun/schema"

	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/internal/database"
	"github.com/tradekit/tradekit/marketdata"
)

// lockAccount locks the account who names until the transaction ends
// and takes the next n numbers of its orders, in one statement: the
// returned account's OrderSeq is the last number taken, so the orders are
// numbered OrderSeq−n+1 to OrderSeq (see [insertOrders]). who names the
// account by its ID, or when token is set by an access token, valid at
// now, which the same statement checks. On PostgreSQL the update locks
// the row, and a placement that waited for it reads the row as the
// previous one left it; SQLite transactions hold the database already.
//
// The error wraps [tradekit.ErrUnauthorized] for a token that is unknown,
// expired or revoked, and [tradekit.ErrNotFound] for an unknown ID.
func lockAccount(ctx context.Context, db bun.IDB, who account, n int, now time.Time) (account, error) {
	var a account
	if err := lockQueries[by(who)].Scan(ctx, db, &a, append([]any{n}, who.key(now)...)...); err != nil {
		return account{}, accountErr(who, err)
	}
	return a, nil
}

// key returns the parameters that name the account who names in the
// statements that take it ([accountWhere]): the hash of its access token
// and the time now, or its ID.
func (who account) key(now time.Time) []any {
	if who.token != "" {
		return []any{who.token, now.UTC()}
	}
	return []any{who.ID}
}

// by returns 1 when who names its account by an access token, else 0:
// the index of a statement among those that take the account both ways.
func by(who account) int {
	if who.token != "" {
		return 1
	}
	return 0
}

// accountWhere has q take the account by its access token (the hash and
// the time) when byToken, else by its ID, and returns the parameters
// after those.
func accountWhere[Q interface{ Where(string, ...any) Q }](q Q, byToken bool, column string, params []any) (Q, []any) {
	if byToken {
		return q.Where(column+" = ?", tokenAccount(params[0], params[1])), params[2:]
	}
	return q.Where(column+" = ?", params[0]), params[1:]
}

// accountErr is the error of a statement that found no account who names.
func accountErr(who account, err error) error {
	if errors.Is(err, sql.ErrNoRows) && who.token != "" {
		return errUnauthorized
	}
	return notFound(err, "account %s", who.ID)
}

// lockQueries are the statements of lockAccount, prepared, by [by]. The
// parameters are the count of order numbers to take and the account's
// [account.key].
var lockQueries = [2]*database.Prepared{lockQuery(false), lockQuery(true)}

// lockQuery returns the statement of lockAccount, with the account named
// by its token when byToken.
func lockQuery(byToken bool) *database.Prepared {
	return database.NewPrepared(fmt.Sprintf("paper_lock_account_%t", byToken), func(db bun.IDB, params ...any) schema.QueryAppender {
		return seqUpdate(db, byToken, params).Returning(database.Columns(reflect.TypeFor[account](), ""))
	})
}

// seqUpdate is the update that takes the account (by its token when
// byToken) and its next order numbers, with lockAccount's parameters.
func seqUpdate(db bun.IDB, byToken bool, params []any) *bun.UpdateQuery {
	q, _ := accountWhere(db.NewUpdate().Model((*account)(nil)).Set("order_seq = order_seq + ?", params[0]), byToken, "id", params[1:])
	return q
}

// placement is what a placement reads in one statement once it holds its
// account (see [readPlacement]): the account, the Tradekit asset with the
// order's symbol (nil when there is none), the open orders that bear on
// whether the account can afford the order (see [Broker.afford]), whether
// the account placed an order with the order's client order id already,
// and for a sell the quantity it holds of the symbol.
type placement struct {
	account `bun:",extend"`
	Asset   *placedAsset    `bun:"asset,scanonly"`
	Open    []openOrder     `bun:"open,scanonly"`
	Dup     bool            `bun:"dup,scanonly"`
	Held    decimal.Decimal `bun:"held,scanonly"`
	// OpenCount is the number of the account's open orders (status
	// new), counted up to the broker's cap, by paper_orders_open_idx.
	OpenCount int `bun:"open_count,scanonly"`
	// Scope is the scope of the access token that names the account; nil
	// when none does (an API key, or Tradekit's own call).
	Scope *string `bun:"scope,scanonly"`
}

// placedAsset is the asset of [placement], as JSON.
type placedAsset struct {
	ID            uuid.UUID            `json:"id"`
	Type          marketdata.AssetType `json:"type"`
	PricesVersion int64                `json:"prices_version"`
}

// openOrder is an open order of [placement], as JSON: what
// [Broker.afford] needs of it.
type openOrder struct {
	ID         uuid.UUID        `json:"id"`
	ParentID   *uuid.UUID       `json:"parent_id"`
	AssetID    *uuid.UUID       `json:"asset_id"`
	Symbol     string           `json:"symbol"`
	Side       string           `json:"side"`
	Qty        decimal.Decimal  `json:"qty"`
	Notional   *decimal.Decimal `json:"notional"`
	LimitPrice *decimal.Decimal `json:"limit_price"`
	StopPrice  *decimal.Decimal `json:"stop_price"`
}

// order returns x as an order, with the fields [Broker.afford] reads.
func (x openOrder) order() order {
	return order{ID: x.ID, ParentID: x.ParentID, AssetID: x.AssetID, Symbol: x.Symbol, Side: x.Side, Qty: x.Qty,
		Notional: x.Notional, LimitPrice: x.LimitPrice, StopPrice: x.StopPrice, Status: statusNew}
}

// readPlacement takes the next n numbers of the orders of the account
// who names and locks it, as lockAccount does, and then reads what the
// placement of o needs (see [placement]). On PostgreSQL both statements
// go in one message (see [database.ExecWithNext]): the read runs once
// the update holds the account's row, with a snapshot taken then, so it
// sees what the placement before it committed. The open orders are
// counted up to maxOpen. The errors are lockAccount's.
func readPlacement(ctx context.Context, db bun.IDB, who account, n int, o *order, maxOpen int) (placement, error) {
	key := who.key(o.SubmittedAt)
	if err := seqQueries[by(who)].ExecWithNext(ctx, db, append([]any{n}, key...)...); err != nil {
		return placement{}, accountErr(who, err)
	}
	var p placement
	q := placementQueries[by(who)][o.Side == string(brokers.Sell)]
	if err := q.Scan(ctx, db, &p, append(key, o.Symbol, o.ClientOrderID, maxOpen)...); err != nil {
		return placement{}, accountErr(who, err)
	}
	return p, nil
}

// seqQueries are the update of readPlacement, by [by]: lockAccount's,
// with nothing returned (a statement that returns rows must be the last
// of its message). The parameters are lockAccount's.
var seqQueries = [2]*database.Prepared{seqQuery(false), seqQuery(true)}

// seqQuery returns the statement of seqQueries, with the account named
// by its token when byToken.
func seqQuery(byToken bool) *database.Prepared {
	return database.NewPrepared(fmt.Sprintf("paper_take_seq_%t", byToken), func(db bun.IDB, params ...any) schema.QueryAppender {
		return seqUpdate(db, byToken, params)
	})
}

// placementQueries are the read of readPlacement, by [by] and by whether
// the order sells. The parameters are the account's [account.key], the
// order's symbol, its client order id and the count at which counting
// the open orders stops.
var placementQueries = [2]map[bool]*database.Prepared{
	{false: placementQuery(false, false), true: placementQuery(false, true)},
	{false: placementQuery(true, false), true: placementQuery(true, true)},
}

// placementQuery returns the statement of placementQueries. The open
// orders are those on the order's side, of its symbol for a sell, by the
// partial index paper_orders_open_side_idx; the client order id is
// looked up by its unique index.
func placementQuery(byToken, sell bool) *database.Prepared {
	return database.NewPrepared(fmt.Sprintf("paper_placement_%t_%t", byToken, sell), func(db bun.IDB, params ...any) schema.QueryAppender {
		hash := params[0]
		q, params := accountWhere(db.NewSelect().TableExpr("paper_accounts AS a").ColumnExpr(database.Columns(reflect.TypeFor[account](), "a")),
			byToken, "a.id", params)
		if byToken {
			q = q.ColumnExpr("(SELECT scope FROM paper_tokens WHERE token_hash = ?) AS scope", hash)
		}
		symbol, clientOrderID, maxOpen := params[0], params[1], params[2]
		open := pgOpenOrders
		if db.Dialect().Name() == dialect.SQLite {
			open = sqliteOpenOrders
		}
		q = q.ColumnExpr(marketdata.AssetJSONBySymbol(db.Dialect().Name())+" AS asset", symbol).
			ColumnExpr("EXISTS (SELECT 1 FROM paper_orders WHERE account_id = a.id AND client_order_id = ?) AS dup", clientOrderID).
			ColumnExpr("(SELECT count(*) FROM (SELECT 1 FROM paper_orders WHERE account_id = a.id AND status = ? LIMIT ?) n) AS open_count",
				statusNew, maxOpen)
		if !sell {
			return q.ColumnExpr(fmt.Sprintf(open, "")+" AS open", statusNew, brokers.Buy)
		}
		return q.ColumnExpr(fmt.Sprintf(open, " AND symbol = ?")+" AS open", statusNew, brokers.Sell, symbol).
			ColumnExpr("coalesce((SELECT qty FROM paper_positions WHERE account_id = a.id AND symbol = ?), 0) AS held", symbol)
	})
}

// Each dialect's expression of [placement]'s open orders as JSON (its
// asset's is [marketdata.AssetJSONBySymbol]). They take the status and
// the side, then what the %s adds to their WHERE.
const (
	pgOpenOrders = `(SELECT coalesce(json_agg(x), '[]') FROM (SELECT id, parent_id, asset_id, symbol, side, qty, notional,
		limit_price, stop_price FROM paper_orders WHERE account_id = a.id AND status = ? AND side = ?%s) x)`
	sqliteOpenOrders = `(SELECT json_group_array(json_object('id', id, 'parent_id', parent_id, 'asset_id', asset_id,
		'symbol', symbol, 'side', side, 'qty', qty, 'notional', notional, 'limit_price', limit_price, 'stop_price', stop_price))
		FROM paper_orders WHERE account_id = a.id AND status = ? AND side = ?%s)`
)

// lockAccountWith locks the account with the given id, as lockAccount
// does (taking no order number), and reads it with its position in
// symbol (its quantity and average entry price; zero when it holds
// none), in one round trip on PostgreSQL: the update that takes the lock
// returns nothing and goes in one message with the read (see
// [database.ExecWithNext]), whose snapshot is taken once the lock is
// held.
func lockAccountWith(ctx context.Context, db bun.IDB, id uuid.UUID, symbol string) (account, position, error) {
	if err := seqQueries[0].ExecWithNext(ctx, db, 0, id); err != nil {
		return account{}, position{}, notFound(err, "account %s", id)
	}
	var row struct {
		account `bun:",extend"`
		Held    *struct {
			Qty           decimal.Decimal `json:"qty"`
			AvgEntryPrice decimal.Decimal `json:"avg_entry_price"`
		} `bun:"held,scanonly"`
	}
	if err := accountWithQuery.Scan(ctx, db, &row, id, symbol); err != nil {
		return account{}, position{}, notFound(err, "account %s", id)
	}
	p := position{AccountID: id, Symbol: symbol}
	if row.Held != nil {
		p.Qty, p.AvgEntryPrice = row.Held.Qty, row.Held.AvgEntryPrice
	}
	return row.account, p, nil
}

// accountWithQuery is the read of lockAccountWith, prepared. The
// parameters are the account's id and the symbol.
var accountWithQuery = database.NewPrepared("paper_account_with", func(db bun.IDB, params ...any) schema.QueryAppender {
	held := "(SELECT json_build_object('qty', qty, 'avg_entry_price', avg_entry_price) FROM paper_positions WHERE account_id = a.id AND symbol = ?)"
	if db.Dialect().Name() == dialect.SQLite {
		held = "(SELECT json_object('qty', qty, 'avg_entry_price', avg_entry_price) FROM paper_positions WHERE account_id = a.id AND symbol = ?)"
	}
	return db.NewSelect().TableExpr("paper_accounts AS a").ColumnExpr(database.Columns(reflect.TypeFor[account](), "a")).
		ColumnExpr(held+" AS held", params[1]).Where("a.id = ?", params[0])
})
