package alerts

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/alerts/webhook"
	"github.com/tradekit/tradekit/internal/seal"
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

// webhook returns the user's live webhook id, its secret as stored. The
// error wraps tradekit.ErrNotFound when the user has no such webhook.
func (s *Service) webhook(ctx context.Context, db bun.IDB, userID, id uuid.UUID) (Webhook, error) {
	var w Webhook
	q := db.NewSelect().Model(&w).Where("id = ? AND user_id = ? AND deleted_at IS NULL", id, userID)
	if err := scanOne(ctx, q, "webhook", id); err != nil {
		return Webhook{}, err
	}
	return w, nil
}

// CreateWebhook registers rawURL as a webhook of the user and returns it
// with its new secret, which nothing shows again: the database holds it
// sealed with Config.Sealer. A URL the transport refuses (see
// [webhook.Client.CheckURL]) is a *tradekit.ParamError naming "url"; a
// user with MaxWebhooks live webhooks gets an error wrapping
// tradekit.ErrForbidden with details {"limit": "webhooks"}; a Service
// without a Sealer, an error wrapping tradekit.ErrUnavailable.
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
	if s.cfg.Sealer == nil {
		return Webhook{}, fmt.Errorf("alerts: webhooks are unavailable: the server has no secret key to encrypt their signing secrets with: %w", tradekit.ErrUnavailable)
	}
	w := Webhook{ID: uuid.New(), UserID: userID, URL: rawURL, Secret: webhook.NewSecret(), CreatedAt: s.clock()}
	stored := w
	stored.Secret = s.cfg.Sealer.Seal(w.Secret, secretContext(w.ID))
	err := s.insertCounted(ctx, userID, &stored, "user_id IN (?) AND deleted_at IS NULL", "webhooks", MaxWebhooks, "webhooks")
	if err != nil {
		return Webhook{}, err
	}
	return w, nil
}

// secretContext is what the sealed secret of the webhook id is bound to:
// a sealed secret copied onto another webhook's row does not open.
func secretContext(id uuid.UUID) string { return "webhook:" + id.String() }

// openSecret returns the plaintext of the secret of the webhook id as
// stored. A secret stored before sealing is returned as it is, and
// sealed in its row on the way (unless the row changed meanwhile). The
// error wraps seal.ErrOpen when a sealed secret does not open, and
// tradekit.ErrUnavailable when there is no Sealer to open it.
func (s *Service) openSecret(ctx context.Context, id uuid.UUID, stored string) (string, error) {
	if !seal.IsSealed(stored) {
		if s.cfg.Sealer != nil {
			if err := s.sealSecret(ctx, id, stored); err != nil {
				return "", err
			}
		}
		return stored, nil
	}
	if s.cfg.Sealer == nil {
		return "", fmt.Errorf("alerts: the signing secret of webhook %s is sealed, and the server has no secret key: %w", id, tradekit.ErrUnavailable)
	}
	secret, err := s.cfg.Sealer.Open(stored, secretContext(id))
	if err != nil {
		return "", fmt.Errorf("alerts: the signing secret of webhook %s: %w", id, err)
	}
	return secret, nil
}

// sealSecret replaces the plaintext secret of the webhook id with its
// sealed form, if the row still holds plaintext.
func (s *Service) sealSecret(ctx context.Context, id uuid.UUID, plaintext string) error {
	_, err := s.db.NewUpdate().Model((*Webhook)(nil)).Set("secret = ?", s.cfg.Sealer.Seal(plaintext, secretContext(id))).
		Where("id = ? AND secret = ?", id, plaintext).Exec(ctx)
	if err != nil {
		return fmt.Errorf("alerts: seal the secret of webhook %s: %w", id, err)
	}
	return nil
}

// SealSecrets seals the signing secrets that webhooks created before
// secrets were sealed still hold in plaintext, deleted webhooks' included,
// and returns how many it sealed. A migration cannot: the key is the
// server's, not the database's. [Service.Run] calls it when it starts;
// deliveries seal the secret they read in plaintext meanwhile. Without a
// Sealer it seals nothing.
func (s *Service) SealSecrets(ctx context.Context) (int, error) {
	if s.cfg.Sealer == nil {
		return 0, nil
	}
	var legacy []Webhook
	err := s.db.NewSelect().Model(&legacy).Column("id", "secret").Where("secret NOT LIKE 'v1.%'").Scan(ctx)
	if err != nil {
		return 0, fmt.Errorf("alerts: webhook secrets to seal: %w", err)
	}
	for i, w := range legacy {
		if err := s.sealSecret(ctx, w.ID, w.Secret); err != nil {
			return i, err
		}
	}
	return len(legacy), nil
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
