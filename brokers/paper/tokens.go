package paper

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"
)

// The kinds of [Token].
const (
	TokenAccess  = "access"
	TokenRefresh = "refresh"
)

// Token is an OAuth access or refresh token of an account, a row of
// paper_tokens, stored by the SHA-256 of its secret alone. The API
// reads the account of an access token; package brokers/paper/portal,
// the authorization server, issues, rotates and revokes them through
// [Tokens].
type Token struct {
	bun.BaseModel `bun:"table:paper_tokens"`

	ID        uuid.UUID  `bun:"id,pk"`
	Hash      string     `bun:"token_hash"` // the hex SHA-256 of the secret
	Kind      string     `bun:"kind"`       // [TokenAccess] or [TokenRefresh]
	GrantID   uuid.UUID  `bun:"grant_id"`   // the approval the token descends from
	AccountID uuid.UUID  `bun:"account_id"`
	ClientID  string     `bun:"client_id"`
	Scope     string     `bun:"scope"` // space-separated scopes, e.g. [ScopeTrading]
	CreatedAt time.Time  `bun:"created_at"`
	ExpiresAt *time.Time `bun:"expires_at"` // nil: a refresh token, valid until used or revoked
	RevokedAt *time.Time `bun:"revoked_at"`
	// Rotated reports that the token was revoked by its exchange for new
	// tokens (a refresh token's rotation): presenting it again is a
	// replay, not a revoked token's mistake.
	Rotated bool `bun:"rotated"`
}

// Tokens is the store of the accounts' OAuth tokens on a database or a
// transaction, so that an authorization server issues them in the
// transaction that uses up its code.
type Tokens struct {
	db bun.IDB
}

// NewTokens returns the token store on db (a *bun.DB or a bun.Tx).
func NewTokens(db bun.IDB) *Tokens { return &Tokens{db: db} }

// IssuedTokens are the secrets of an access token and a refresh token,
// shown once: only their SHA-256 is stored.
type IssuedTokens struct {
	Access, Refresh string
}

// Issue stores a new access token, valid for ttl from now, and a new
// refresh token of the grant, for the account and the client with the
// scope, and returns their secrets (256 random bits each, base64url).
func (s *Tokens) Issue(ctx context.Context, grantID, accountID uuid.UUID, clientID, scope string, now time.Time, ttl time.Duration) (IssuedTokens, error) {
	access, refresh := NewSecret(), NewSecret()
	exp := now.Add(ttl)
	for _, t := range []*Token{
		{ID: uuid.New(), Hash: HashSecret(access), Kind: TokenAccess, GrantID: grantID, AccountID: accountID,
			ClientID: clientID, Scope: scope, CreatedAt: now, ExpiresAt: &exp},
		{ID: uuid.New(), Hash: HashSecret(refresh), Kind: TokenRefresh, GrantID: grantID, AccountID: accountID,
			ClientID: clientID, Scope: scope, CreatedAt: now},
	} {
		if _, err := s.db.NewInsert().Model(t).Exec(ctx); err != nil {
			return IssuedTokens{}, fmt.Errorf("paper: insert token: %w", err)
		}
	}
	return IssuedTokens{Access: access, Refresh: refresh}, nil
}

// Token returns the token whose secret is secret. The error wraps
// [tradekit.ErrNotFound] when there is none.
func (s *Tokens) Token(ctx context.Context, secret string) (Token, error) {
	return tokenByHash(ctx, s.db, HashSecret(secret))
}

// Revoke revokes one token, by its rotation or not, and reports whether
// this call did so: false means it was revoked already.
func (s *Tokens) Revoke(ctx context.Context, id uuid.UUID, now time.Time, rotated bool) (bool, error) {
	res, err := s.db.NewUpdate().Model((*Token)(nil)).Set("revoked_at = ?", now).Set("rotated = ?", rotated).
		Where("id = ? AND revoked_at IS NULL", id).Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("paper: revoke token: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("paper: revoke token: %w", err)
	}
	return n == 1, nil
}

// RevokeGrant revokes every token issued from the grant: the tokens its
// code was exchanged for and all those refreshed from them.
func (s *Tokens) RevokeGrant(ctx context.Context, grantID uuid.UUID, now time.Time) error {
	_, err := s.db.NewUpdate().Model((*Token)(nil)).Set("revoked_at = ?", now).
		Where("grant_id = ? AND revoked_at IS NULL", grantID).Exec(ctx)
	if err != nil {
		return fmt.Errorf("paper: revoke the tokens of grant %s: %w", grantID, err)
	}
	return nil
}

// RevokeClient revokes every token issued to the client.
func (s *Tokens) RevokeClient(ctx context.Context, clientID string, now time.Time) error {
	_, err := s.db.NewUpdate().Model((*Token)(nil)).Set("revoked_at = ?", now.UTC()).
		Where("client_id = ? AND revoked_at IS NULL", clientID).Exec(ctx)
	if err != nil {
		return fmt.Errorf("paper: revoke the tokens of client %s: %w", clientID, err)
	}
	return nil
}

// tokenByHash returns the token with the given hash. The error wraps
// [tradekit.ErrNotFound] when there is none.
func tokenByHash(ctx context.Context, db bun.IDB, hash string) (Token, error) {
	var t Token
	if err := db.NewSelect().Model(&t).Where("token_hash = ?", hash).Scan(ctx); err != nil {
		return Token{}, notFound(err, "token")
	}
	return t, nil
}

// secretBytes is the size of every token: 256 bits.
const secretBytes = 32

// NewSecret returns a new token, code or cookie value: secretBytes
// random bytes in unpadded base64url, 43 characters that need no escaping
// in a URL, a header or a form.
func NewSecret() string {
	b := make([]byte, secretBytes)
	rand.Read(b) // never returns an error (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

// accountByAccessToken returns the account of the access token with the
// given hash, valid at now (neither revoked nor expired), in one query.
// The error wraps [tradekit.ErrNotFound] when there is no such token.
func accountByAccessToken(ctx context.Context, db bun.IDB, hash string, now time.Time) (account, error) {
	var a account
	err := db.NewSelect().Model(&a).Where("id = ?", tokenAccount(hash, now.UTC())).Scan(ctx)
	if err != nil {
		return account{}, notFound(err, "token")
	}
	return a, nil
}

// tokenAccount is the SQL of the id of the account of the access token
// with the given hash, valid at now (neither revoked nor expired): NULL
// when there is no such token. The statements that check a token in
// passing (see [Broker.authenticateLater]) use it.
func tokenAccount(hash, now any) schema.QueryWithArgs {
	return bun.SafeQuery("(SELECT account_id FROM paper_tokens WHERE token_hash = ? AND kind = ? AND revoked_at IS NULL AND expires_at > ?)",
		hash, TokenAccess, now)
}

// IsSecret reports whether s could be a value of [NewSecret].
func IsSecret(s string) bool {
	if len(s) != base64.RawURLEncoding.EncodedLen(secretBytes) {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(s)
	return err == nil
}
