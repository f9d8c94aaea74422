package billing

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/internal/database"
)

// Store reads and writes billing data. It works on a database or inside a
// transaction: build it from either.
type Store struct {
	db bun.IDB
}

// NewStore returns a Store on db, a *bun.DB or a bun.Tx.
func NewStore(db bun.IDB) *Store {
	return &Store{db: db}
}

// Plans returns every plan, cheapest first.
func (s *Store) Plans(ctx context.Context) ([]Plan, error) {
	var plans []Plan
	if err := s.db.NewSelect().Model(&plans).Order("sort_order").Scan(ctx); err != nil {
		return nil, fmt.Errorf("billing: plans: %w", err)
	}
	return plans, nil
}

// Plan returns the plan with the given slug. The error wraps
// [tradekit.ErrNotFound] when there is none; its [*tradekit.Error] says
// so to users.
func (s *Store) Plan(ctx context.Context, slug string) (Plan, error) {
	var p Plan
	err := s.db.NewSelect().Model(&p).Where("slug = ?", slug).Scan(ctx)
	if err != nil {
		return Plan{}, notFound(err, "plan %s", tradekit.Quote(slug))
	}
	return p, nil
}

// PlanOf returns the plan of the user with the given id. The error wraps
// [tradekit.ErrNotFound] when there is no such user.
func (s *Store) PlanOf(ctx context.Context, userID uuid.UUID) (Plan, error) {
	var p Plan
	err := s.db.NewSelect().Model(&p).Where("id = (SELECT plan_id FROM users WHERE id = ?)", userID).Scan(ctx)
	if err != nil {
		return Plan{}, notFound(err, "plan of user %s", userID)
	}
	return p, nil
}

// UserByEmail returns the user with the given email, compared
// case-insensitively. The error wraps [tradekit.ErrNotFound] when there is
// none; its [*tradekit.Error] says so to users.
func (s *Store) UserByEmail(ctx context.Context, email string) (User, error) {
	var u User
	err := s.db.NewSelect().Model(&u).Where("email = ?", normalizeEmail(email)).Scan(ctx)
	if err != nil {
		return User{}, notFound(err, "user %s", tradekit.Quote(email))
	}
	return u, nil
}

// SetPassword stores the hash of the user's new password (see
// [HashPassword]). The error wraps [tradekit.ErrNotFound] when there is
// no such user.
func (s *Store) SetPassword(ctx context.Context, userID uuid.UUID, hash string) error {
	res, err := s.db.NewUpdate().Model((*User)(nil)).Set("password_hash = ?", hash).Where("id = ?", userID).Exec(ctx)
	if err != nil {
		return fmt.Errorf("billing: set password: %w", err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("billing: user %s: %w", userID, tradekit.ErrNotFound)
	}
	return nil
}

// SignIn returns the user with the email and password. The error wraps
// [tradekit.ErrUnauthorized] for an unknown email, a user without a
// password and a wrong password alike, which take the same time and the
// same hashing slots (see [HashPassword]); it is [ErrPasswordBusy] when
// the slots did not come free in time. A user whose hash was made with other
// parameters than p gets a new one.
func (s *Store) SignIn(ctx context.Context, email, password string, p PasswordParams) (User, error) {
	refused := fmt.Errorf("billing: wrong email or password: %w", tradekit.ErrUnauthorized)
	u, err := s.UserByEmail(ctx, email)
	if errors.Is(err, tradekit.ErrNotFound) || (err == nil && u.PasswordHash == nil) {
		if _, err := checkPassword(ctx, dummyHash(p), password); err != nil && !errors.Is(err, errBadHash) {
			return User{}, err
		}
		return User{}, refused
	}
	if err != nil {
		return User{}, err
	}
	ok, err := checkPassword(ctx, *u.PasswordHash, password)
	if err != nil {
		return User{}, fmt.Errorf("billing: the password of %s: %w", u.Email, err)
	}
	if !ok {
		return User{}, refused
	}
	if NeedsRehash(*u.PasswordHash, p) {
		// Best effort: while the slots are taken the old hash serves on.
		if h, err := hashPassword(ctx, password, p); err == nil && s.SetPassword(ctx, u.ID, h) == nil {
			u.PasswordHash = &h
		}
	}
	return u, nil
}

// CreateUser stores u, giving it an id if it has none, an account of its
// own if it has none and, if it has no creation time, now. The error
// wraps [tradekit.ErrConflict] when the email is taken; its
// [*tradekit.Error] says so to users.
func (s *Store) CreateUser(ctx context.Context, u *User, now time.Time) error {
	if u.ID == uuid.Nil {
		u.ID = uuid.New()
	}
	if u.AccountID == uuid.Nil {
		u.AccountID = u.ID
	}
	if u.CreatedAt.IsZero() {
		u.CreatedAt = now.UTC()
	}
	u.Email = normalizeEmail(u.Email)
	if _, err := s.db.NewInsert().Model(u).Exec(ctx); err != nil {
		if database.IsUniqueViolation(err) {
			return fmt.Errorf("billing: %w", tradekit.Errorf(tradekit.ErrConflict, "user %s exists already", tradekit.Quote(u.Email)))
		}
		return fmt.Errorf("billing: create user: %w", err)
	}
	return nil
}

// UpdateUser saves the plan and admin flag of u.
func (s *Store) UpdateUser(ctx context.Context, u User) error {
	_, err := s.db.NewUpdate().Model(&u).Column("plan_id", "is_admin").WherePK().Exec(ctx)
	if err != nil {
		return fmt.Errorf("billing: update user: %w", err)
	}
	return nil
}

// CreateKey creates an API key named name for the user, created now, and
// returns the stored key and the full key, which exists nowhere else
// afterwards.
func (s *Store) CreateKey(ctx context.Context, userID uuid.UUID, name string, now time.Time) (APIKey, string, error) {
	full, prefix, hash := newKey()
	k := APIKey{
		ID:        uuid.New(),
		UserID:    userID,
		Name:      name,
		Prefix:    prefix,
		Hash:      hash,
		CreatedAt: now.UTC(),
	}
	if _, err := s.db.NewInsert().Model(&k).Exec(ctx); err != nil {
		return APIKey{}, "", fmt.Errorf("billing: create key: %w", err)
	}
	return k, full, nil
}

// Keys returns the user's keys, revoked ones included, oldest first.
func (s *Store) Keys(ctx context.Context, userID uuid.UUID) ([]APIKey, error) {
	var keys []APIKey
	err := s.db.NewSelect().Model(&keys).Where("user_id = ?", userID).Order("created_at", "id").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("billing: keys: %w", err)
	}
	return keys, nil
}

// RevokeKey revokes the key with the given id as of now and returns it. The error
// wraps [tradekit.ErrNotFound] when there is no such key, and
// [tradekit.ErrConflict] when the key is already revoked: then nothing
// changes, and the key is returned with the error, its RevokedAt telling
// since when. Both errors hold a [*tradekit.Error] that says so to users.
func (s *Store) RevokeKey(ctx context.Context, id uuid.UUID, now time.Time) (APIKey, error) {
	var k APIKey
	if err := s.db.NewSelect().Model(&k).Where("id = ?", id).Scan(ctx); err != nil {
		return APIKey{}, notFound(err, "key %s", id)
	}
	already := func() (APIKey, error) {
		return k, fmt.Errorf("billing: %w", tradekit.Errorf(tradekit.ErrConflict, "key %s is already revoked", id))
	}
	if k.RevokedAt != nil {
		return already()
	}
	now = now.UTC().Truncate(time.Microsecond) // as both databases store it
	res, err := s.db.NewUpdate().Model((*APIKey)(nil)).
		Set("revoked_at = ?", now).
		Where("id = ? AND revoked_at IS NULL", id).
		Exec(ctx)
	if err != nil {
		return APIKey{}, fmt.Errorf("billing: revoke key %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		// Revoked by someone else since the read.
		if err := s.db.NewSelect().Model(&k).Where("id = ?", id).Scan(ctx); err != nil {
			return APIKey{}, notFound(err, "key %s", id)
		}
		return already()
	}
	k.RevokedAt = &now
	return k, nil
}

// principal returns the owner and plan of the live key with the given hash.
// The error wraps [tradekit.ErrUnauthorized] when there is no such key or
// it is revoked.
func (s *Store) principal(ctx context.Context, hash string) (Principal, error) {
	var row struct {
		KeyID     uuid.UUID `bun:"key_id"`
		Hash      string    `bun:"key_hash"`
		UserID    uuid.UUID `bun:"user_id"`
		AccountID uuid.UUID `bun:"account_id"`
		Plan
	}
	err := s.db.NewSelect().
		ColumnExpr("k.id AS key_id, k.key_hash, k.user_id, u.account_id, p.*").
		TableExpr("api_keys AS k").
		Join("JOIN users AS u ON u.id = k.user_id").
		Join("JOIN plans AS p ON p.id = u.plan_id").
		Where("k.key_hash = ? AND k.revoked_at IS NULL", hash).
		Scan(ctx, &row)
	if errors.Is(err, sql.ErrNoRows) {
		return Principal{}, fmt.Errorf("billing: unknown or revoked key: %w", tradekit.ErrUnauthorized)
	}
	if err != nil {
		return Principal{}, fmt.Errorf("billing: look up key: %w", err)
	}
	return Principal{KeyID: row.KeyID, UserID: row.UserID, AccountID: row.AccountID, Plan: row.Plan, hash: row.Hash}, nil
}

// revokedSince returns the hashes of the keys revoked after t.
func (s *Store) revokedSince(ctx context.Context, t time.Time) ([]string, error) {
	var hashes []string
	err := s.db.NewSelect().Model((*APIKey)(nil)).Column("key_hash").
		Where("revoked_at IS NOT NULL AND revoked_at > ?", t).
		Scan(ctx, &hashes)
	if err != nil {
		return nil, fmt.Errorf("billing: revoked keys: %w", err)
	}
	return hashes, nil
}

// touchKeys records that each key of times was last used at its time. A
// key keeps a later time already stored, such as one written by another
// server instance.
func (s *Store) touchKeys(ctx context.Context, times map[uuid.UUID]time.Time) error {
	if len(times) == 0 {
		return nil
	}
	err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		for id, t := range times {
			_, err := tx.NewUpdate().Model((*APIKey)(nil)).
				Set("last_used_at = ?", t).
				Where("id = ? AND (last_used_at IS NULL OR last_used_at < ?)", id, t).
				Exec(ctx)
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("billing: touch keys: %w", err)
	}
	return nil
}

// notFound turns sql.ErrNoRows into a [*tradekit.Error] of kind
// [tradekit.ErrNotFound] whose message, "<what> not found", is written for
// users, and wraps any other error as it is. Quote what users typed with
// [tradekit.Quote].
func notFound(err error, format string, args ...any) error {
	what := fmt.Sprintf(format, args...)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("billing: %w", tradekit.Errorf(tradekit.ErrNotFound, "%s not found", what))
	}
	return fmt.Errorf("billing: %s: %w", what, err)
}

func normalizeEmail(email string) string {
	return strings.ToLower(strings.TrimSpace(email))
}
