package alerts

import (
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Limits on what a user holds, beyond the plan's counts of watchlists and
// alerts.
const (
	MaxName            = 100  // characters of a watchlist's or an alert's name
	MaxWatchlistAssets = 100  // assets in one watchlist
	MaxWebhooks        = 10   // live webhooks per account, its members together
	MaxURL             = 2048 // bytes of a webhook's URL
)

// Watchlist is a user's named list of assets.
type Watchlist struct {
	bun.BaseModel `bun:"table:watchlists"`

	ID        uuid.UUID `bun:"id,pk"`
	UserID    uuid.UUID `bun:"user_id"`
	Name      string    `bun:"name"`
	CreatedAt time.Time `bun:"created_at"`
	UpdatedAt time.Time `bun:"updated_at"`
	// AssetCount is the number of assets in the list (read, not stored).
	AssetCount int `bun:"asset_count,scanonly"`
}

// WatchlistAsset is an asset of a watchlist.
type WatchlistAsset struct {
	bun.BaseModel `bun:"table:watchlist_assets"`

	WatchlistID uuid.UUID `bun:"watchlist_id,pk"`
	AssetID     uuid.UUID `bun:"asset_id,pk"`
	AddedAt     time.Time `bun:"added_at"`
	// Symbol and Name are the asset's (read, not stored).
	Symbol string `bun:"symbol,scanonly"`
	Name   string `bun:"name,scanonly"`
}

// Alert statuses.
const (
	Active    = "active"    // evaluated on every new bar
	Triggered = "triggered" // a once alert that fired: no longer evaluated
	Deleted   = "deleted"   // deleted by its user
)

// Alert is a condition on an asset's bars, written in the
// custom-indicator language (package indicators/formula), that notifies
// its user on each new bar where it holds (see the package
// documentation).
type Alert struct {
	bun.BaseModel `bun:"table:alerts"`

	ID        uuid.UUID  `bun:"id,pk"`
	UserID    uuid.UUID  `bun:"user_id"`
	AssetID   uuid.UUID  `bun:"asset_id"`
	Name      string     `bun:"name"`
	Condition string     `bun:"condition"`
	WebhookID *uuid.UUID `bun:"webhook_id"`
	// Once makes the alert stop (status Triggered) after its first firing.
	Once bool `bun:"once"`
	// Adjusted evaluates the condition over prices back-adjusted for
	// splits and dividends (marketdata.Adjust), as the charts show them;
	// false over prices as traded.
	Adjusted bool   `bun:"adjusted"`
	Status   string `bun:"status"`
	// CheckedVersion and CheckedThrough are the alert's own watermark:
	// the asset's price version and the date (YYYY-MM-DD, "" for none)
	// of the latest bar when it was created or last fired. Only bars
	// after the later of it and the asset's watermark (which passes move
	// for all the asset's alerts) are evaluated.
	CheckedVersion int64      `bun:"checked_version"`
	CheckedThrough string     `bun:"checked_through"`
	FiredCount     int        `bun:"fired_count"`
	LastFiredAt    *time.Time `bun:"last_fired_at"`
	CreatedAt      time.Time  `bun:"created_at"`
	UpdatedAt      time.Time  `bun:"updated_at"`
	DeletedAt      *time.Time `bun:"deleted_at"`
	// Symbol is the asset's (read, not stored).
	Symbol string `bun:"symbol,scanonly"`
}

// Firing is one firing of an alert: the bar on which its condition held.
// The pair (AlertID, BarDate) is unique.
type Firing struct {
	bun.BaseModel `bun:"table:alert_firings"`

	AlertID        uuid.UUID `bun:"alert_id,pk"`
	BarDate        string    `bun:"bar_date,pk"` // YYYY-MM-DD
	NotificationID uuid.UUID `bun:"notification_id"`
	FiredAt        time.Time `bun:"fired_at"`
}

// Webhook is a URL to which a user's notifications are POSTed, signed
// with its secret (see package webhook).
type Webhook struct {
	bun.BaseModel `bun:"table:webhooks"`

	ID     uuid.UUID `bun:"id,pk"`
	UserID uuid.UUID `bun:"user_id"`
	URL    string    `bun:"url"`
	// Secret is the signing secret. [Service.CreateWebhook] returns it in
	// plaintext, once; the database holds it sealed with Config.Sealer
	// (see [Service.SealSecrets] for rows stored before).
	Secret    string     `bun:"secret"`
	CreatedAt time.Time  `bun:"created_at"`
	DeletedAt *time.Time `bun:"deleted_at"`
	// Failures counts the webhook's consecutive failed attempts, over all
	// its deliveries; FailingSince is when the first of them was made
	// (nil while it answers). PausedUntil is when the next attempt to it
	// may start: each failure pauses it for the delivery backoff of its
	// failure count (see [Config.RetryBase]). DisabledAt is when it was
	// disabled after failing for Config.DisableAfter without a break.
	Failures     int        `bun:"failures"`
	FailingSince *time.Time `bun:"failing_since"`
	PausedUntil  *time.Time `bun:"paused_until"`
	DisabledAt   *time.Time `bun:"disabled_at"`
}

// Delivery statuses.
const (
	Pending   = "pending"   // not yet delivered; attempted again at NextAttemptAt
	Succeeded = "succeeded" // the receiver answered 2xx
	Failed    = "failed"    // retries ran out (see [Config.RetryFor])
	Cancelled = "cancelled" // the webhook was deleted or disabled before delivery
)

// Delivery is one notification sent to one webhook, with the outcome of
// its last attempt. The pair (WebhookID, NotificationID) is unique.
type Delivery struct {
	bun.BaseModel `bun:"table:webhook_deliveries"`

	ID             uuid.UUID  `bun:"id,pk"`
	WebhookID      uuid.UUID  `bun:"webhook_id"`
	NotificationID uuid.UUID  `bun:"notification_id"`
	Kind           string     `bun:"kind"`
	Payload        string     `bun:"payload"` // the JSON body sent
	Status         string     `bun:"status"`
	Attempts       int        `bun:"attempts"`
	NextAttemptAt  time.Time  `bun:"next_attempt_at"`
	LeaseUntil     *time.Time `bun:"lease_until"`
	ResponseStatus *int       `bun:"response_status"` // of the last attempt; nil when none answered
	LatencyMS      *int64     `bun:"latency_ms"`      // of the last attempt
	Error          string     `bun:"error"`           // of the last failed attempt
	CreatedAt      time.Time  `bun:"created_at"`
	LastAttemptAt  *time.Time `bun:"last_attempt_at"`
	DeliveredAt    *time.Time `bun:"delivered_at"`
	// URL and Secret are the webhook's, Secret as stored: sealed, or in
	// plaintext if stored before sealing (read for sending, not stored).
	URL    string `bun:"url,scanonly"`
	Secret string `bun:"secret,scanonly"`
}

// Notification kinds this package writes.
const (
	KindAlert           = "alert"            // an alert's firing
	KindWebhookDisabled = "webhook_disabled" // a webhook disabled after failing for Config.DisableAfter
)

// Kinds lists the notification kinds of this package, the ones the
// dashboard's Alerts page shows.
func Kinds() []string { return []string{KindAlert, KindWebhookDisabled} }

// Notification is a row of the notifications table, which this package
// owns and package copytrading writes through [Notifications]: the
// message a user reads at GET /api/v1/notifications and that webhooks
// carry.
type Notification struct {
	bun.BaseModel `bun:"table:notifications"`

	ID        uuid.UUID  `bun:"id,pk"`
	UserID    uuid.UUID  `bun:"user_id"`
	Kind      string     `bun:"kind"`
	Message   string     `bun:"message"`
	Data      string     `bun:"data"` // a JSON object
	CreatedAt time.Time  `bun:"created_at"`
	ReadAt    *time.Time `bun:"read_at"`
}
