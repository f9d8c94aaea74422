package paper

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/internal/database"
)

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
// orders' Seq: prepared (see [database.InsertRows]), one per number of
// orders.
func ordersInsert(db bun.IDB, first int64, os ...*order) database.Statement {
	rows := make([]order, len(os))
	for i, o := range os {
		if o.OrderClass == "" {
			o.OrderClass = "simple"
		}
		o.Seq = first + int64(i)
		rows[i] = *o
	}
	return database.InsertRows(db, &rows, "")
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
		// Two reads, each by its own index whatever the planner knows of
		// the table's size: with "id = ? OR parent_id = ?" the plan made
		// while the table was small (a scan of it) stayed as it grew.
		q := db.NewSelect().Model((*order)(nil)).
			ModelTableExpr(`(SELECT * FROM paper_orders WHERE id = ? UNION ALL SELECT * FROM paper_orders WHERE parent_id = ?) AS "order"`,
				params[0], params[0]).Order("seq")
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
	n, err := database.UpdateColumns(ctx, db, o, append(columns, "status", "updated_at"), "status", statusNew)
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
func legsActivation(db bun.IDB, parent uuid.UUID, now time.Time) database.Statement {
	return legsQuery.With(db, now, parent)
}

// legsQuery is the statement of legsActivation, prepared: the fill of
// an order with legs (a stop-loss, say) runs it. The parameters are the
// time and the parent's id.
var legsQuery = database.NewPrepared("paper_legs", func(db bun.IDB, params ...any) schema.QueryAppender {
	return db.NewUpdate().Model((*order)(nil)).Set("status = ?", statusNew).Set("updated_at = ?", params[0]).
		Where("parent_id = ? AND status = ?", params[1], statusHeld)
})

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
