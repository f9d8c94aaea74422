package copytrading

import (
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/alerts"
)

// Profile is a user's leader profile: one of their portfolios, published.
// Its statistics are cached from the portfolio's history and refreshed
// whenever the portfolio has synced since (see [Service.Leaders]).
type Profile struct {
	bun.BaseModel `bun:"table:leader_profiles"`

	ID            uuid.UUID  `bun:"id,pk"`
	UserID        uuid.UUID  `bun:"user_id"`
	PortfolioID   uuid.UUID  `bun:"portfolio_id"`
	Slug          string     `bun:"slug"`
	DisplayName   string     `bun:"display_name"`
	Bio           string     `bun:"bio"`
	PublishedAt   time.Time  `bun:"published_at"`
	UnpublishedAt *time.Time `bun:"unpublished_at"`

	TotalReturn float64 `bun:"total_return"`
	// SharpeRatio and MaxDrawdown are nil while they do not exist (see
	// [Compute]): with fewer than two daily returns, or none varying, for
	// the Sharpe ratio; without any return, for the drawdown.
	SharpeRatio    *float64   `bun:"sharpe_ratio"`
	MaxDrawdown    *float64   `bun:"max_drawdown"`
	MonthlyReturns string     `bun:"monthly_returns"` // JSON of []Month
	StatsAt        *time.Time `bun:"stats_at"`        // when the statistics were computed
}

// Follow is a user following a leader, with the controls of the copies.
type Follow struct {
	bun.BaseModel `bun:"table:follows"`

	ID              uuid.UUID `bun:"id,pk"`
	UserID          uuid.UUID `bun:"user_id"`
	LeaderProfileID uuid.UUID `bun:"leader_profile_id"`
	AutoSync        bool      `bun:"auto_sync"`
	Notifications   bool      `bun:"notifications"`
	Controls
	FollowedAt time.Time `bun:"followed_at"`
	// CopySince is when the follow began, or auto-sync was last turned on:
	// the leader's fills from then on are copied (and notified).
	CopySince    time.Time  `bun:"copy_since"`
	UpdatedAt    time.Time  `bun:"updated_at"`
	UnfollowedAt *time.Time `bun:"unfollowed_at"`
	// StoppedReason says why auto-sync was last turned off by Tradekit
	// (the copy stop-loss, the leader unpublishing), "" if it was not.
	StoppedReason string `bun:"stopped_reason"`
	// CopiedSeq is the follow's watermark: the seq of the leader's latest
	// fill it took up ([connect.Fill.Seq]); each pass of the copy engine
	// reads only the fills after it.
	CopiedSeq int64 `bun:"copied_seq"`
}

// Controls are a follow's limits on the copies, in percent.
type Controls struct {
	// ConnectionID is the follower's connection the copies go through;
	// nil until one is chosen (the follower's only active connection when
	// auto-sync is turned on).
	ConnectionID *uuid.UUID `bun:"connection_id"`
	// AllocationPct is the share of the follower's equity given to the
	// leader: the copies mirror the leader's portfolio scaled to it.
	AllocationPct decimal.Decimal `bun:"allocation_pct"`
	// ScalingPct scales every copy's quantity; 100 copies in proportion.
	ScalingPct decimal.Decimal `bun:"scaling_pct"`
	// MaxPositionPct bounds one copied position, in percent of the
	// allocation.
	MaxPositionPct decimal.Decimal `bun:"max_position_pct"`
	// CopyStopLossPct is the loss of the allocation, in percent, at which
	// auto-sync stops and the follower is notified.
	CopyStopLossPct decimal.Decimal `bun:"copy_stop_loss_pct"`
}

// DefaultControls returns the controls of a follow that sets none: 10 %
// of equity allocated, copies in proportion, at most 25 % of the
// allocation in one position, auto-sync stopped after losing 20 % of the
// allocation.
func DefaultControls() Controls {
	return Controls{
		AllocationPct:   decimal.New(10, 0),
		ScalingPct:      decimal.New(100, 0),
		MaxPositionPct:  decimal.New(25, 0),
		CopyStopLossPct: decimal.New(20, 0),
	}
}

// Notification kinds.
const (
	KindLeaderTrade       = "leader_trade"       // a followed leader traded (follows with notifications on)
	KindLeaderUnpublished = "leader_unpublished" // a followed leader unpublished their profile
	KindCopyRejected      = "copy_rejected"      // a mirrored order was rejected
	KindCopyStopped       = "copy_stopped"       // the copy stop-loss turned auto-sync off
)

// Kinds lists the notification kinds of copy trading, the ones the
// dashboard's Copy trading page shows.
func Kinds() []string {
	return []string{KindLeaderTrade, KindLeaderUnpublished, KindCopyRejected, KindCopyStopped}
}

// Notification is a message for a user: a row of package alerts'
// notifications table, which this package writes and reads through
// [alerts.Notifications].
type Notification = alerts.Notification

// Strategy is a strategy a user published by its hash.
type Strategy struct {
	bun.BaseModel `bun:"table:published_strategies"`

	ID            uuid.UUID  `bun:"id,pk"`
	UserID        uuid.UUID  `bun:"user_id"`
	StrategyHash  string     `bun:"strategy_hash"`
	Name          string     `bun:"name"`
	Description   string     `bun:"description"`
	PublishedAt   time.Time  `bun:"published_at"`
	UnpublishedAt *time.Time `bun:"unpublished_at"`
}
