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

// SignInThrottle bounds failed sign-ins: past Failures for one email
// within Window, [Store.SignInThrottled] refuses further tries until the
// oldest counted failure leaves the window. Counted in the database, so
// the bound holds across instances.
type SignInThrottle struct {
	Failures int
	Window   time.Duration
}

// DefaultSignInThrottle returns 5 failures per 15 minutes.
func DefaultSignInThrottle() SignInThrottle {
	return SignInThrottle{Failures: 5, Window: 15 * time.Minute}
}

// RecordSignInFailure counts a failed sign-in for the email at now.
func (s *Store) RecordSignInFailure(ctx context.Context, email string, now time.Time) error {
	_, err := s.db.NewRaw("INSERT INTO sign_in_failures (email, failed_at) VALUES (?, ?)", normalizeEmail(email), now.UTC()).Exec(ctx)
	if err != nil {
		return fmt.Errorf("billing: record sign-in failure: %w", err)
	}
	return nil
}

// SignInThrottled reports whether the email has spent its failures at
// now, and if so when it may try again.
func (s *Store) SignInThrottled(ctx context.Context, email string, now time.Time, t SignInThrottle) (bool, time.Time, error) {
	var times []time.Time
	err := s.db.NewRaw("SELECT failed_at FROM sign_in_failures WHERE email = ? AND failed_at > ? ORDER BY failed_at",
		normalizeEmail(email), now.UTC().Add(-t.Window)).Scan(ctx, &times)
	if err != nil {
		return false, time.Time{}, fmt.Errorf("billing: sign-in failures: %w", err)
	}
	if len(times) < t.Failures {
		return false, time.Time{}, nil
	}
	return true, times[len(times)-t.Failures].Add(t.Window), nil
}
