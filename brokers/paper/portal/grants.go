package portal

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
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

// notFound turns sql.ErrNoRows into an error wrapping
// [tradekit.ErrNotFound] saying "<what> not found", and wraps any other
// err.
func notFound(err error, what string) error {
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("paper: %w", tradekit.Errorf(tradekit.ErrNotFound, "%s not found", what))
	}
	return fmt.Errorf("paper: %s: %w", what, err)
}
