package connect

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
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

// FillsChannel is the PostgreSQL notification channel on which a recorded
// fill is announced, with its portfolio's id as the payload; the
// notification is delivered when the recording transaction commits.
const FillsChannel = "tradekit_fills"

// errNoLedger reports a connection whose first sync has not yet written
// its portfolio, the ledger's book.
var errNoLedger = errors.New("connect: the connection has no ledger yet")

// book is a connection's ledger as a check reads it: the portfolio with
// its positions, the open orders that hold exposure in reserve, how many
// orders the user had accepted since a time, and the user's guardrails.
type book struct {
	Portfolio
	Open       []Order
	Trades     int
	Guardrails brokers.Guardrails
}

// bookHead is a connection's ledger as one statement reads it: the
// portfolio, the count of its user's accepted orders since a time, its
// positions and open orders as JSON arrays, and the user's guardrails
// (all nil when the user never set any).
type bookHead struct {
	Portfolio `bun:",extend"`
	Trades    int    `bun:"trades,scanonly"`
	Held      string `bun:"held,scanonly"`
	Open      string `bun:"open,scanonly"`

	// With an order's book (see [Store.orderBook]): the connection, and
	// the asset with its price version, zero when there is no such asset.
	Conn         Connection       `bun:"embed:c_"`
	Asset        marketdata.Asset `bun:"embed:a_"`
	AssetVersion *int64           `bun:"a_prices_version,scanonly"`

	MaxDailyTrades      *int             `bun:"g_max_daily_trades,scanonly"`
	MaxPositionSizePct  *decimal.Decimal `bun:"g_max_position_size_pct,scanonly"`
	MaxPortfolioRiskPct *decimal.Decimal `bun:"g_max_portfolio_risk_pct,scanonly"`
	StopLossRequired    *bool            `bun:"g_stop_loss_required,scanonly"`
	AllowedAssetTypes   *string          `bun:"g_allowed_asset_types,scanonly"`
}

// guardrails returns the guardrails h holds, [brokers.DefaultGuardrails]
// when it holds none.
func (h *bookHead) guardrails() brokers.Guardrails {
	if h.MaxDailyTrades == nil || h.MaxPositionSizePct == nil || h.MaxPortfolioRiskPct == nil ||
		h.StopLossRequired == nil || h.AllowedAssetTypes == nil {
		return brokers.DefaultGuardrails()
	}
	return guardrailsRow{MaxDailyTrades: *h.MaxDailyTrades, MaxPositionSizePct: *h.MaxPositionSizePct,
		MaxPortfolioRiskPct: *h.MaxPortfolioRiskPct, StopLossRequired: *h.StopLossRequired,
		AllowedAssetTypes: *h.AllowedAssetTypes}.guardrails()
}

// bookPosition is a position as bookHead's JSON holds it.
type bookPosition struct {
	Symbol        string           `json:"symbol"`
	AssetID       *uuid.UUID       `json:"asset_id"`
	Quantity      decimal.Decimal  `json:"quantity"`
	AverageCost   decimal.Decimal  `json:"average_cost"`
	BrokerValue   *decimal.Decimal `json:"broker_value"`
	StopLossPrice *decimal.Decimal `json:"stop_loss_price"`
}

// bookOrder is an open order as bookHead's JSON holds it.
type bookOrder struct {
	ID            uuid.UUID         `json:"id"`
	AssetID       uuid.UUID         `json:"asset_id"`
	Symbol        string            `json:"symbol"`
	Side          brokers.Side      `json:"side"`
	Type          brokers.OrderType `json:"type"`
	Quantity      decimal.Decimal   `json:"quantity"`
	StopLossPrice *decimal.Decimal  `json:"stop_loss_price"`
	ReservedPrice *decimal.Decimal  `json:"reserved_price"`
	LedgerQty     decimal.Decimal   `json:"ledger_qty"`
}

// Each dialect's expressions of bookHead's JSON arrays, with the
// portfolio as p; the open orders' take their status as an argument.
var (
	pgHeld = `(SELECT coalesce(json_agg(x), '[]') FROM (SELECT symbol, asset_id, quantity, average_cost,
		broker_value, stop_loss_price FROM portfolio_positions WHERE portfolio_id = p.id) x)`
	pgOpen = `(SELECT coalesce(json_agg(x), '[]') FROM (SELECT id, asset_id, symbol, side, type, quantity,
		stop_loss_price, reserved_price, ledger_qty FROM broker_orders WHERE connection_id = p.connection_id AND status = ?) x)`
	sqliteHeld = `(SELECT json_group_array(json_object('symbol', symbol, 'asset_id', asset_id, 'quantity', quantity,
		'average_cost', average_cost, 'broker_value', broker_value, 'stop_loss_price', stop_loss_price))
		FROM portfolio_positions WHERE portfolio_id = p.id)`
	sqliteOpen = `(SELECT json_group_array(json_object('id', id, 'asset_id', asset_id, 'symbol', symbol, 'side', side,
		'type', type, 'quantity', quantity, 'stop_loss_price', stop_loss_price, 'reserved_price', reserved_price,
		'ledger_qty', ledger_qty)) FROM broker_orders WHERE connection_id = p.connection_id AND status = ?)`
)

// book reads the ledger of the connection, the count of the user's
// orders accepted (not rejected) since since, and the user's guardrails,
// in one statement, so that what it returns is one state of the ledger
// even when fills are being recorded meanwhile (a fill moves an order out
// of the open ones and into a position at once); under the user's lock
// (see [database.LockUser]), which a change of guardrails takes too, the
// guardrails are those the previous order was checked against or a
// change after it. The positions are in symbol order. The error is
// errNoLedger when the connection has no portfolio yet.
func (s *Store) book(ctx context.Context, connectionID, userID uuid.UUID, since time.Time) (book, error) {
	var head bookHead
	err := bookQuery(s.db, connectionID, userID, since.UTC()).Scan(ctx, &head)
	if errors.Is(err, sql.ErrNoRows) {
		return book{}, errNoLedger
	}
	if err != nil {
		return book{}, fmt.Errorf("connect: the ledger of %s: %w", connectionID, err)
	}
	return head.book(connectionID)
}

// bookQuery is the statement of [Store.book], which bookHead scans, with
// its parameters (see [database.Prepared]): the connection's id, the
// user's and the start of the day in UTC.
func bookQuery(db bun.IDB, connectionID, userID, since any) *bun.SelectQuery {
	heldExpr, openExpr := pgHeld, pgOpen
	if db.Dialect().Name() == dialect.SQLite {
		heldExpr, openExpr = sqliteHeld, sqliteOpen
	}
	return db.NewSelect().TableExpr("portfolios AS p").ColumnExpr(portfolioColumns()).
		ColumnExpr("(SELECT count(*) FROM broker_orders WHERE user_id = ? AND status <> ? AND created_at >= ?) AS trades",
			userID, brokers.Rejected, since).
		ColumnExpr(heldExpr+" AS held").
		ColumnExpr(openExpr+" AS open", brokers.Pending).
		ColumnExpr("g.max_daily_trades AS g_max_daily_trades, g.max_position_size_pct AS g_max_position_size_pct").
		ColumnExpr("g.max_portfolio_risk_pct AS g_max_portfolio_risk_pct, g.stop_loss_required AS g_stop_loss_required").
		ColumnExpr("g.allowed_asset_types AS g_allowed_asset_types").
		Join("LEFT JOIN broker_guardrails AS g ON g.user_id = ?", userID).
		Where("p.connection_id = ?", connectionID)
}

// portfolioColumns returns the columns of a portfolio as p.
var portfolioColumns = sync.OnceValue(func() string {
	return database.Columns(reflect.TypeFor[Portfolio](), "p")
})

// book returns the book that head holds.
func (head *bookHead) book(connectionID uuid.UUID) (book, error) {
	var held []bookPosition
	var open []bookOrder
	if err := errors.Join(json.Unmarshal([]byte(head.Held), &held), json.Unmarshal([]byte(head.Open), &open)); err != nil {
		return book{}, fmt.Errorf("connect: the ledger of %s: %w", connectionID, err)
	}
	b := book{Portfolio: head.Portfolio, Trades: head.Trades, Open: make([]Order, len(open)), Guardrails: head.guardrails()}
	b.Positions = make([]Position, len(held))
	for i, p := range held {
		b.Positions[i] = Position{PortfolioID: head.ID, Symbol: p.Symbol, AssetID: p.AssetID, Quantity: p.Quantity,
			AverageCost: p.AverageCost, BrokerValue: p.BrokerValue, StopLossPrice: p.StopLossPrice}
	}
	sort.Slice(b.Positions, func(i, j int) bool { return b.Positions[i].Symbol < b.Positions[j].Symbol })
	for i, o := range open {
		b.Open[i] = Order{ID: o.ID, AssetID: o.AssetID, Symbol: o.Symbol, Side: o.Side, Type: o.Type, Quantity: o.Quantity,
			StopLossPrice: o.StopLossPrice, ReservedPrice: o.ReservedPrice, LedgerQty: o.LedgerQty}
	}
	return b, nil
}

// orderBook is what an order's check reads in one statement: the book,
// the connection and the order's asset.
type orderBook struct {
	book
	Connection Connection
	// Asset is the order's asset, with a zero ID when there is none,
	// and AssetVersion its price version.
	Asset        marketdata.Asset
	AssetVersion int64
}

// errNoBook reports that [Store.orderBook] found no row: the connection
// is not the user's, or has no ledger yet.
var errNoBook = errors.New("connect: no such connection with a ledger")

// orderBookColumns returns the columns that select a connection as c
// into bookHead's Conn.
var orderBookColumns = sync.OnceValue(func() string {
	return database.PrefixedColumns(reflect.TypeFor[Connection](), "c")
})

// orderBookQuery is the statement of [Store.orderBook], which bookHead
// scans, with its parameters: the ids of the connection, the user and
// the asset, and the start of the day in UTC. It is the heaviest
// statement of an order's check, so it is prepared.
var orderBookQuery = database.NewPrepared("connect_order_book", func(db bun.IDB, params ...any) schema.QueryAppender {
	connectionID, userID, assetID, since := params[0], params[1], params[2], params[3]
	return bookQuery(db, connectionID, userID, since).
		ColumnExpr(orderBookColumns()).Join("JOIN broker_connections AS c ON c.id = p.connection_id AND c.user_id = ?", userID).
		Apply(marketdata.JoinAsset("a", assetID))
})

// orderBook reads, in one statement, the book of the connection (as
// [Store.book] does), the connection, which must be the user's, and the
// asset with the given id with its price version. The error is errNoBook
// when there is no row.
func (s *Store) orderBook(ctx context.Context, connectionID, userID, assetID uuid.UUID, since time.Time) (orderBook, error) {
	var head bookHead
	err := orderBookQuery.Scan(ctx, s.db, &head, connectionID, userID, assetID, since.UTC())
	if errors.Is(err, sql.ErrNoRows) {
		return orderBook{}, errNoBook
	}
	if err != nil {
		return orderBook{}, fmt.Errorf("connect: the ledger of %s: %w", connectionID, err)
	}
	b, err := head.book(connectionID)
	if err != nil {
		return orderBook{}, err
	}
	ob := orderBook{book: b, Connection: head.Conn, Asset: head.Asset}
	if head.AssetVersion != nil {
		ob.AssetVersion = *head.AssetVersion
	}
	return ob, nil
}

// fillHead is what applyFill reads of a connection's ledger: the
// portfolio, its position in the order's symbol as JSON (nil for none),
// and whether it recorded the order's fill already.
type fillHead struct {
	Portfolio `bun:",extend"`
	Held      *string `bun:"held,scanonly"`
	Recorded  bool    `bun:"recorded,scanonly"`
}

// fillHeadQuery is the statement of fillHead, prepared. The parameters
// are the connection's id, the symbol and the order's id at the broker.
var fillHeadQuery = database.NewPrepared("connect_fill_head", func(db bun.IDB, params ...any) schema.QueryAppender {
	connectionID, symbol, brokerID := params[0], params[1], params[2]
	heldExpr := `(SELECT json_build_object('quantity', quantity, 'average_cost', average_cost, 'stop_loss_price', stop_loss_price)
		FROM portfolio_positions WHERE portfolio_id = p.id AND symbol = ?)`
	if db.Dialect().Name() == dialect.SQLite {
		heldExpr = `(SELECT json_object('quantity', quantity, 'average_cost', average_cost, 'stop_loss_price', stop_loss_price)
			FROM portfolio_positions WHERE portfolio_id = p.id AND symbol = ?)`
	}
	return db.NewSelect().TableExpr("portfolios AS p").ColumnExpr(portfolioColumns()).
		ColumnExpr(heldExpr+" AS held", symbol).
		ColumnExpr("EXISTS (SELECT 1 FROM portfolio_fills WHERE portfolio_id = p.id AND broker_id = ?) AS recorded", brokerID).
		Where("p.connection_id = ?", connectionID)
})

// lockLedger holds the lock of the exposure ledger of the connection
// with the given id until the transaction tx ends: what moves the ledger
// (a fill applied to it, a reconciliation) takes it, so that one writer
// at a time reads and moves it. A placement's check does not: it reads
// the ledger in one statement, which sees a fill being recorded either
// whole or not at all, as a sequential run would with the fill after
// the check (see [database.Lock]).
func lockLedger(ctx context.Context, tx bun.IDB, connectionID uuid.UUID) error {
	return database.Lock(ctx, tx, connectionID)
}

// sideSign returns 1 for a buy and -1 for a sell.
func sideSign(side brokers.Side) decimal.Decimal {
	if side == brokers.Sell {
		return decimal.New(-1, 0)
	}
	return one
}

var one = decimal.New(1, 0)

// applyFill brings the ledger up to date with the fills of order o, whose
// FilledQuantity, FilledPrice, Commission and Status are as the broker
// reported them: it moves the portfolio's cash and the position by what
// the ledger does not yet hold (o.LedgerQty, o.LedgerCash), and, when o
// is final with a fill, records the fill with the next seq. Run it in the
// transaction that recorded o's state, under the ledger's lock. It reports
// the portfolio of a recorded fill, uuid.Nil when it recorded none.
//
// Its steps: what the ledger lacks of o's fills ([fillDeltaOf]), o's
// share of the ledger, the portfolio and its position ([Store.fillHead]),
// the position ([Store.movePosition]), the fill ([Store.recordFill]) and
// the portfolio's cash and equity.
func (s *Store) applyFill(ctx context.Context, o *Order, now time.Time) (uuid.UUID, error) {
	d := fillDeltaOf(o)
	if d.dq.IsZero() && d.dnotional.IsZero() && d.dcommission.IsZero() && !d.final {
		return uuid.Nil, nil
	}
	o.LedgerQty, o.LedgerCash, o.LedgerCommission = d.filled, o.LedgerCash.Add(d.dcash), d.commission
	// The writes whose results nothing here reads go with the next
	// statement, or the commit (see database.ExecWithNext).
	if err := database.ExecWithNext(ctx, s.db, database.ColumnsUpdate(s.db, o, "ledger_qty", "ledger_cash", "ledger_commission")); err != nil {
		return uuid.Nil, fmt.Errorf("connect: the ledger of order %s: %w", o.ID, err)
	}
	head, pos, ok, err := s.fillHead(ctx, o)
	if err != nil || !ok {
		return uuid.Nil, err // no ledger: the first sync's snapshot will hold the fill
	}
	if !d.dq.IsZero() {
		if err := s.movePosition(ctx, o, &pos, d); err != nil {
			return uuid.Nil, err
		}
	}
	pf := head.Portfolio
	// A sync records fills under the ledger's lock too: a fill the
	// portfolio did not hold when read is recorded here, once.
	recorded := d.final && !head.Recorded
	if recorded {
		if err := s.recordFill(ctx, o, &pf, pos.Quantity, d, now); err != nil {
			return uuid.Nil, err
		}
	}
	// The position moved by the notional, the cash by dcash: equity
	// changes by the difference, the commission.
	pf.Cash = pf.Cash.Add(d.dcash)
	pf.Equity = pf.Equity.Add(d.dcash).Add(d.dnotional.Mul(d.sign))
	pf.Version++
	pf.UpdatedAt = now
	if err := database.ExecWithNext(ctx, s.db, database.ColumnsUpdate(s.db, &pf, "cash", "equity", "version", "updated_at", "fill_seq")); err != nil {
		return uuid.Nil, fmt.Errorf("connect: the ledger of %s: %w", o.ConnectionID, err)
	}
	if !recorded {
		return uuid.Nil, nil
	}
	if err := s.notifyFill(ctx, pf.ID); err != nil {
		return uuid.Nil, err
	}
	return pf.ID, nil
}

// fillDelta is what the ledger lacks of an order's fills: the quantity,
// the notional (quantity × average price) and the commission, and the
// cash they move (−sign × notional − commission).
type fillDelta struct {
	filled, price, commission         decimal.Decimal // the order's fills now, as the broker reports them
	sign                              decimal.Decimal // +1 for a buy, −1 for a sell
	dq, dnotional, dcommission, dcash decimal.Decimal
	final                             bool // the order is final with a fill at the broker: its fill is recorded
}

// fillDeltaOf returns what the ledger lacks of o's fills: what they are
// now less what the ledger holds of them already (o.LedgerQty,
// o.LedgerCash, o.LedgerCommission).
func fillDeltaOf(o *Order) fillDelta {
	d := fillDelta{filled: decimal.Zero, price: decimal.Zero, commission: decimal.Zero, sign: sideSign(o.Side)}
	if o.FilledQuantity != nil && o.FilledPrice != nil {
		d.filled, d.price = *o.FilledQuantity, *o.FilledPrice
	}
	if o.Commission != nil {
		d.commission = *o.Commission
	}
	notional := d.filled.Mul(d.price)
	held := o.LedgerCash.Neg().Sub(o.LedgerCommission).Mul(d.sign) // the notional the ledger holds
	d.dq, d.dnotional, d.dcommission = d.filled.Sub(o.LedgerQty), notional.Sub(held), d.commission.Sub(o.LedgerCommission)
	d.final = o.Status.Final() && d.filled.IsPositive() && o.BrokerOrderID != nil
	d.dcash = d.dnotional.Mul(d.sign).Neg().Sub(d.dcommission)
	return d
}

// fillHead reads, in one statement, the portfolio of o's connection, its
// position in o's symbol and whether it holds o's fill; ok is false when
// the connection has no ledger yet.
func (s *Store) fillHead(ctx context.Context, o *Order) (head fillHead, pos Position, ok bool, err error) {
	err = fillHeadQuery.Scan(ctx, s.db, &head, o.ConnectionID, o.Symbol, brokerIDOf(o))
	if errors.Is(err, sql.ErrNoRows) {
		return fillHead{}, Position{}, false, nil
	}
	if err != nil {
		return fillHead{}, Position{}, false, fmt.Errorf("connect: the ledger of %s: %w", o.ConnectionID, err)
	}
	pos = Position{PortfolioID: head.ID, Symbol: o.Symbol}
	if head.Held != nil {
		var held bookPosition
		if err := json.Unmarshal([]byte(*head.Held), &held); err != nil {
			return fillHead{}, Position{}, false, fmt.Errorf("connect: the ledger's %s position: %w", o.Symbol, err)
		}
		pos.Quantity, pos.AverageCost, pos.StopLossPrice = held.Quantity, held.AverageCost, held.StopLossPrice
	}
	return head, pos, true, nil
}

// brokerIDOf returns o's id at the broker, "" before the broker gave one.
func brokerIDOf(o *Order) string {
	if o.BrokerOrderID == nil {
		return ""
	}
	return *o.BrokerOrderID
}

// movePosition moves the position pos by d's quantity at o's fill price,
// its average cost by a buy's units, and stores it: deleted when it
// comes to nothing.
func (s *Store) movePosition(ctx context.Context, o *Order, pos *Position, d fillDelta) error {
	after := pos.Quantity.Add(d.dq.Mul(d.sign))
	if o.Side == brokers.Buy && after.IsPositive() {
		// The units added cost what their fills cost.
		cost := pos.Quantity.Mul(pos.AverageCost).Add(d.dnotional)
		pos.AverageCost = cost.DivRound(after, 18)
	}
	pos.Quantity = after
	v := after.Mul(d.price)
	pos.BrokerValue, pos.AssetID = &v, &o.AssetID
	if o.Side == brokers.Buy && o.StopLossPrice != nil {
		pos.StopLossPrice = o.StopLossPrice
	}
	var err error
	if after.IsZero() {
		err = database.ExecWithNext(ctx, s.db, s.db.NewDelete().Model(pos).WherePK())
	} else {
		err = database.ExecWithNext(ctx, s.db, database.InsertRows(s.db, pos, positionUpsert))
	}
	if err != nil {
		return fmt.Errorf("connect: the ledger's %s position: %w", o.Symbol, err)
	}
	return nil
}

// positionUpsert makes the insert of a ledger's position the update of
// the position the portfolio holds in its symbol.
const positionUpsert = "ON CONFLICT (portfolio_id, symbol) DO UPDATE SET asset_id = EXCLUDED.asset_id, " +
	"quantity = EXCLUDED.quantity, average_cost = EXCLUDED.average_cost, broker_value = EXCLUDED.broker_value, " +
	"stop_loss_price = EXCLUDED.stop_loss_price"

// recordFill records o's fill in portfolio pf with the next seq, the
// position being after once it filled, and moves pf.FillSeq to it.
func (s *Store) recordFill(ctx context.Context, o *Order, pf *Portfolio, after decimal.Decimal, d fillDelta, now time.Time) error {
	at := now
	if o.FilledAt != nil {
		at = *o.FilledAt
	}
	f := Fill{PortfolioID: pf.ID, BrokerID: brokerIDOf(o), Symbol: o.Symbol, Side: string(o.Side), Quantity: d.filled,
		Price: d.price, FilledAt: at.UTC(), Seq: pf.FillSeq + 1, PositionAfter: &after}
	if err := database.ExecWithNext(ctx, s.db, database.InsertRows(s.db, &f, "")); err != nil {
		return fmt.Errorf("connect: record the fill of order %s: %w", o.ID, err)
	}
	pf.FillSeq = f.Seq
	return nil
}

// notifyFill announces, on PostgreSQL, a fill recorded in the portfolio;
// the notification is delivered when the transaction commits.
func (s *Store) notifyFill(ctx context.Context, portfolioID uuid.UUID) error {
	if s.db.Dialect().Name() != dialect.PG {
		return nil
	}
	// NOTIFY, unlike SELECT pg_notify, returns no row, so it can go with
	// the commit; the channel is an identifier, the payload a literal.
	if err := database.ExecWithNext(ctx, s.db, s.db.NewRaw("NOTIFY ?, ?", bun.Ident(FillsChannel), portfolioID.String())); err != nil {
		return fmt.Errorf("connect: announce a fill: %w", err)
	}
	return nil
}

// drift describes how the ledger's cash and positions differ from the
// broker's, "" when they agree.
func drift(ledger Portfolio, cash decimal.Decimal, positions []Position) string {
	var out []string
	if !ledger.Cash.Equal(cash) {
		out = append(out, fmt.Sprintf("cash: ledger %s, broker %s", ledger.Cash, cash))
	}
	qty := map[string][2]decimal.Decimal{}
	for _, p := range ledger.Positions {
		q := qty[p.Symbol]
		q[0] = p.Quantity
		qty[p.Symbol] = q
	}
	for _, p := range positions {
		q := qty[p.Symbol]
		q[1] = p.Quantity
		qty[p.Symbol] = q
	}
	symbols := make([]string, 0, len(qty))
	for sym, q := range qty {
		if !q[0].Equal(q[1]) {
			symbols = append(symbols, sym)
		}
	}
	sort.Strings(symbols)
	for _, sym := range symbols {
		out = append(out, fmt.Sprintf("%s: ledger %s, broker %s", sym, qty[sym][0], qty[sym][1]))
	}
	return strings.Join(out, "; ")
}

// reconcile sets the ledger of connection c to the broker's account p
// (balances and positions, read with the open orders' states), and
// returns how the ledger old differed from it, "" when it did not or
// there was none (exists false). Positions keep the stop-loss the ledger
// knew them by, else that of the latest filled buy that carried one. Each
// open order's fills so far are noted as held by the ledger, and the
// connection records when it was reconciled and the differences. Run it
// in a transaction under the user's lock and the ledger's.
func (s *Store) reconcile(ctx context.Context, c *Connection, old Portfolio, exists bool, p *Portfolio, states map[uuid.UUID]brokers.OrderState, now time.Time) (string, error) {
	d := ""
	if exists {
		d = drift(old, p.Cash, p.Positions)
		p.ID, p.FillSeq, p.Version = old.ID, old.FillSeq, old.Version+1
	}
	stops, err := s.stops(ctx, c.ID)
	if err != nil {
		return "", err
	}
	for _, x := range old.Positions {
		if x.StopLossPrice != nil {
			stops[x.Symbol] = *x.StopLossPrice
		}
	}
	_, err = s.db.NewInsert().Model(p).On("CONFLICT (connection_id) DO UPDATE").
		Set("currency = EXCLUDED.currency, cash = EXCLUDED.cash, equity = EXCLUDED.equity").
		Set("updated_at = EXCLUDED.updated_at, version = EXCLUDED.version").
		Returning("id, fill_seq").Exec(ctx)
	if err != nil {
		return "", fmt.Errorf("connect: save portfolio: %w", err)
	}
	if _, err := s.db.NewDelete().Model((*Position)(nil)).Where("portfolio_id = ?", p.ID).Exec(ctx); err != nil {
		return "", fmt.Errorf("connect: clear positions: %w", err)
	}
	for i := range p.Positions {
		x := &p.Positions[i]
		x.PortfolioID = p.ID
		if stop, ok := stops[x.Symbol]; ok && x.Quantity.IsPositive() {
			x.StopLossPrice = &stop
		}
	}
	if len(p.Positions) > 0 {
		if _, err := s.db.NewInsert().Model(&p.Positions).Exec(ctx); err != nil {
			return "", fmt.Errorf("connect: save positions: %w", err)
		}
	}
	for id, st := range states {
		qty, cash, commission := decimal.Zero, decimal.Zero, decimal.Zero
		if st.FilledPrice != nil {
			qty, commission = st.FilledQuantity, st.Commission
			var side brokers.Side
			if err := s.db.NewSelect().Model((*Order)(nil)).Column("side").Where("id = ?", id).Scan(ctx, &side); err != nil {
				return "", fmt.Errorf("connect: order %s: %w", id, err)
			}
			cash = qty.Mul(*st.FilledPrice).Mul(sideSign(side)).Neg().Sub(commission)
		}
		_, err := s.db.NewUpdate().Model((*Order)(nil)).
			Set("ledger_qty = ?, ledger_cash = ?, ledger_commission = ?", qty, cash, commission).
			Where("id = ? AND status = ?", id, brokers.Pending).Exec(ctx)
		if err != nil {
			return "", fmt.Errorf("connect: the ledger of order %s: %w", id, err)
		}
	}
	c.ReconciledAt, c.LedgerDrift = &now, d
	return d, s.updateConnection(ctx, c, "reconciled_at", "ledger_drift")
}
