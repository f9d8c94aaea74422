package paper

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base32"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
	"github.com/uptrace/bun/schema"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/internal/database"
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

// HashSecret returns the hex SHA-256 of a code, token or cookie value,
// the only form in which they are stored and looked up (here and by
// package portal). They carry 256 random bits, so a
// fast hash suffices: there is nothing to brute-force.
func HashSecret(s string) string {
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

// cashUpdate is the statement of updateCash.
func cashUpdate(db bun.IDB, id uuid.UUID, cash decimal.Decimal) database.Statement {
	return cashQuery.With(db, cash, id)
}

// cashQuery is the statement of cashUpdate, prepared: a fill runs it.
// The parameters are the cash and the account's id.
var cashQuery = database.NewPrepared("paper_cash", func(db bun.IDB, params ...any) schema.QueryAppender {
	return db.NewUpdate().Model((*account)(nil)).Set("cash = ?", params[0]).Where("id = ?", params[1])
})

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
	return positionQuery.With(db, p.AccountID, p.Symbol, p.Qty, p.AvgEntryPrice, p.UpdatedAt)
}

// positionQuery is the upsert of positionSave, prepared: a fill runs it.
// The parameters are the position's columns in the order of its fields.
var positionQuery = database.NewPrepared("paper_position", func(db bun.IDB, params ...any) schema.QueryAppender {
	return db.NewRaw(`INSERT INTO paper_positions (account_id, symbol, qty, avg_entry_price, updated_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (account_id, symbol) DO UPDATE SET qty = EXCLUDED.qty, avg_entry_price = EXCLUDED.avg_entry_price,
		updated_at = EXCLUDED.updated_at`, params...)
})

// accountNumber returns a new account number: "PA" and ten random
// characters of A–Z and 2–7 (50 bits), as Alpaca numbers paper accounts.
func accountNumber() string {
	b := make([]byte, 7)
	rand.Read(b) // never returns an error (crypto/rand)
	return "PA" + base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b)[:10]
}
