package portal

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// The store of the account page's sign-in links (paper_sign_in_links)
// and sessions (paper_sessions), each by the SHA-256 of its secret.

// insertSignInLink stores a sign-in link to the account, by the hash of
// its token, bound to the browser whose binding cookie has the hash
// browser, or to none when browser is "".
func insertSignInLink(ctx context.Context, db bun.IDB, tokenHash string, accountID uuid.UUID, exp time.Time, browser string) error {
	var bound *string
	if browser != "" {
		bound = &browser
	}
	_, err := db.NewRaw("INSERT INTO paper_sign_in_links (token_hash, account_id, expires_at, browser_hash) VALUES (?, ?, ?, ?)",
		tokenHash, accountID, exp, bound).Exec(ctx)
	if err != nil {
		return fmt.Errorf("paper: sign-in link: %w", err)
	}
	return nil
}

// startSession uses up the sign-in link with the hash linkHash, valid at
// now and bound to the browser (the hash of its binding cookie, or "")
// or to none, and starts a session of [SessionTTL] with the hash
// sessionHash for its account, in one transaction. It returns
// errOtherBrowser for a link bound to another browser, which stays
// usable, and errLinkUsed for an unknown, expired or used link.
func startSession(ctx context.Context, db bun.IDB, linkHash, browser, sessionHash string, now time.Time) error {
	return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var ids []uuid.UUID
		err := tx.NewRaw(`DELETE FROM paper_sign_in_links WHERE token_hash = ? AND expires_at > ?
			AND (browser_hash IS NULL OR browser_hash = ?) RETURNING account_id`,
			linkHash, now, browser).Scan(ctx, &ids)
		if err != nil {
			return fmt.Errorf("paper: use sign-in link: %w", err)
		}
		if len(ids) != 1 {
			var bound int
			err := tx.NewRaw("SELECT count(*) FROM paper_sign_in_links WHERE token_hash = ? AND expires_at > ?",
				linkHash, now).Scan(ctx, &bound)
			if err != nil {
				return fmt.Errorf("paper: use sign-in link: %w", err)
			}
			if bound > 0 {
				return errOtherBrowser
			}
			return errLinkUsed
		}
		_, err = tx.NewRaw("INSERT INTO paper_sessions (token_hash, account_id, created_at, expires_at) VALUES (?, ?, ?, ?)",
			sessionHash, ids[0], now, now.Add(SessionTTL)).Exec(ctx)
		if err != nil {
			return fmt.Errorf("paper: start session: %w", err)
		}
		return nil
	})
}

// sessionAccount returns the id of the account of the session with the
// hash sessionHash, valid at now, or errSignedOut when there is none.
func sessionAccount(ctx context.Context, db bun.IDB, sessionHash string, now time.Time) (uuid.UUID, error) {
	var id uuid.UUID
	err := db.NewRaw("SELECT account_id FROM paper_sessions WHERE token_hash = ? AND expires_at > ?", sessionHash, now).
		Scan(ctx, &id)
	if errors.Is(err, sql.ErrNoRows) {
		return uuid.Nil, errSignedOut
	}
	if err != nil {
		return uuid.Nil, fmt.Errorf("paper: session: %w", err)
	}
	return id, nil
}

// endSession deletes the session with the hash sessionHash.
func endSession(ctx context.Context, db bun.IDB, sessionHash string) error {
	if _, err := db.NewRaw("DELETE FROM paper_sessions WHERE token_hash = ?", sessionHash).Exec(ctx); err != nil {
		return fmt.Errorf("paper: end session: %w", err)
	}
	return nil
}

// purgeSessions deletes the expired sign-in links and sessions. It only
// logs its errors: what it leaves is deleted next time.
func purgeSessions(ctx context.Context, db bun.IDB, log *slog.Logger, now time.Time) {
	for _, table := range []string{"paper_sign_in_links", "paper_sessions"} {
		if _, err := db.NewRaw("DELETE FROM ? WHERE expires_at < ?", bun.Ident(table), now).Exec(ctx); err != nil {
			log.Warn("paper: purge expired "+table, "err", err)
		}
	}
}
