package alerts

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/internal/seal"
)

// SealedColumns returns the columns of this package's tables that hold
// sealed values, with the context each is sealed under: a webhook's
// secret, bound to its id (see secretContext).
func SealedColumns() []seal.Column {
	return []seal.Column{{Table: "webhooks", Column: "secret", Prefix: "webhook:", ContextColumn: "id"}}
}

// CountSealedWebhooks returns the number of webhooks, of every user, not
// deleted, whose signing secrets are sealed with the server's key.
func CountSealedWebhooks(ctx context.Context, db bun.IDB) (int, error) {
	n, err := db.NewSelect().Model((*Webhook)(nil)).Where("deleted_at IS NULL AND secret LIKE 'v1.%'").Count(ctx)
	if err != nil {
		return 0, fmt.Errorf("alerts: count webhooks: %w", err)
	}
	return n, nil
}
