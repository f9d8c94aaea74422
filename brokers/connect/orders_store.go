package connect

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/internal/database"
)

// RuleBroker is the RejectRule of an order its broker refused.
const RuleBroker = "broker"

// Order is an order a user placed through one of their connections, as
// Tradekit records it: accepted (pending, then filled or cancelled) or
// rejected, by a guardrail or by the broker.
type Order struct {
	bun.BaseModel `bun:"table:broker_orders"`

	ID            uuid.UUID           `bun:"id,pk"`
	UserID        uuid.UUID           `bun:"user_id"`
	ConnectionID  uuid.UUID           `bun:"connection_id"`
	AssetID       uuid.UUID           `bun:"asset_id"`
	Symbol        string              `bun:"symbol"`
	AssetType     string              `bun:"asset_type"`
	Side          brokers.Side        `bun:"side"`
	Type          brokers.OrderType   `bun:"type"`
	Quantity      decimal.Decimal     `bun:"quantity"`
	LimitPrice    *decimal.Decimal    `bun:"limit_price"`
	StopLossPrice *decimal.Decimal    `bun:"stop_loss_price"`
	Status        brokers.OrderStatus `bun:"status"`
	// ClientOrderID is the user's idempotency key, nil when none was
	// given; ParamsHash identifies the parameters it was first sent with.
	ClientOrderID *string `bun:"client_order_id"`
	ParamsHash    string  `bun:"params_hash"`
	// BrokerOrderID is the broker's id of the order, nil until the broker
	// acknowledged it. The order reaches the broker with its own ID as the
	// client order id, so sending it twice places it once.
	BrokerOrderID *string `bun:"broker_order_id"`
	BrokerStatus  string  `bun:"broker_status"` // the broker's status word, e.g. "partially_filled"
	// RejectRule names what refused a rejected order: a guardrail (one of
	// the brokers.Rule constants) or [RuleBroker]. RejectReason says why,
	// for people, and Rejection holds every broken guardrail as JSON.
	RejectRule     string           `bun:"reject_rule"`
	RejectReason   string           `bun:"reject_reason"`
	Rejection      string           `bun:"rejection"`
	FilledQuantity *decimal.Decimal `bun:"filled_quantity"`
	FilledPrice    *decimal.Decimal `bun:"filled_price"`
	Commission     *decimal.Decimal `bun:"commission"`
	CreatedAt      time.Time        `bun:"created_at"`
	UpdatedAt      time.Time        `bun:"updated_at"`
	FilledAt       *time.Time       `bun:"filled_at"`
	CancelledAt    *time.Time       `bun:"cancelled_at"`
	// NextCheckAt is when the order's state is next read from the broker,
	// while it is pending.
	NextCheckAt *time.Time `bun:"next_check_at"`
	// ReservedPrice is the price at which the order holds exposure in
	// reserve while it is open: its limit price, or for a market order the
	// latest close plus Config.SlippageBps. Nil for an order rejected by a
	// guardrail.
	ReservedPrice *decimal.Decimal `bun:"reserved_price"`
	// LedgerQty, LedgerCash and LedgerCommission are how much of the
	// order's fills the ledger holds: the quantity, the cash it moved
	// (negative for a buy, commission included), and the commission.
	LedgerQty        decimal.Decimal `bun:"ledger_qty"`
	LedgerCash       decimal.Decimal `bun:"ledger_cash"`
	LedgerCommission decimal.Decimal `bun:"ledger_commission"`
}

// Violations returns the guardrails that rejected the order, in the order
// of [brokers.Result.Violations]; none for an order a guardrail did not
// reject.
func (o *Order) Violations() ([]brokers.Violation, error) {
	if o.Rejection == "" {
		return nil, nil
	}
	var vs []brokers.Violation
	if err := json.Unmarshal([]byte(o.Rejection), &vs); err != nil {
		return nil, fmt.Errorf("connect: the rejection of order %s: %w", o.ID, err)
	}
	return vs, nil
}

// paramsHash returns the hex SHA-256 of what defines an order, so that a
// retry with the same client order id is recognised as the same order.
// Numbers are in decimal's shortest form: 10, 10.0 and 1E1 are one
// quantity.
func paramsHash(connectionID, assetID uuid.UUID, o brokers.Order) string {
	opt := func(d *decimal.Decimal) string {
		if d == nil {
			return "-"
		}
		return d.String()
	}
	s := strings.Join([]string{"order/1", connectionID.String(), assetID.String(), string(o.Side), string(o.Type),
		o.Quantity.String(), opt(o.LimitPrice), opt(o.StopLossPrice)}, "\n")
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// orderNotFound is the error for an order that does not exist or is
// another user's.
func orderNotFound(id uuid.UUID) error {
	return fmt.Errorf("connect: %w", tradekit.Errorf(tradekit.ErrNotFound, "order %s not found", id))
}

// Order returns the user's order id. The error wraps
// [tradekit.ErrNotFound] when there is none or it is another user's.
func (s *Store) Order(ctx context.Context, userID, id uuid.UUID) (Order, error) {
	var o Order
	err := s.db.NewSelect().Model(&o).Where("id = ? AND user_id = ?", id, userID).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return Order{}, orderNotFound(id)
	}
	if err != nil {
		return Order{}, fmt.Errorf("connect: order %s: %w", id, err)
	}
	return o, nil
}

// orderByClientID returns the user's order with the client order id, and
// whether there is one.
func (s *Store) orderByClientID(ctx context.Context, userID uuid.UUID, clientOrderID string) (Order, bool, error) {
	var o Order
	err := s.db.NewSelect().Model(&o).Where("user_id = ? AND client_order_id = ?", userID, clientOrderID).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return Order{}, false, nil
	}
	if err != nil {
		return Order{}, false, fmt.Errorf("connect: order by client order id: %w", err)
	}
	return o, true, nil
}

// OrderFilter selects a user's orders for [Store.Orders].
type OrderFilter struct {
	Status brokers.OrderStatus // "" for every status
	Side   brokers.Side        // "" for both sides
	Page   int                 // from 1
	Limit  int                 // orders per page, at least 1
}

// Orders returns a page of the user's orders that f selects, newest first
// (by creation, then id), and how many orders f selects in all.
func (s *Store) Orders(ctx context.Context, userID uuid.UUID, f OrderFilter) ([]Order, int, error) {
	list := []Order{}
	q := s.db.NewSelect().Model(&list).Where("user_id = ?", userID)
	if f.Status != "" {
		q = q.Where("status = ?", f.Status)
	}
	if f.Side != "" {
		q = q.Where("side = ?", f.Side)
	}
	total, err := q.Order("created_at DESC", "id DESC").Limit(f.Limit).Offset((f.Page - 1) * f.Limit).ScanAndCount(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("connect: orders: %w", err)
	}
	return list, total, nil
}

// stops returns, by symbol, the stop-loss price of the latest filled buy
// carrying one on the connection: the stop Tradekit knows a position by.
func (s *Store) stops(ctx context.Context, connectionID uuid.UUID) (map[string]decimal.Decimal, error) {
	var list []Order
	err := s.db.NewSelect().Model(&list).Column("symbol", "stop_loss_price").
		Where("connection_id = ? AND status = ? AND side = ? AND stop_loss_price IS NOT NULL", connectionID, brokers.Filled, brokers.Buy).
		Order("filled_at", "id").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("connect: stop-loss prices: %w", err)
	}
	out := make(map[string]decimal.Decimal, len(list))
	for _, o := range list {
		out[o.Symbol] = *o.StopLossPrice
	}
	return out, nil
}

// settle records the broker's state st of pending order o: the final
// status with its fill or cancellation, or, while it stays pending, the
// filled quantity so far and when to look again (next). It changes an
// order that is still pending only, so that a state is recorded exactly
// once whichever instance sees it first, and reports whether this call
// changed the order. A changed o holds the ledger's share of its fills
// (LedgerQty, LedgerCash, LedgerCommission) as the row does.
func (s *Store) settle(ctx context.Context, o *Order, st brokers.OrderState, now, next time.Time) (bool, error) {
	o.BrokerStatus, o.UpdatedAt = st.BrokerStatus, now
	if st.ID != "" {
		id := st.ID
		o.BrokerOrderID = &id
	}
	columns := []string{"broker_order_id", "broker_status", "updated_at"}
	if !st.FilledQuantity.IsZero() {
		q := st.FilledQuantity
		o.FilledQuantity, o.FilledPrice = &q, st.FilledPrice
		columns = append(columns, "filled_quantity", "filled_price")
	}
	if !st.Commission.IsZero() || st.Status == brokers.Filled {
		c := st.Commission
		o.Commission = &c
		columns = append(columns, "commission")
	}
	switch st.Status {
	case brokers.Filled:
		o.Status, o.FilledAt, o.NextCheckAt = brokers.Filled, utcOr(st.FilledAt, now), nil
		columns = append(columns, "status", "filled_at", "next_check_at")
	case brokers.Cancelled:
		o.Status, o.CancelledAt, o.NextCheckAt = brokers.Cancelled, utcOr(st.CancelledAt, now), nil
		columns = append(columns, "status", "cancelled_at", "next_check_at")
	case brokers.Rejected:
		o.Status, o.RejectRule, o.NextCheckAt = brokers.Rejected, RuleBroker, nil
		o.RejectReason = "the broker rejected the order after accepting it (" + st.BrokerStatus + ")"
		columns = append(columns, "status", "reject_rule", "reject_reason", "next_check_at")
	default:
		o.NextCheckAt = &next
		columns = append(columns, "next_check_at")
	}
	// The ledger's share of the fills comes back as the row holds it:
	// another instance may have applied some.
	var share ledgerShare
	changed, err := database.UpdateColumnsReturning(ctx, s.db, o, columns, "status", brokers.Pending,
		"ledger_qty, ledger_cash, ledger_commission", &share)
	if err != nil {
		return false, fmt.Errorf("connect: record the state of order %s: %w", o.ID, err)
	}
	if changed {
		o.LedgerQty, o.LedgerCash, o.LedgerCommission = share.Qty, share.Cash, share.Commission
	}
	return changed, nil
}

// ledgerShare is the ledger's share of an order's fills, as settle reads
// it back.
type ledgerShare struct {
	Qty        decimal.Decimal `bun:"ledger_qty"`
	Cash       decimal.Decimal `bun:"ledger_cash"`
	Commission decimal.Decimal `bun:"ledger_commission"`
}

// utcOr returns *t in UTC to the microsecond, or def when t is nil.
func utcOr(t *time.Time, def time.Time) *time.Time {
	v := def
	if t != nil {
		v = t.UTC().Truncate(time.Microsecond)
	}
	return &v
}
