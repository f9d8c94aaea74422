package paper

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base32"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
	"github.com/uptrace/bun/schema"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/internal/database"
	"github.com/tradekit/tradekit/marketdata"
)

// The rows of the paper_* tables. Every function here takes a bun.IDB, so
// that the exported methods of Broker run them on the database or inside
// a transaction of their own.

// account is a row of paper_accounts.
type account struct {
	bun.BaseModel `bun:"table:paper_accounts"`

	ID           uuid.UUID       `bun:"id,pk"`
	Number       string          `bun:"number"`
	ClientID     string          `bun:"client_id"`
	Currency     string          `bun:"currency"`
	StartingCash decimal.Decimal `bun:"starting_cash"`
	Cash         decimal.Decimal `bun:"cash"`
	CreatedAt    time.Time       `bun:"created_at"`
	// OrderSeq is the number of the account's latest order (see
	// [lockAccount]).
	OrderSeq int64 `bun:"order_seq"`

	// token is the hash of the access token that names the account when
	// the account is not read yet (see [Broker.authenticateLater]).
	token string `bun:"-"`
}

// position is a row of paper_positions: an open long position.
type position struct {
	bun.BaseModel `bun:"table:paper_positions"`

	AccountID     uuid.UUID       `bun:"account_id,pk"`
	Symbol        string          `bun:"symbol,pk"`
	Qty           decimal.Decimal `bun:"qty"`
	AvgEntryPrice decimal.Decimal `bun:"avg_entry_price"`
	UpdatedAt     time.Time       `bun:"updated_at"`
}

// order is a row of paper_orders.
type order struct {
	bun.BaseModel `bun:"table:paper_orders"`

	ID             uuid.UUID        `bun:"id,pk"`
	AccountID      uuid.UUID        `bun:"account_id"`
	Seq            int64            `bun:"seq"`
	ClientOrderID  string           `bun:"client_order_id"`
	AssetID        *uuid.UUID       `bun:"asset_id"`
	Symbol         string           `bun:"symbol"`
	AssetClass     string           `bun:"asset_class"`
	Side           string           `bun:"side"`
	Type           string           `bun:"type"`
	TimeInForce    string           `bun:"time_in_force"`
	Status         string           `bun:"status"`
	Qty            decimal.Decimal  `bun:"qty"`
	FilledQty      decimal.Decimal  `bun:"filled_qty"`
	FilledAvgPrice *decimal.Decimal `bun:"filled_avg_price"`
	LimitPrice     *decimal.Decimal `bun:"limit_price"`
	StopPrice      *decimal.Decimal `bun:"stop_price"`
	Notional       *decimal.Decimal `bun:"notional"` // a notional order's amount; Qty is 0 until it fills
	ExtendedHours  bool             `bun:"extended_hours"`
	OrderClass     string           `bun:"order_class"` // "simple", "bracket", "oto", "oco"
	ParentID       *uuid.UUID       `bun:"parent_id"`   // a leg's parent order
	Triggered      bool             `bun:"triggered"`   // a stop_limit order's stop was reached
	TrailPrice     *decimal.Decimal `bun:"trail_price"`
	TrailPercent   *decimal.Decimal `bun:"trail_percent"`
	HWM            *decimal.Decimal `bun:"hwm"` // a trailing stop's high-water mark (low-water for a buy)
	Replaces       *uuid.UUID       `bun:"replaces"`
	ReplacedBy     *uuid.UUID       `bun:"replaced_by"`
	ReplacedAt     *time.Time       `bun:"replaced_at"`
	Commission     *decimal.Decimal `bun:"commission"`
	CreatedAt      time.Time        `bun:"created_at"`
	UpdatedAt      time.Time        `bun:"updated_at"`
	SubmittedAt    time.Time        `bun:"submitted_at"`
	FilledAt       *time.Time       `bun:"filled_at"`
	CanceledAt     *time.Time       `bun:"canceled_at"`

	legs []order // the legs of a bracket, OTO or OCO order, when read with it
}

// grant is a row of paper_grants: an authorization code, by its hash.
type grant struct {
	bun.BaseModel `bun:"table:paper_grants"`

	ID            uuid.UUID  `bun:"id,pk"`
	CodeHash      string     `bun:"code_hash"`
	ClientID      string     `bun:"client_id"`
	RedirectURI   string     `bun:"redirect_uri"`
	Scope         string     `bun:"scope"`
	CodeChallenge string     `bun:"code_challenge"` // S256 challenge, "" without PKCE
	AccountID     uuid.UUID  `bun:"account_id"`
	CreatedAt     time.Time  `bun:"created_at"`
	ExpiresAt     time.Time  `bun:"expires_at"`
	UsedAt        *time.Time `bun:"used_at"`
}

// The kinds of token.
const (
	kindAccess  = "access"
	kindRefresh = "refresh"
)

// token is a row of paper_tokens: an access or refresh token, by its hash.
type token struct {
	bun.BaseModel `bun:"table:paper_tokens"`

	ID        uuid.UUID  `bun:"id,pk"`
	Hash      string     `bun:"token_hash"`
	Kind      string     `bun:"kind"`
	GrantID   uuid.UUID  `bun:"grant_id"`
	AccountID uuid.UUID  `bun:"account_id"`
	ClientID  string     `bun:"client_id"`
	Scope     string     `bun:"scope"`
	CreatedAt time.Time  `bun:"created_at"`
	ExpiresAt *time.Time `bun:"expires_at"` // nil: a refresh token, valid until used or revoked
	RevokedAt *time.Time `bun:"revoked_at"`
	// Rotated reports that the token was revoked by its exchange for new
	// tokens (a refresh token's rotation): presenting it again is a
	// replay, not a revoked token's mistake.
	Rotated bool `bun:"rotated"`
}

// hashSecret returns the hex SHA-256 of a code or token, the only form in
// which they are stored and looked up. They carry 256 random bits, so a
// fast hash suffices: there is nothing to brute-force.
func hashSecret(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// notFound turns sql.ErrNoRows into an error wrapping
// [tradekit.ErrNotFound] saying "<what> not found", and wraps any other
// err.
func notFound(err error, format string, args ...any) error {
	what := fmt.Sprintf(format, args...)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("paper: %w", tradekit.Errorf(tradekit.ErrNotFound, "%s not found", what))
	}
	return fmt.Errorf("paper: %s: %w", what, err)
}

// ---- accounts ----

func insertAccount(ctx context.Context, db bun.IDB, a *account) error {
	if _, err := db.NewInsert().Model(a).Exec(ctx); err != nil {
		return fmt.Errorf("paper: create account: %w", err)
	}
	return nil
}

// accountByID returns the account; with lock, on PostgreSQL, it locks the
// row until the transaction ends (SQLite transactions are IMMEDIATE, so a
// writer holds the database already).
func accountByID(ctx context.Context, db bun.IDB, id uuid.UUID, lock bool) (account, error) {
	var a account
	q := db.NewSelect().Model(&a).Where("id = ?", id)
	if lock && db.Dialect().Name() == dialect.PG {
		q = q.For("UPDATE")
	}
	if err := q.Scan(ctx); err != nil {
		return account{}, notFound(err, "account %s", id)
	}
	return a, nil
}

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
		asset, open := pgPlacedAsset, pgOpenOrders
		if db.Dialect().Name() == dialect.SQLite {
			asset, open = sqlitePlacedAsset, sqliteOpenOrders
		}
		q = q.ColumnExpr(asset+" AS asset", symbol).
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

// Each dialect's expressions of [placement]'s asset and open orders as
// JSON. The open orders' take the status and the side, then what the %s
// adds to their WHERE.
const (
	pgPlacedAsset = "(SELECT json_build_object('id', id, 'type', type, 'prices_version', prices_version) FROM assets WHERE symbol = ?)"
	pgOpenOrders  = `(SELECT coalesce(json_agg(x), '[]') FROM (SELECT id, parent_id, asset_id, symbol, side, qty, notional,
		limit_price, stop_price FROM paper_orders WHERE account_id = a.id AND status = ? AND side = ?%s) x)`
	sqlitePlacedAsset = "(SELECT json_object('id', id, 'type', type, 'prices_version', prices_version) FROM assets WHERE symbol = ?)"
	sqliteOpenOrders  = `(SELECT json_group_array(json_object('id', id, 'parent_id', parent_id, 'asset_id', asset_id,
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

// cashUpdate is the statement of updateCash.
func cashUpdate(db bun.IDB, id uuid.UUID, cash decimal.Decimal) *bun.UpdateQuery {
	return db.NewUpdate().Model((*account)(nil)).Set("cash = ?", cash).Where("id = ?", id)
}

func updateCash(ctx context.Context, db bun.IDB, id uuid.UUID, cash decimal.Decimal) error {
	if _, err := cashUpdate(db, id, cash).Exec(ctx); err != nil {
		return fmt.Errorf("paper: update cash of %s: %w", id, err)
	}
	return nil
}

// ---- positions ----

// positions returns the account's open positions, by symbol.
func positions(ctx context.Context, db bun.IDB, accountID uuid.UUID) ([]position, error) {
	out := []position{}
	if err := db.NewSelect().Model(&out).Where("account_id = ?", accountID).Order("symbol").Scan(ctx); err != nil {
		return nil, fmt.Errorf("paper: positions of %s: %w", accountID, err)
	}
	return out, nil
}

// positionOf returns the account's position in symbol and whether there is
// one.
func positionOf(ctx context.Context, db bun.IDB, accountID uuid.UUID, symbol string) (position, bool, error) {
	var p position
	err := db.NewSelect().Model(&p).Where("account_id = ? AND symbol = ?", accountID, symbol).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return position{}, false, nil
	}
	if err != nil {
		return position{}, false, fmt.Errorf("paper: position of %s in %s: %w", accountID, symbol, err)
	}
	return p, true, nil
}

// savePosition writes p, or deletes the row when p.Qty is zero.
func savePosition(ctx context.Context, db bun.IDB, p position) error {
	if _, err := positionSave(db, p).Exec(ctx); err != nil {
		return fmt.Errorf("paper: save position of %s in %s: %w", p.AccountID, p.Symbol, err)
	}
	return nil
}

// positionSave is the statement of savePosition.
func positionSave(db bun.IDB, p position) database.Statement {
	if p.Qty.IsZero() {
		return db.NewDelete().Model((*position)(nil)).Where("account_id = ? AND symbol = ?", p.AccountID, p.Symbol)
	}
	return db.NewInsert().Model(&p).
		On("CONFLICT (account_id, symbol) DO UPDATE").
		Set("qty = EXCLUDED.qty, avg_entry_price = EXCLUDED.avg_entry_price, updated_at = EXCLUDED.updated_at")
}

// ---- orders ----

// lastOrder returns the account's latest order by seq, and whether it has
// any.
func lastOrder(ctx context.Context, db bun.IDB, accountID uuid.UUID) (order, bool, error) {
	var o order
	err := db.NewSelect().Model(&o).Where("account_id = ?", accountID).Order("seq DESC").Limit(1).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return order{}, false, nil
	}
	if err != nil {
		return order{}, false, fmt.Errorf("paper: orders of %s: %w", accountID, err)
	}
	return o, true, nil
}

// insertOrders records the new orders os of one account in one
// statement, numbered in turn from first (taken by [lockAccount]), and
// sets their Seq.
func insertOrders(ctx context.Context, db bun.IDB, first int64, os ...*order) error {
	if _, err := ordersInsert(db, first, os...).Exec(ctx); err != nil {
		return fmt.Errorf("paper: insert orders: %w", err)
	}
	return nil
}

// ordersInsert returns the statement of [insertOrders], which sets the
// orders' Seq.
func ordersInsert(db bun.IDB, first int64, os ...*order) *bun.InsertQuery {
	rows := make([]order, len(os))
	for i, o := range os {
		if o.OrderClass == "" {
			o.OrderClass = "simple"
		}
		o.Seq = first + int64(i)
		rows[i] = *o
	}
	return db.NewInsert().Model(&rows)
}

// closedStatuses are the statuses of orders that are done: Alpaca's
// status=closed lists them, status=open lists every other.
var closedStatuses = []string{"filled", "canceled", "expired", "replaced", "rejected", "done_for_day"}

// orderFilter selects an account's orders.
type orderFilter struct {
	Status  string    // "open", "closed" or "all"
	After   time.Time // submitted strictly after, if not zero
	Until   time.Time // submitted strictly before, if not zero
	Asc     bool      // oldest first
	Limit   int
	Side    string   // "buy", "sell" or "" for both
	Symbols []string // nil for all
	Nested  bool     // legs under their parents only, not listed themselves
}

// listOrders returns the account's orders that f selects, by submission
// time (then seq).
func listOrders(ctx context.Context, db bun.IDB, accountID uuid.UUID, f orderFilter) ([]order, error) {
	out := []order{}
	q := db.NewSelect().Model(&out).Where("account_id = ?", accountID)
	switch f.Status {
	case "open":
		q = q.Where("status NOT IN (?)", bun.In(closedStatuses))
	case "closed":
		q = q.Where("status IN (?)", bun.In(closedStatuses))
	}
	if !f.After.IsZero() {
		q = q.Where("submitted_at > ?", f.After.UTC())
	}
	if !f.Until.IsZero() {
		q = q.Where("submitted_at < ?", f.Until.UTC())
	}
	if f.Side != "" {
		q = q.Where("side = ?", f.Side)
	}
	if len(f.Symbols) > 0 {
		q = q.Where("symbol IN (?)", bun.In(f.Symbols))
	}
	if f.Nested {
		q = q.Where("parent_id IS NULL")
	}
	if f.Asc {
		q = q.Order("submitted_at ASC", "seq ASC")
	} else {
		q = q.Order("submitted_at DESC", "seq DESC")
	}
	if err := q.Limit(f.Limit).Scan(ctx); err != nil {
		return nil, fmt.Errorf("paper: orders of %s: %w", accountID, err)
	}
	return out, nil
}

// filledOrders returns the account's filled orders in the order they
// filled (then of seq, for fills at one instant): orders fill
// asynchronously, so seq, the order of placement, is not that order.
func filledOrders(ctx context.Context, db bun.IDB, accountID uuid.UUID) ([]order, error) {
	out := []order{}
	err := db.NewSelect().Model(&out).Where("account_id = ? AND status = 'filled'", accountID).Order("filled_at", "seq").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("paper: fills of %s: %w", accountID, err)
	}
	return out, nil
}

// orderByID returns the account's order id. The error wraps
// [tradekit.ErrNotFound] when the account has none.
func orderByID(ctx context.Context, db bun.IDB, accountID, id uuid.UUID) (order, error) {
	var o order
	if err := db.NewSelect().Model(&o).Where("id = ? AND account_id = ?", id, accountID).Scan(ctx); err != nil {
		return order{}, notFound(err, "order %s", id)
	}
	return o, nil
}

// orderWithLegsQueries are the statements of orderWithLegs, prepared, by
// [by]: with the account of the access token as holder, or without it.
// The parameters are the order's id, then for a token its [account.key].
var orderWithLegsQueries = [2]*database.Prepared{orderWithLegsQuery(false), orderWithLegsQuery(true)}

// orderWithLegsQuery returns the statement of orderWithLegsQueries.
func orderWithLegsQuery(byToken bool) *database.Prepared {
	return database.NewPrepared(fmt.Sprintf("paper_order_with_legs_%t", byToken), func(db bun.IDB, params ...any) schema.QueryAppender {
		q := db.NewSelect().Model((*order)(nil)).Where("id = ? OR parent_id = ?", params[0], params[0]).Order("seq")
		if byToken {
			q = q.ColumnExpr(database.Columns(reflect.TypeFor[order](), `"order"`)).ColumnExpr("? AS holder", tokenAccount(params[1], params[2]))
		}
		return q
	})
}

// orderWithLegs returns the order with the given id of the account who
// names (see [lockAccount]), with its legs (if it has any) in o.legs:
// all in one read, with the check of who's access token when it names
// the account by one. The error wraps [tradekit.ErrNotFound] for an
// order that is not the account's, and [tradekit.ErrUnauthorized] for a
// token that is unknown, expired or revoked.
func orderWithLegs(ctx context.Context, db bun.IDB, who account, id uuid.UUID, now time.Time) (order, error) {
	// By id and parent id alone, each an index; a condition on the
	// account would make SQLite read the account's orders by it instead.
	// A leg's account is its parent's.
	var rows []struct {
		order  `bun:",extend"`
		Holder *uuid.UUID `bun:"holder,scanonly"` // the token's account
	}
	params := []any{id}
	if who.token != "" {
		params = append(params, who.key(now)...)
	}
	if err := orderWithLegsQueries[by(who)].Scan(ctx, db, &rows, params...); err != nil {
		return order{}, fmt.Errorf("paper: order %s: %w", id, err)
	}
	var o order
	var legs []order
	accountID := who.ID
	for _, x := range rows {
		if x.Holder != nil {
			accountID = *x.Holder
		}
		if x.ID == id {
			o = x.order
		} else {
			legs = append(legs, x.order)
		}
	}
	if who.token != "" && (len(rows) == 0 || accountID == uuid.Nil) {
		// No row to carry the token's account, or no such account: the
		// token decides between 401 and 404.
		a, err := accountByAccessToken(ctx, db, who.token, now)
		if errors.Is(err, tradekit.ErrNotFound) {
			return order{}, errUnauthorized
		} else if err != nil {
			return order{}, err
		}
		accountID = a.ID
	}
	if o.ID != id || o.AccountID != accountID {
		return order{}, notFound(sql.ErrNoRows, "order %s", id)
	}
	o.legs = legs
	return o, nil
}

// orderByClientID returns the account's order placed with the client order
// id, and whether there is one.
func orderByClientID(ctx context.Context, db bun.IDB, accountID uuid.UUID, clientOrderID string) (order, bool, error) {
	var o order
	err := db.NewSelect().Model(&o).Where("account_id = ? AND client_order_id = ?", accountID, clientOrderID).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return order{}, false, nil
	}
	if err != nil {
		return order{}, false, fmt.Errorf("paper: order by client order id: %w", err)
	}
	return o, true, nil
}

// openOrders returns the open orders (status new) of the account, in the
// order they were placed.
func openOrders(ctx context.Context, db bun.IDB, accountID uuid.UUID) ([]order, error) {
	out := []order{}
	q := db.NewSelect().Model(&out).Where("status = ? AND account_id = ?", statusNew, accountID)
	if err := q.Order("submitted_at", "seq").Scan(ctx); err != nil {
		return nil, fmt.Errorf("paper: open orders: %w", err)
	}
	return out, nil
}

// openOrdersAfter returns at most limit open orders (status new) of every
// account, the first placed after the order after (from the first when
// after is nil), in the order they were placed: by submission time, then
// seq and id, the order of the partial index paper_orders_open_time_idx.
func openOrdersAfter(ctx context.Context, db bun.IDB, after *order, limit int) ([]order, error) {
	out := []order{}
	q := db.NewSelect().Model(&out).Where("status = ?", statusNew)
	if after != nil {
		q = q.Where("(submitted_at, seq, id) > (?, ?, ?)", after.SubmittedAt, after.Seq, after.ID)
	}
	if err := q.Order("submitted_at", "seq", "id").Limit(limit).Scan(ctx); err != nil {
		return nil, fmt.Errorf("paper: open orders: %w", err)
	}
	return out, nil
}

// openOrdersAnd returns the open orders of the account that bear on
// whether it can afford o (see [Broker.afford]) in the order they were
// placed, and whether it placed an order with o's client order id
// already, open or not: both in one read. For a buy they are the open
// buys, for a sell the open sells of o's symbol; the others (an
// account's resting stop-loss legs, say) are not read.
func openOrdersAnd(ctx context.Context, db bun.IDB, accountID uuid.UUID, o *order) ([]order, bool, error) {
	params := []any{accountID}
	q := openBuysAnd
	if o.Side == string(brokers.Sell) {
		q = openSellsAnd
		params = append(params, o.Symbol)
	}
	var rows []order
	if err := q.Scan(ctx, db, &rows, append(params, o.ClientOrderID)...); err != nil {
		return nil, false, fmt.Errorf("paper: open orders: %w", err)
	}
	// Sorted here: with ORDER BY, SQLite reads the account's orders by
	// submission time instead of by the partial index.
	slices.SortFunc(rows, byPlacement)
	// An order in both halves has o's client order id: o is refused.
	open, dup := rows[:0], false
	for _, x := range rows {
		dup = dup || x.ClientOrderID == o.ClientOrderID
		if x.Status == statusNew && x.Side == o.Side && (x.Side != string(brokers.Sell) || x.Symbol == o.Symbol) {
			open = append(open, x)
		}
	}
	return open, dup, nil
}

// openBuysAnd and openSellsAnd are the statements of openOrdersAnd,
// prepared. The parameters are the account's id, the symbol for a sell,
// and the client order id.
var (
	openBuysAnd  = openOrdersAndQuery(brokers.Buy)
	openSellsAnd = openOrdersAndQuery(brokers.Sell)
)

// openOrdersAndQuery returns the statement of openOrdersAnd for an order
// on side. It is two indexed lookups joined by UNION ALL: the open
// orders by the partial index paper_orders_open_side_idx, the client
// order id by its unique index. A single WHERE with OR reads every order
// the account ever placed, so each placement would cost more than the
// one before. (SQLite takes no parenthesised SELECT in a compound one, so
// the union is the FROM of a SELECT.)
func openOrdersAndQuery(side brokers.Side) *database.Prepared {
	return database.NewPrepared("paper_open_orders_and_"+string(side), func(db bun.IDB, params ...any) schema.QueryAppender {
		accountID, clientOrderID := params[0], params[len(params)-1]
		openOnSide := "SELECT * FROM paper_orders WHERE account_id = ? AND status = ? AND side = ?"
		args := []any{accountID, statusNew, side}
		if side == brokers.Sell {
			openOnSide += " AND symbol = ?"
			args = append(args, params[1])
		}
		args = append(args, accountID, clientOrderID)
		return db.NewSelect().Model((*order)(nil)).
			ModelTableExpr("("+openOnSide+` UNION ALL SELECT * FROM paper_orders WHERE account_id = ? AND client_order_id = ?) AS "order"`, args...)
	})
}

// byPlacement orders orders as they were placed: by submission time,
// then seq (the order of Alpaca's lists and of the matcher's passes).
func byPlacement(x, y order) int {
	return cmp.Or(x.SubmittedAt.Compare(y.SubmittedAt), cmp.Compare(x.Seq, y.Seq))
}

// closeOrder moves the open order o to status, with the columns of o
// that go with it, and reports whether this call did so: false means o
// was no longer open (filled or cancelled meanwhile, maybe by another
// instance).
func closeOrder(ctx context.Context, db bun.IDB, o *order, columns ...string) (bool, error) {
	res, err := db.NewUpdate().Model(o).Column(append(columns, "status", "updated_at")...).WherePK().
		Where("status = ?", statusNew).Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("paper: close order %s: %w", o.ID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("paper: close order %s: %w", o.ID, err)
	}
	return n == 1, nil
}

// legsOf returns the legs of the parent orders ids, by parent, in the
// order they were placed.
func legsOf(ctx context.Context, db bun.IDB, ids []uuid.UUID) (map[uuid.UUID][]order, error) {
	out := map[uuid.UUID][]order{}
	if len(ids) == 0 {
		return out, nil
	}
	var rows []order
	if err := db.NewSelect().Model(&rows).Where("parent_id IN (?)", bun.In(ids)).Order("seq").Scan(ctx); err != nil {
		return nil, fmt.Errorf("paper: legs: %w", err)
	}
	for _, o := range rows {
		out[*o.ParentID] = append(out[*o.ParentID], o)
	}
	return out, nil
}

// activateLegs moves the held legs of the parent order id to open, once
// the parent has filled.
func activateLegs(ctx context.Context, db bun.IDB, parent uuid.UUID, now time.Time) error {
	if _, err := legsActivation(db, parent, now).Exec(ctx); err != nil {
		return fmt.Errorf("paper: activate the legs of %s: %w", parent, err)
	}
	return nil
}

// legsActivation is the statement of activateLegs.
func legsActivation(db bun.IDB, parent uuid.UUID, now time.Time) *bun.UpdateQuery {
	return db.NewUpdate().Model((*order)(nil)).Set("status = ?", statusNew).Set("updated_at = ?", now).
		Where("parent_id = ? AND status = ?", parent, statusHeld)
}

// cancelGroup cancels the open and held orders of the group of parent
// (the parent and its legs) but except, and returns how many it
// cancelled.
func cancelGroup(ctx context.Context, db bun.IDB, parent, except uuid.UUID, now time.Time) (int64, error) {
	res, err := groupCancel(db, parent, except, now).Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("paper: cancel the orders of %s: %w", parent, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("paper: cancel the orders of %s: %w", parent, err)
	}
	return n, nil
}

// groupCancel is the statement of cancelGroup.
func groupCancel(db bun.IDB, parent, except uuid.UUID, now time.Time) *bun.UpdateQuery {
	return db.NewUpdate().Model((*order)(nil)).Set("status = ?", statusCanceled).Set("canceled_at = ?", now).Set("updated_at = ?", now).
		Where("(id = ? OR parent_id = ?) AND id <> ?", parent, parent, except).
		Where("status IN (?)", bun.In([]string{statusNew, statusHeld}))
}

// markTriggered records that the open order o reached its stop, or moved
// its trailing mark: its triggered and hwm columns.
func markTriggered(ctx context.Context, db bun.IDB, o *order) error {
	_, err := db.NewUpdate().Model(o).Column("triggered", "hwm", "stop_price", "updated_at").WherePK().Where("status = ?", statusNew).Exec(ctx)
	if err != nil {
		return fmt.Errorf("paper: update order %s: %w", o.ID, err)
	}
	return nil
}

// ---- grants ----

func insertGrant(ctx context.Context, db bun.IDB, g *grant) error {
	if _, err := db.NewInsert().Model(g).Exec(ctx); err != nil {
		return fmt.Errorf("paper: insert grant: %w", err)
	}
	return nil
}

// grantByCode returns the grant of a code. The error wraps
// [tradekit.ErrNotFound] when there is none.
func grantByCode(ctx context.Context, db bun.IDB, code string) (grant, error) {
	var g grant
	if err := db.NewSelect().Model(&g).Where("code_hash = ?", hashSecret(code)).Scan(ctx); err != nil {
		return grant{}, notFound(err, "code")
	}
	return g, nil
}

// useGrant marks the grant used and reports whether this call did so: false
// means it was used already, maybe by a concurrent request.
func useGrant(ctx context.Context, db bun.IDB, id uuid.UUID, now time.Time) (bool, error) {
	res, err := db.NewUpdate().Model((*grant)(nil)).Set("used_at = ?", now).
		Where("id = ? AND used_at IS NULL", id).Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("paper: use grant %s: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("paper: use grant %s: %w", id, err)
	}
	return n == 1, nil
}

// ---- tokens ----

func insertTokens(ctx context.Context, db bun.IDB, ts ...*token) error {
	for _, t := range ts {
		if _, err := db.NewInsert().Model(t).Exec(ctx); err != nil {
			return fmt.Errorf("paper: insert token: %w", err)
		}
	}
	return nil
}

// tokenByHash returns the token with the given hash. The error wraps
// [tradekit.ErrNotFound] when there is none.
// accountByAccessToken returns the account of the access token with the
// given hash, valid at now (neither revoked nor expired), in one query.
// The error wraps [tradekit.ErrNotFound] when there is no such token.
func accountByAccessToken(ctx context.Context, db bun.IDB, hash string, now time.Time) (account, error) {
	var a account
	err := db.NewSelect().Model(&a).Where("id = ?", tokenAccount(hash, now.UTC())).Scan(ctx)
	if err != nil {
		return account{}, notFound(err, "token")
	}
	return a, nil
}

// tokenAccount is the SQL of the id of the account of the access token
// with the given hash, valid at now (neither revoked nor expired): NULL
// when there is no such token. The statements that check a token in
// passing (see [Broker.authenticateLater]) use it.
func tokenAccount(hash, now any) schema.QueryWithArgs {
	return bun.SafeQuery("(SELECT account_id FROM paper_tokens WHERE token_hash = ? AND kind = ? AND revoked_at IS NULL AND expires_at > ?)",
		hash, kindAccess, now)
}

func tokenByHash(ctx context.Context, db bun.IDB, hash string) (token, error) {
	var t token
	if err := db.NewSelect().Model(&t).Where("token_hash = ?", hash).Scan(ctx); err != nil {
		return token{}, notFound(err, "token")
	}
	return t, nil
}

// revokeToken revokes one token, by its rotation or not, and reports
// whether this call did so: false means it was revoked already.
func revokeToken(ctx context.Context, db bun.IDB, id uuid.UUID, now time.Time, rotated bool) (bool, error) {
	res, err := db.NewUpdate().Model((*token)(nil)).Set("revoked_at = ?", now).Set("rotated = ?", rotated).
		Where("id = ? AND revoked_at IS NULL", id).Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("paper: revoke token: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("paper: revoke token: %w", err)
	}
	return n == 1, nil
}

// revokeGrantTokens revokes every token issued from the grant: the tokens
// its code was exchanged for and all those refreshed from them.
func revokeGrantTokens(ctx context.Context, db bun.IDB, grantID uuid.UUID, now time.Time) error {
	_, err := db.NewUpdate().Model((*token)(nil)).Set("revoked_at = ?", now).
		Where("grant_id = ? AND revoked_at IS NULL", grantID).Exec(ctx)
	if err != nil {
		return fmt.Errorf("paper: revoke the tokens of grant %s: %w", grantID, err)
	}
	return nil
}

// accountNumber returns a new account number: "PA" and ten random
// characters of A–Z and 2–7 (50 bits), as Alpaca numbers paper accounts.
func accountNumber() string {
	b := make([]byte, 7)
	rand.Read(b) // never returns an error (crypto/rand)
	return "PA" + base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b)[:10]
}
