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
	"github.com/tradekit/tradekit/brokers/paper"
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
	if err := db.NewSelect().Model(&g).Where("code_hash = ?", paper.HashSecret(code)).Scan(ctx); err != nil {
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

// approve records an approval in one transaction: it uses up the consent
// form's nonce (errTokenUsed when it was used already), counts the
// sign-up of the client address addr (a *retryError past the limit),
// opens the account through the engine and stores g, the code's grant,
// with the account's id. A failure undoes it all, leaving the form
// usable.
func (p *Portal) approve(ctx context.Context, nonce string, exp time.Time, addr string, g *grant) error {
	return p.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := claimNonce(ctx, tx, nonce, exp); err != nil {
			return err
		}
		if err := p.countSignup(ctx, tx, addr, g.CreatedAt); err != nil {
			return err
		}
		accountID, err := p.broker.OpenClientAccount(ctx, tx, g.ClientID, g.CreatedAt)
		if err != nil {
			return err
		}
		g.AccountID = accountID
		return insertGrant(ctx, tx, g)
	})
}

// redeem uses up the grant g and issues its first tokens to the client,
// in one transaction. It returns errReused when the grant was used
// already, maybe by a concurrent request.
func (p *Portal) redeem(ctx context.Context, g grant, clientID string, now time.Time) (tokenResponse, error) {
	var resp tokenResponse
	err := p.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		ok, err := useGrant(ctx, tx, g.ID, now)
		if err != nil {
			return err
		}
		if !ok {
			return errReused
		}
		resp, err = p.issue(ctx, tx, g.ID, g.AccountID, clientID, g.Scope, now)
		return err
	})
	return resp, err
}

// rotate revokes the refresh token t by its rotation and issues new
// tokens of its grant with the scope, in one transaction. It returns
// errReused when t was revoked meanwhile, by another exchange of it or by
// its client.
func (p *Portal) rotate(ctx context.Context, t paper.Token, clientID, scope string, now time.Time) (tokenResponse, error) {
	var resp tokenResponse
	err := p.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		ok, err := paper.NewTokens(tx).Revoke(ctx, t.ID, now, true)
		if err != nil {
			return err
		}
		if !ok {
			return errReused
		}
		resp, err = p.issue(ctx, tx, t.GrantID, t.AccountID, clientID, scope, now)
		return err
	})
	return resp, err
}
