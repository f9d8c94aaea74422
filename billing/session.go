package billing

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/tradekit/tradekit"
)

// Session is a signed-in user's dashboard session. The cookie holds a
// random token; the database holds only its SHA-256, so a copy of the
// database opens no session.
type Session struct {
	TokenHash string    `bun:"token_hash,pk"`
	UserID    uuid.UUID `bun:"user_id"`
	// CSRFToken is the session's form token: every POST of the session
	// must carry it (the synchronizer token pattern).
	CSRFToken string    `bun:"csrf_token"`
	CreatedAt time.Time `bun:"created_at"`
	ExpiresAt time.Time `bun:"expires_at"`
}

// RandomToken returns 32 random bytes in unpadded base64url (43
// characters): a session token, or a form's CSRF token.
func RandomToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("billing: token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// hashToken returns the stored form of a session token.
func hashToken(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

// CreateSession starts a session of the user, created now and lasting
// ttl, and returns the token for the cookie with the stored session.
func (s *Store) CreateSession(ctx context.Context, userID uuid.UUID, now time.Time, ttl time.Duration) (string, Session, error) {
	token, err := RandomToken()
	if err != nil {
		return "", Session{}, err
	}
	csrf, err := RandomToken()
	if err != nil {
		return "", Session{}, err
	}
	now = now.UTC().Truncate(time.Microsecond)
	se := Session{TokenHash: hashToken(token), UserID: userID, CSRFToken: csrf, CreatedAt: now, ExpiresAt: now.Add(ttl)}
	if _, err := s.db.NewInsert().Model(&se).Exec(ctx); err != nil {
		return "", Session{}, fmt.Errorf("billing: create session: %w", err)
	}
	return token, se, nil
}

// Session returns the session of the cookie's token and its user. The
// error wraps [tradekit.ErrUnauthorized] when there is no such session or
// it expired by now.
func (s *Store) Session(ctx context.Context, token string, now time.Time) (Session, User, error) {
	var se Session
	err := s.db.NewSelect().Model(&se).Where("token_hash = ?", hashToken(token)).Scan(ctx)
	if err != nil || !now.Before(se.ExpiresAt) {
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return Session{}, User{}, fmt.Errorf("billing: session: %w", err)
		}
		return Session{}, User{}, fmt.Errorf("billing: no session, or it expired: %w", tradekit.ErrUnauthorized)
	}
	var u User
	if err := s.db.NewSelect().Model(&u).Where("id = ?", se.UserID).Scan(ctx); err != nil {
		return Session{}, User{}, fmt.Errorf("billing: the user of a session: %w", err)
	}
	return se, u, nil
}

// DeleteSession ends the session of the token (signing out); ending one
// that does not exist is no error.
func (s *Store) DeleteSession(ctx context.Context, token string) error {
	if _, err := s.db.NewDelete().Model((*Session)(nil)).Where("token_hash = ?", hashToken(token)).Exec(ctx); err != nil {
		return fmt.Errorf("billing: delete session: %w", err)
	}
	return nil
}

// DeleteExpiredSessions removes the sessions and invitations expired by
// now and the failed sign-ins older than a day, and returns how many
// sessions went.
func (s *Store) DeleteExpiredSessions(ctx context.Context, now time.Time) (int64, error) {
	res, err := s.db.NewDelete().Model((*Session)(nil)).Where("expires_at <= ?", now.UTC()).Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("billing: delete expired sessions: %w", err)
	}
	if _, err := s.db.NewDelete().Model((*invite)(nil)).Where("expires_at <= ?", now.UTC()).Exec(ctx); err != nil {
		return 0, fmt.Errorf("billing: delete expired invitations: %w", err)
	}
	if _, err := s.db.NewDelete().Table("sign_in_failures").Where("failed_at < ?", now.UTC().Add(-24*time.Hour)).Exec(ctx); err != nil {
		return 0, fmt.Errorf("billing: delete old sign-in failures: %w", err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}

// SignInThrottle bounds failed sign-ins. They are counted in the
// database, so the bounds hold across instances, by the email tried and
// the client's address (see [ClientAddress]):
//
//   - past Failures for one email from one address within Window, that
//     pair is refused until the oldest of those failures leaves the
//     window; the same email from any other address is not, so nobody can
//     lock a user out from afar;
//   - past AddressFailures from one address within Window, whatever the
//     emails, the address is refused likewise, which bounds the guesses
//     one address spreads over many emails. Zero or less sets no such
//     bound.
type SignInThrottle struct {
	Failures        int
	Window          time.Duration
	AddressFailures int
}

// DefaultSignInThrottle returns 5 failures per (email, address) and 20
// per address, within 15 minutes.
func DefaultSignInThrottle() SignInThrottle {
	return SignInThrottle{Failures: 5, Window: 15 * time.Minute, AddressFailures: 20}
}

// RecordSignInFailure counts a failed sign-in for the email from the
// client address at now.
func (s *Store) RecordSignInFailure(ctx context.Context, email, address string, now time.Time) error {
	_, err := s.db.NewRaw("INSERT INTO sign_in_failures (email, address, failed_at) VALUES (?, ?, ?)",
		normalizeEmail(email), address, now.UTC()).Exec(ctx)
	if err != nil {
		return fmt.Errorf("billing: record sign-in failure: %w", err)
	}
	return nil
}

// SignInThrottled reports whether the email from the client address, or
// the address itself, has spent its failures at now (see
// [SignInThrottle]), and if so when it may try again.
func (s *Store) SignInThrottled(ctx context.Context, email, address string, now time.Time, t SignInThrottle) (bool, time.Time, error) {
	until, err := s.lockedUntil(ctx, now, t.Window, t.Failures, "email = ? AND address = ?", normalizeEmail(email), address)
	if err != nil {
		return false, time.Time{}, err
	}
	byAddress, err := s.lockedUntil(ctx, now, t.Window, t.AddressFailures, "address = ?", address)
	if err != nil {
		return false, time.Time{}, err
	}
	if byAddress.After(until) {
		until = byAddress
	}
	return !until.IsZero(), until, nil
}

// lockedUntil returns when the n-th newest failed sign-in matching where
// leaves the window ending at now, or the zero time when fewer than n
// match within it or n is not positive.
func (s *Store) lockedUntil(ctx context.Context, now time.Time, window time.Duration, n int, where string, args ...any) (time.Time, error) {
	if n <= 0 {
		return time.Time{}, nil
	}
	var times []time.Time
	err := s.db.NewRaw("SELECT failed_at FROM sign_in_failures WHERE "+where+" AND failed_at > ? ORDER BY failed_at DESC LIMIT ?",
		append(args, now.UTC().Add(-window), n)...).Scan(ctx, &times)
	if err != nil {
		return time.Time{}, fmt.Errorf("billing: sign-in failures: %w", err)
	}
	if len(times) < n {
		return time.Time{}, nil
	}
	return times[n-1].Add(window), nil
}
