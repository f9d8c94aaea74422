package paper

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"
)

// grant is a row of paper_grants: an authorization code, by its hash.
type grant struct {
	bun.BaseModel `bun:"table:paper_grants"`

	ID            uuid.UUID  `bun:"id,pk"`
	CodeHash      string     `bun:"code_hash"`
	ClientID      string     `bun:"client_id"`
	RedirectURI   string     `bun:"redirect_uri"`
	Scope         string     `bun:"scope"`
	CodeChallenge string     `bun:"code_challenge"` // S256 challenge, "" without PKCE
	AccountID     uuid.UUID  `bun:"account_id"`
	CreatedAt     time.Time  `bun:"created_at"`
	ExpiresAt     time.Time  `bun:"expires_at"`
	UsedAt        *time.Time `bun:"used_at"`
}

// The kinds of token.
const (
	kindAccess  = "access"
	kindRefresh = "refresh"
)

// token is a row of paper_tokens: an access or refresh token, by its hash.
type token struct {
	bun.BaseModel `bun:"table:paper_tokens"`

	ID        uuid.UUID  `bun:"id,pk"`
	Hash      string     `bun:"token_hash"`
	Kind      string     `bun:"kind"`
	GrantID   uuid.UUID  `bun:"grant_id"`
	AccountID uuid.UUID  `bun:"account_id"`
	ClientID  string     `bun:"client_id"`
	Scope     string     `bun:"scope"`
	CreatedAt time.Time  `bun:"created_at"`
	ExpiresAt *time.Time `bun:"expires_at"` // nil: a refresh token, valid until used or revoked
	RevokedAt *time.Time `bun:"revoked_at"`
	// Rotated reports that the token was revoked by its exchange for new
	// tokens (a refresh token's rotation): presenting it again is a
	// replay, not a revoked token's mistake.
	Rotated bool `bun:"rotated"`
}

// ---- grants ----

func insertGrant(ctx context.Context, db bun.IDB, g *grant) error {
	if _, err := db.NewInsert().Model(g).Exec(ctx); err != nil {
		return fmt.Errorf("paper: insert grant: %w", err)
	}
	return nil
}

// grantByCode returns the grant of a code. The error wraps
// [tradekit.ErrNotFound] when there is none.
func grantByCode(ctx context.Context, db bun.IDB, code string) (grant, error) {
	var g grant
	if err := db.NewSelect().Model(&g).Where("code_hash = ?", hashSecret(code)).Scan(ctx); err != nil {
		return grant{}, notFound(err, "code")
	}
	return g, nil
}

// useGrant marks the grant used and reports whether this call did so: false
// means it was used already, maybe by a concurrent request.
func useGrant(ctx context.Context, db bun.IDB, id uuid.UUID, now time.Time) (bool, error) {
	res, err := db.NewUpdate().Model((*grant)(nil)).Set("used_at = ?", now).
		Where("id = ? AND used_at IS NULL", id).Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("paper: use grant %s: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("paper: use grant %s: %w", id, err)
	}
	return n == 1, nil
}

// ---- tokens ----

func insertTokens(ctx context.Context, db bun.IDB, ts ...*token) error {
	for _, t := range ts {
		if _, err := db.NewInsert().Model(t).Exec(ctx); err != nil {
			return fmt.Errorf("paper: insert token: %w", err)
		}
	}
	return nil
}

// tokenByHash returns the token with the given hash. The error wraps
// [tradekit.ErrNotFound] when there is none.
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
		hash, kindAccess, now)
}

func tokenByHash(ctx context.Context, db bun.IDB, hash string) (token, error) {
	var t token
	if err := db.NewSelect().Model(&t).Where("token_hash = ?", hash).Scan(ctx); err != nil {
		return token{}, notFound(err, "token")
	}
	return t, nil
}

// revokeToken revokes one token, by its rotation or not, and reports
// whether this call did so: false means it was revoked already.
func revokeToken(ctx context.Context, db bun.IDB, id uuid.UUID, now time.Time, rotated bool) (bool, error) {
	res, err := db.NewUpdate().Model((*token)(nil)).Set("revoked_at = ?", now).Set("rotated = ?", rotated).
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

// revokeGrantTokens revokes every token issued from the grant: the tokens
// its code was exchanged for and all those refreshed from them.
func revokeGrantTokens(ctx context.Context, db bun.IDB, grantID uuid.UUID, now time.Time) error {
	_, err := db.NewUpdate().Model((*token)(nil)).Set("revoked_at = ?", now).
		Where("grant_id = ? AND revoked_at IS NULL", grantID).Exec(ctx)
	if err != nil {
		return fmt.Errorf("paper: revoke the tokens of grant %s: %w", grantID, err)
	}
	return nil
}
