package alerts

import "github.com/tradekit/tradekit/internal/seal"

// SealedColumns returns the columns of this package's tables that hold
// sealed values, with the context each is sealed under: a webhook's
// secret, bound to its id (see secretContext).
func SealedColumns() []seal.Column {
	return []seal.Column{{Table: "webhooks", Column: "secret", Prefix: "webhook:", ContextColumn: "id"}}
}
