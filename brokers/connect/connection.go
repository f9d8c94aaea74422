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
	CreatedAt     time.Time  `bun:"created_at"`
	UpdatedAt     time.Time  `bun:"updated_at"`
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

// Portfolio is what a connection's last sync found in the account.
type Portfolio struct {
	bun.BaseModel `bun:"table:portfolios"`

	ID           uuid.UUID       `bun:"id,pk"`
	UserID       uuid.UUID       `bun:"user_id"`
	ConnectionID uuid.UUID       `bun:"connection_id"`
	Currency     string          `bun:"currency"`
	Cash         decimal.Decimal `bun:"cash"`
	Equity       decimal.Decimal `bun:"equity"` // as the broker reported it
	UpdatedAt    time.Time       `bun:"updated_at"`

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
	BrokerValue *decimal.Decimal `bun:"broker_value"` // the market value the broker reported
}

// Fill is a trade synced from the broker.
type Fill struct {
	bun.BaseModel `bun:"table:portfolio_fills"`

	PortfolioID uuid.UUID       `bun:"portfolio_id,pk"`
	BrokerID    string          `bun:"broker_id,pk"`
	Symbol      string          `bun:"symbol"`
	Side        string          `bun:"side"`
	Quantity    decimal.Decimal `bun:"quantity"`
	Price       decimal.Decimal `bun:"price"`
	FilledAt    time.Time       `bun:"filled_at"`
}

// EquityPoint is a portfolio's equity at the close of a day.
type EquityPoint struct {
	bun.BaseModel `bun:"table:portfolio_equity"`

	PortfolioID uuid.UUID          `bun:"portfolio_id,pk"`
	Date        marketdata.SQLDate `bun:"date,pk"`
	Equity      decimal.Decimal    `bun:"equity"`
	Flow        decimal.Decimal    `bun:"flow"` // deposits (+) and withdrawals (−) of the day
}
