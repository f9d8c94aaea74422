package connect

import "github.com/tradekit/tradekit/internal/seal"

// KeySize is the size of a [Sealer]'s key: 32 bytes, for AES-256.
const KeySize = seal.KeySize

// Sealer encrypts tokens at rest with AES-256-GCM, each bound to a
// context (the connection's id and the token's kind), so that a sealed
// token copied onto another connection's row does not open. It is the
// sealer of package internal/seal, which webhook secrets share.
type Sealer = seal.Sealer

// NewSealer returns a Sealer under key, which must be [KeySize] bytes.
func NewSealer(key []byte) (*Sealer, error) { return seal.New(key) }

// SealedColumns returns the columns of this package's tables that hold
// sealed values, with the context each is sealed under (see sealTokens
// and Service.Connect).
func SealedColumns() []seal.Column {
	return []seal.Column{
		{Table: "broker_connections", Column: "access_token", Prefix: "access:", ContextColumn: "id"},
		{Table: "broker_connections", Column: "refresh_token", Prefix: "refresh:", ContextColumn: "id"},
		{Table: "broker_oauth_states", Column: "code_verifier", Prefix: "verifier:", ContextColumn: "connection_id"},
	}
}
