package paper

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base32"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
)

// Alpaca-style API keys: a key id and a secret that a program sends in the
// headers APCA-API-KEY-ID and APCA-API-SECRET-KEY instead of an OAuth
// access token, as Alpaca's SDKs do when given a key instead of a token.

// The headers of an API key, as Alpaca names them.
const (
	keyIDHeader     = "APCA-API-KEY-ID"
	keySecretHeader = "APCA-API-SECRET-KEY"
)

// MaxAPIKeys is how many API keys that are not revoked one account may
// hold at once.
const MaxAPIKeys = 10

// maxKeyName is the longest name of an API key, in bytes.
const maxKeyName = 100

// The shapes of a key: its id is "PK" and 18 characters of A–Z and 2–7
// (90 random bits), as Alpaca's paper key ids are "PK" and 18 capitals
// and digits; its secret is 30 random bytes in unpadded base64url, 40
// characters like Alpaca's secrets.
const (
	keyIDLen        = 20
	keySecretBytes  = 30
	keySecretLength = 40
)

// APIKey is an Alpaca-style API key of a paper account. Its secret is
// shown once, when [Broker.CreateAPIKey] creates it, and stored only as
// its SHA-256.
type APIKey struct {
	// ID is the key id, sent in the header APCA-API-KEY-ID: "PK" and 18
	// characters of A–Z and 2–7.
	ID string
	// AccountID is the account the key reaches.
	AccountID uuid.UUID
	// Name is its holder's label for the key; it may be empty.
	Name string
	// CreatedAt is when the key was created.
	CreatedAt time.Time
}

// apiKeyRow is a row of paper_api_keys.
type apiKeyRow struct {
	bun.BaseModel `bun:"table:paper_api_keys"`

	KeyID      string     `bun:"key_id,pk"`
	AccountID  uuid.UUID  `bun:"account_id"`
	Name       string     `bun:"name"`
	SecretHash string     `bun:"secret_hash"`
	CreatedAt  time.Time  `bun:"created_at"`
	RevokedAt  *time.Time `bun:"revoked_at"`
}

func (r apiKeyRow) key() APIKey {
	return APIKey{ID: r.KeyID, AccountID: r.AccountID, Name: r.Name, CreatedAt: r.CreatedAt.UTC()}
}

// newKeyID returns a new key id: "PK" and 18 characters of A–Z and 2–7.
func newKeyID() string {
	b := make([]byte, 12)
	rand.Read(b) // never returns an error (crypto/rand)
	return "PK" + base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b)[:keyIDLen-2]
}

// newKeySecret returns a new key secret: 240 random bits in unpadded
// base64url, 40 characters.
func newKeySecret() string {
	b := make([]byte, keySecretBytes)
	rand.Read(b) // never returns an error (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

// IsKeyID reports whether s has the form of an API key id: "PK" and 18
// characters of A–Z and 2–7.
func IsKeyID(s string) bool {
	if len(s) != keyIDLen || !strings.HasPrefix(s, "PK") {
		return false
	}
	return strings.IndexFunc(s[2:], func(r rune) bool { return !(r >= 'A' && r <= 'Z' || r >= '2' && r <= '7') }) < 0
}

// isKeySecret reports whether s could be a value of newKeySecret.
func isKeySecret(s string) bool {
	if len(s) != keySecretLength {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(s)
	return err == nil
}

// CreateAPIKey creates an API key of the account with the given name
// (trimmed; it may be empty) and returns it and its secret: the only time
// the secret is shown, since only its SHA-256 is stored. The error wraps
// [tradekit.ErrNotFound] when there is no such account,
// [tradekit.ErrInvalid] for a name longer than 100 bytes or of several
// lines, and [tradekit.ErrConflict] when the account holds [MaxAPIKeys]
// keys already.
func (b *Broker) CreateAPIKey(ctx context.Context, accountID uuid.UUID, name string) (APIKey, string, error) {
	name = strings.TrimSpace(name)
	if len(name) > maxKeyName || strings.ContainsAny(name, "\n\r") {
		return APIKey{}, "", fmt.Errorf("paper: %w", &tradekit.ParamError{Param: "name",
			Msg: fmt.Sprintf("must be at most %d characters on one line", maxKeyName)})
	}
	if strings.IndexByte(name, 0) >= 0 {
		return APIKey{}, "", fmt.Errorf("paper: %w", &tradekit.ParamError{Param: "name", Msg: "must not contain a NUL character"})
	}
	secret := newKeySecret()
	r := apiKeyRow{KeyID: newKeyID(), AccountID: accountID, Name: name, SecretHash: HashSecret(secret), CreatedAt: b.clock()}
	err := b.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		// Locking the account serialises the count and the insert.
		if _, err := accountByID(ctx, tx, accountID, true); err != nil {
			return err
		}
		n, err := tx.NewSelect().Model((*apiKeyRow)(nil)).Where("account_id = ? AND revoked_at IS NULL", accountID).Count(ctx)
		if err != nil {
			return fmt.Errorf("paper: count API keys: %w", err)
		}
		if n >= MaxAPIKeys {
			return fmt.Errorf("paper: %w", tradekit.Errorf(tradekit.ErrConflict,
				"an account holds at most %d API keys: revoke one first", MaxAPIKeys))
		}
		if _, err := tx.NewInsert().Model(&r).Exec(ctx); err != nil {
			return fmt.Errorf("paper: create API key: %w", err)
		}
		return nil
	})
	if err != nil {
		return APIKey{}, "", err
	}
	return r.key(), secret, nil
}

// APIKeys returns the account's API keys that are not revoked, oldest
// first.
func (b *Broker) APIKeys(ctx context.Context, accountID uuid.UUID) ([]APIKey, error) {
	var rows []apiKeyRow
	err := b.db.NewSelect().Model(&rows).Where("account_id = ? AND revoked_at IS NULL", accountID).
		Order("created_at", "key_id").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("paper: API keys: %w", err)
	}
	out := make([]APIKey, len(rows))
	for i, r := range rows {
		out[i] = r.key()
	}
	return out, nil
}

// RevokeAPIKey revokes the account's API key with the id: from then on a
// request with it answers 401. The row stays, revoked. The error wraps
// [tradekit.ErrNotFound] when the account has no such key, or has
// revoked it already.
func (b *Broker) RevokeAPIKey(ctx context.Context, accountID uuid.UUID, keyID string) error {
	res, err := b.db.NewUpdate().Model((*apiKeyRow)(nil)).Set("revoked_at = ?", b.clock()).
		Where("key_id = ? AND account_id = ? AND revoked_at IS NULL", keyID, accountID).Exec(ctx)
	if err != nil {
		return fmt.Errorf("paper: revoke API key: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("paper: revoke API key: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("paper: %w", tradekit.Errorf(tradekit.ErrNotFound, "API key %s not found", tradekit.Quote(keyID)))
	}
	return nil
}

// hasKeyHeaders reports whether the request carries either header of an
// API key.
func hasKeyHeaders(r *http.Request) bool {
	return len(r.Header.Values(keyIDHeader)) > 0 || len(r.Header.Values(keySecretHeader)) > 0
}

// apiKey returns the account of the request's API key: the headers
// APCA-API-KEY-ID and APCA-API-SECRET-KEY, each once. The error wraps
// [tradekit.ErrUnauthorized] when either is missing or repeated, or the
// pair is not a key of an account that is not revoked.
func (b *Broker) apiKey(r *http.Request) (account, error) {
	ids, secrets := r.Header.Values(keyIDHeader), r.Header.Values(keySecretHeader)
	if len(ids) != 1 || len(secrets) != 1 || !IsKeyID(ids[0]) || !isKeySecret(secrets[0]) {
		return account{}, errUnauthorized
	}
	// The secret carries 240 random bits, so looking it up by its hash
	// leaks nothing through timing, as with the access tokens.
	var a account
	err := b.db.NewSelect().Model(&a).
		Join("JOIN paper_api_keys AS k ON k.account_id = account.id").
		Where("k.key_id = ? AND k.secret_hash = ? AND k.revoked_at IS NULL", ids[0], HashSecret(secrets[0])).
		Scan(r.Context())
	if errors.Is(err, sql.ErrNoRows) {
		return account{}, errUnauthorized
	}
	if err != nil {
		return account{}, fmt.Errorf("paper: API key: %w", err)
	}
	return a, nil
}
