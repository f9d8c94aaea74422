package billing

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

// Members returns the users of the account, administrators first, then
// by email.
func (s *Store) Members(ctx context.Context, accountID uuid.UUID) ([]User, error) {
	var us []User
	err := s.db.NewSelect().Model(&us).Where("account_id = ?", accountID).
		OrderExpr("is_admin DESC, email").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("billing: members: %w", err)
	}
	return us, nil
}

// AccountsOf returns the account of each of the users that exists, by
// user id.
func (s *Store) AccountsOf(ctx context.Context, userIDs []uuid.UUID) (map[uuid.UUID]uuid.UUID, error) {
	out := make(map[uuid.UUID]uuid.UUID, len(userIDs))
	for start := 0; start < len(userIDs); start += 1000 {
		var rows []struct {
			ID        uuid.UUID `bun:"id"`
			AccountID uuid.UUID `bun:"account_id"`
		}
		err := s.db.NewSelect().Table("users").Column("id", "account_id").
			Where("id IN (?)", bun.In(userIDs[start:min(start+1000, len(userIDs))])).Scan(ctx, &rows)
		if err != nil {
			return nil, fmt.Errorf("billing: accounts of users: %w", err)
		}
		for _, r := range rows {
			out[r.ID] = r.AccountID
		}
	}
	return out, nil
}

// AccountOf returns the id of the user's account and the ids of all its
// members, the user included, in no particular order: the plan's count
// limits (watchlists, alerts, portfolios, webhooks…) cover what all of
// them hold together. The error wraps [tradekit.ErrNotFound] when there
// is no such user.
func (s *Store) AccountOf(ctx context.Context, userID uuid.UUID) (uuid.UUID, []uuid.UUID, error) {
	var rows []struct {
		ID        uuid.UUID `bun:"id"`
		AccountID uuid.UUID `bun:"account_id"`
	}
	err := s.db.NewSelect().Model((*User)(nil)).Column("id", "account_id").
		Where("account_id = (SELECT account_id FROM users WHERE id = ?)", userID).Scan(ctx, &rows)
	if err != nil {
		return uuid.Nil, nil, fmt.Errorf("billing: account of user %s: %w", userID, err)
	}
	if len(rows) == 0 {
		return uuid.Nil, nil, fmt.Errorf("billing: %w", tradekit.Errorf(tradekit.ErrNotFound, "user %s not found", userID))
	}
	ids := make([]uuid.UUID, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	return rows[0].AccountID, ids, nil
}

// AccountKey is an API key with the email of the member who owns it.
type AccountKey struct {
	APIKey
	OwnerEmail string `bun:"owner_email"`
}

// AccountKeys returns the keys of every member of the account, revoked
// ones included, oldest first.
func (s *Store) AccountKeys(ctx context.Context, accountID uuid.UUID) ([]AccountKey, error) {
	var keys []AccountKey
	err := s.db.NewRaw(`SELECT k.*, u.email AS owner_email FROM api_keys AS k
		JOIN users AS u ON u.id = k.user_id
		WHERE u.account_id = ? ORDER BY k.created_at, k.id`, accountID).Scan(ctx, &keys)
	if err != nil {
		return nil, fmt.Errorf("billing: account keys: %w", err)
	}
	return keys, nil
}

// invite is a stored invitation: the SHA-256 of its token, never the token.
type invite struct {
	bun.BaseModel `bun:"table:invites"`

	TokenHash string    `bun:"token_hash,pk"`
	UserID    uuid.UUID `bun:"user_id"`
	CreatedAt time.Time `bun:"created_at"`
	ExpiresAt time.Time `bun:"expires_at"`
}

// Invite adds u, who has no password, to the account of admin, on the
// admin's plan, and returns a one-time token, valid for ttl from now,
// with which u sets a password ([Store.AcceptInvite]). The error wraps
// [tradekit.ErrForbidden] when admin is not an administrator and
// [tradekit.ErrConflict] when the email is taken.
func (s *Store) Invite(ctx context.Context, admin User, u *User, now time.Time, ttl time.Duration) (string, error) {
	if !admin.IsAdmin {
		return "", fmt.Errorf("billing: %w", tradekit.Errorf(tradekit.ErrForbidden, "only account administrators can add users"))
	}
	token, err := RandomToken()
	if err != nil {
		return "", err
	}
	u.AccountID, u.PlanID, u.PasswordHash = admin.AccountID, admin.PlanID, nil
	now = now.UTC().Truncate(time.Microsecond)
	err = s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := NewStore(tx).CreateUser(ctx, u, now); err != nil {
			return err
		}
		inv := invite{TokenHash: hashToken(token), UserID: u.ID, CreatedAt: now, ExpiresAt: now.Add(ttl)}
		if _, err := tx.NewInsert().Model(&inv).Exec(ctx); err != nil {
			return fmt.Errorf("billing: create invite: %w", err)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return token, nil
}

// Reinvite replaces the invitations of a member of admin's account who
// has not set a password yet with a new one, valid for ttl from now, and
// returns its token. The error wraps [tradekit.ErrForbidden] when admin is
// not an administrator, [tradekit.ErrNotFound] when the user is not a
// member, and [tradekit.ErrConflict] when the member has a password.
func (s *Store) Reinvite(ctx context.Context, admin User, userID uuid.UUID, now time.Time, ttl time.Duration) (string, error) {
	if !admin.IsAdmin {
		return "", fmt.Errorf("billing: %w", tradekit.Errorf(tradekit.ErrForbidden, "only account administrators can invite users"))
	}
	token, err := RandomToken()
	if err != nil {
		return "", err
	}
	now = now.UTC().Truncate(time.Microsecond)
	err = s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var u User
		err := tx.NewSelect().Model(&u).Where("id = ? AND account_id = ?", userID, admin.AccountID).Scan(ctx)
		if err != nil {
			return notFound(err, "member")
		}
		if u.PasswordHash != nil {
			return fmt.Errorf("billing: %w", tradekit.Errorf(tradekit.ErrConflict, "%s has set a password already: they sign in with it", u.Email))
		}
		if _, err := tx.NewDelete().Model((*invite)(nil)).Where("user_id = ?", userID).Exec(ctx); err != nil {
			return fmt.Errorf("billing: reinvite: %w", err)
		}
		inv := invite{TokenHash: hashToken(token), UserID: userID, CreatedAt: now, ExpiresAt: now.Add(ttl)}
		if _, err := tx.NewInsert().Model(&inv).Exec(ctx); err != nil {
			return fmt.Errorf("billing: reinvite: %w", err)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return token, nil
}

// Invited returns the user an unexpired invitation token is for. The
// error wraps [tradekit.ErrNotFound] when there is no such invitation or
// it expired by now.
func (s *Store) Invited(ctx context.Context, token string, now time.Time) (User, error) {
	var u User
	err := s.db.NewSelect().Model(&u).
		Where("id = (SELECT user_id FROM invites WHERE token_hash = ? AND expires_at > ?)", hashToken(token), now.UTC()).
		Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return User{}, fmt.Errorf("billing: no invitation, or it expired: %w", tradekit.ErrNotFound)
	}
	if err != nil {
		return User{}, fmt.Errorf("billing: invitation: %w", err)
	}
	return u, nil
}

// AcceptInvite spends an unexpired invitation token: it sets the invited
// user's password to the hash and deletes the user's invitations, so a
// token works once. The error wraps [tradekit.ErrNotFound] as
// [Store.Invited]'s does.
func (s *Store) AcceptInvite(ctx context.Context, token, hash string, now time.Time) (User, error) {
	var u User
	err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var ids []uuid.UUID
		// Deleting first makes two concurrent accepts of one token
		// race for the row: one deletes it, the other finds nothing.
		err := tx.NewDelete().Model((*invite)(nil)).
			Where("token_hash = ? AND expires_at > ?", hashToken(token), now.UTC()).
			Returning("user_id").Scan(ctx, &ids)
		if err != nil {
			return fmt.Errorf("billing: accept invite: %w", err)
		}
		if len(ids) == 0 {
			return fmt.Errorf("billing: no invitation, or it expired: %w", tradekit.ErrNotFound)
		}
		st := NewStore(tx)
		if err := st.SetPassword(ctx, ids[0], hash); err != nil {
			return err
		}
		if _, err := tx.NewDelete().Model((*invite)(nil)).Where("user_id = ?", ids[0]).Exec(ctx); err != nil {
			return fmt.Errorf("billing: accept invite: %w", err)
		}
		return tx.NewSelect().Model(&u).Where("id = ?", ids[0]).Scan(ctx)
	})
	return u, err
}

// CurrentUsage is what the rate limiter has counted for an account in
// the current minute and day, read from its counters.
type CurrentUsage struct {
	Minute, Day int
	// MinuteReset and DayReset are when the windows end.
	MinuteReset, DayReset time.Time
}

// Usage returns the account's counted requests, those of all its
// members, in the windows containing now. A [Limiter] counts some requests ahead of their arrival (its
// leases, at most 64 a process), and gives back the unused ones when the
// minute ends, so during a minute the figures may run that far ahead.
func (s *Store) Usage(ctx context.Context, accountID uuid.UUID, now time.Time) (CurrentUsage, error) {
	ws := windows(now, Limits{})
	var rows []struct {
		Kind  string `bun:"window_kind"`
		Count int    `bun:"count"`
	}
	err := s.db.NewRaw(`SELECT window_kind, count FROM rate_counters
		WHERE account_id = ? AND ((window_kind = ? AND window_start = ?) OR (window_kind = ? AND window_start = ?))`,
		accountID, ws[0].kind, ws[0].start.Unix(), ws[1].kind, ws[1].start.Unix()).Scan(ctx, &rows)
	if err != nil {
		return CurrentUsage{}, fmt.Errorf("billing: usage: %w", err)
	}
	use := CurrentUsage{MinuteReset: ws[0].end, DayReset: ws[1].end}
	for _, r := range rows {
		if r.Kind == ws[0].kind {
			use.Minute = r.Count
		} else {
			use.Day = r.Count
		}
	}
	return use, nil
}
