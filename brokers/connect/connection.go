package connect

import (
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/marketdata"
)

// Connection statuses (spec 3).
const (
	Pending      = "pending"      // created; the user has not yet authorized it at the broker
	Active       = "active"       // authorized; tokens held, syncing
	Disconnected = "disconnected" // ended by the user; the row stays for history
)

// MaxPending is how many connections a user may have waiting for their
// authorization at once: pending, with an OAuth state neither used nor
// expired (Config.StateTTL). A state that is used (the broker sent the
// browser back, whatever the outcome) or that expires frees its slot.
const MaxPending = 5

// Sync statuses (spec 3).
const (
	Syncing   = "syncing"
	Completed = "completed"
	Failed    = "failed"
)

// Connection is a user's link to an account at a broker.
type Connection struct {
	bun.BaseModel `bun:"table:broker_connections"`

	ID           uuid.UUID  `bun:"id,pk"`
	UserID       uuid.UUID  `bun:"user_id"`
	Provider     string     `bun:"provider"`
	Status       string     `bun:"status"`
	RedirectURL  string     `bun:"redirect_url"`
	AccountID    string     `bun:"account_id"`   // the broker's id of the account
	AccountName  string     `bun:"account_name"` // the account number as the broker shows it
	AccessToken  *string    `bun:"access_token"` // sealed; nil when none is held
	RefreshToken *string    `bun:"refresh_token"`
	TokenExpiry  *time.Time `bun:"token_expiry"`
	// LastError says why the last authorization or sync failed, for the
	// user; "" when the last one succeeded.
	LastError     string     `bun:"last_error"`
	SyncID        *uuid.UUID `bun:"sync_id"` // the running or last sync
	SyncStatus    string     `bun:"sync_status"`
	SyncStartedAt *time.Time `bun:"sync_started_at"`
	LastSyncAt    *time.Time `bun:"last_sync_at"` // end of the last completed sync
	// ReconciledAt is when a sync last set the ledger to the broker's
	// account, nil before the first; LedgerDrift lists the differences
	// between the ledger and the broker it found then, "" when none.
	ReconciledAt *time.Time `bun:"reconciled_at"`
	LedgerDrift  string     `bun:"ledger_drift"`
	CreatedAt    time.Time  `bun:"created_at"`
	UpdatedAt    time.Time  `bun:"updated_at"`
}

// SyncLog is one sync of a connection: running, completed or failed.
type SyncLog struct {
	bun.BaseModel `bun:"table:broker_sync_logs"`

	ID              uuid.UUID  `bun:"id,pk"`
	ConnectionID    uuid.UUID  `bun:"connection_id"`
	Status          string     `bun:"status"`
	PositionsSynced *int       `bun:"positions_synced"` // on completion
	Error           string     `bun:"error"`            // on failure, for the user
	StartedAt       time.Time  `bun:"started_at"`
	CompletedAt     *time.Time `bun:"completed_at"`
}

// Portfolio is a connection's account as Tradekit knows it: what the
// last sync found, kept current by the account's own fills in between.
// It is the exposure ledger's book (see the package documentation).
type Portfolio struct {
	bun.BaseModel `bun:"table:portfolios"`

	ID           uuid.UUID       `bun:"id,pk"`
	UserID       uuid.UUID       `bun:"user_id"`
	ConnectionID uuid.UUID       `bun:"connection_id"`
	Currency     string          `bun:"currency"`
	Cash         decimal.Decimal `bun:"cash"`
	Equity       decimal.Decimal `bun:"equity"` // as the broker reported it, less the commissions of later fills
	UpdatedAt    time.Time       `bun:"updated_at"`
	// FillSeq is the seq of the portfolio's latest fill (see [Fill.Seq]).
	FillSeq int64 `bun:"fill_seq"`
	// Version counts the fills applied to the ledger, so that a sync
	// whose snapshot raced one leaves the ledger alone.
	Version int64 `bun:"version"`

	// Positions are filled in by [Store.Portfolio].
	Positions []Position `bun:"-"`
}

// Position is an open position of a portfolio.
type Position struct {
	bun.BaseModel `bun:"table:portfolio_positions"`

	PortfolioID uuid.UUID        `bun:"portfolio_id,pk"`
	Symbol      string           `bun:"symbol,pk"`
	AssetID     *uuid.UUID       `bun:"asset_id"` // the Tradekit asset of the symbol, if any
	Quantity    decimal.Decimal  `bun:"quantity"`
	AverageCost decimal.Decimal  `bun:"average_cost"`
	BrokerValue *decimal.Decimal `bun:"broker_value"` // the market value the broker reported, or the ledger's at the last fill
	// StopLossPrice is the stop of the latest buy through Tradekit that
	// carried one, nil if none: the stop the guardrails know it by.
	StopLossPrice *decimal.Decimal `bun:"stop_loss_price"`
}

// Fill is a trade of the account: recorded when Tradekit sees one of its
// orders fill, or found by a sync.
type Fill struct {
	bun.BaseModel `bun:"table:portfolio_fills"`

	PortfolioID uuid.UUID       `bun:"portfolio_id,pk"`
	BrokerID    string          `bun:"broker_id,pk"`
	Symbol      string          `bun:"symbol"`
	Side        string          `bun:"side"`
	Quantity    decimal.Decimal `bun:"quantity"`
	Price       decimal.Decimal `bun:"price"`
	FilledAt    time.Time       `bun:"filled_at"`
	// Seq numbers the portfolio's fills from 1 in the order they were
	// recorded (committed), so that a reader who has seen seq n has seen
	// every fill before it.
	Seq int64 `bun:"seq"`
	// PositionAfter is the ledger's position in Symbol after the fill,
	// nil when a sync found the fill.
	PositionAfter *decimal.Decimal `bun:"position_after"`
}

// EquityPoint is a portfolio's equity at the close of a day.
type EquityPoint struct {
	bun.BaseModel `bun:"table:portfolio_equity"`

	PortfolioID uuid.UUID          `bun:"portfolio_id,pk"`
	Date        marketdata.SQLDate `bun:"date,pk"`
	Equity      decimal.Decimal    `bun:"equity"`
	Flow        decimal.Decimal    `bun:"flow"` // deposits (+) and withdrawals (−) of the day
}
