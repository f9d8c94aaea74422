package alerts

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/alerts/webhook"
)

// Webhooks returns the user's live webhooks, oldest first. Their Secret
// is cleared: it is shown only by [Service.CreateWebhook].
func (s *Service) Webhooks(ctx context.Context, userID uuid.UUID) ([]Webhook, error) {
	list := []Webhook{}
	err := s.db.NewSelect().Model(&list).Where("user_id = ? AND deleted_at IS NULL", userID).
		OrderExpr("created_at, id").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("alerts: webhooks: %w", err)
	}
	for i := range list {
		list[i].Secret = ""
	}
	return list, nil
}

// webhook returns the user's live webhook id, with its secret. The error
// wraps tradekit.ErrNotFound when the user has no such webhook.
func (s *Service) webhook(ctx context.Context, db bun.IDB, userID, id uuid.UUID) (Webhook, error) {
	var w Webhook
	err := db.NewSelect().Model(&w).Where("id = ? AND user_id = ? AND deleted_at IS NULL", id, userID).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return Webhook{}, notFound("webhook %s not found", id)
	}
	if err != nil {
		return Webhook{}, fmt.Errorf("alerts: webhook %s: %w", id, err)
	}
	return w, nil
}

// CreateWebhook registers rawURL as a webhook of the user and returns it
// with its new secret, which nothing shows again. A URL the transport
// refuses (see [webhook.Client.CheckURL]) is a *tradekit.ParamError
// naming "url"; a user with MaxWebhooks live webhooks gets an error
// wrapping tradekit.ErrForbidden with details {"limit": "webhooks"}.
func (s *Service) CreateWebhook(ctx context.Context, userID uuid.UUID, rawURL string) (Webhook, error) {
	if rawURL == "" {
		return Webhook{}, &tradekit.ParamError{Param: "url", Msg: "is required: the https URL to POST notifications to"}
	}
	if len(rawURL) > MaxURL {
		return Webhook{}, &tradekit.ParamError{Param: "url", Msg: fmt.Sprintf("is %d bytes long; at most %d are allowed", len(rawURL), MaxURL)}
	}
	if err := s.tr.CheckURL(ctx, rawURL); err != nil {
		return Webhook{}, err
	}
	w := Webhook{ID: uuid.New(), UserID: userID, URL: rawURL, Secret: webhook.NewSecret(), CreatedAt: s.clock()}
	err := s.insertCounted(ctx, userID, &w, "user_id = ? AND deleted_at IS NULL", "webhooks", MaxWebhooks, "webhooks")
	if err != nil {
		return Webhook{}, err
	}
	return w, nil
}

// DeleteWebhook deletes the user's webhook id: its pending deliveries are
// cancelled, its delivery log is kept, and alerts that named it deliver
// nowhere. The error wraps tradekit.ErrNotFound when the user has no such
// webhook.
func (s *Service) DeleteWebhook(ctx context.Context, userID, id uuid.UUID) error {
	now := s.clock()
	return s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewUpdate().Model((*Webhook)(nil)).Set("deleted_at = ?", now).
			Where("id = ? AND user_id = ? AND deleted_at IS NULL", id, userID).Exec(ctx)
		if err != nil {
			return fmt.Errorf("alerts: delete webhook: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound("webhook %s not found", id)
		}
		_, err = tx.NewUpdate().Model((*Delivery)(nil)).Set("status = ?, lease_until = NULL", Cancelled).
			Where("webhook_id = ? AND status = ?", id, Pending).Exec(ctx)
		if err != nil {
			return fmt.Errorf("alerts: cancel deliveries: %w", err)
		}
		return nil
	})
}

// Deliveries returns a page of the deliveries of the user's webhook id,
// newest first, and their total. A deleted webhook's log stays readable.
// The error wraps tradekit.ErrNotFound when the user never had such a
// webhook.
func (s *Service) Deliveries(ctx context.Context, userID, id uuid.UUID, page, limit int) ([]Delivery, int, error) {
	n, err := s.db.NewSelect().Model((*Webhook)(nil)).Where("id = ? AND user_id = ?", id, userID).Count(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("alerts: webhook %s: %w", id, err)
	}
	if n == 0 {
		return nil, 0, notFound("webhook %s not found", id)
	}
	list := []Delivery{}
	total, err := s.db.NewSelect().Model(&list).Where("webhook_id = ?", id).
		OrderExpr("created_at DESC, id").Limit(limit).Offset((page - 1) * limit).ScanAndCount(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("alerts: deliveries of %s: %w", id, err)
	}
	return list, total, nil
}
