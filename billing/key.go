package billing

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"strings"
	"time"

	"github.com/google/uuid"
)

// KeyPrefix starts every Tradekit API key.
const KeyPrefix = "tk_"

// secretBytes is the size of a key's random part: 25 bytes, 200 bits,
// 40 base32 characters.
const secretBytes = 25

// keyEncoding writes secrets in lowercase base32 without padding: no
// characters that need escaping in a header, a URL or a shell.
var keyEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// User is an account: the owner of API keys and of user data.
type User struct {
	ID uuid.UUID `bun:"id,pk"`
	// AccountID is the user's account: the users sharing it are its
	// members, and its administrators manage their keys. A user created
	// on their own starts an account whose id is their own.
	AccountID uuid.UUID `bun:"account_id"`
	Email     string    `bun:"email"`
	Name      string    `bun:"name"`
	PlanID    uuid.UUID `bun:"plan_id"`
	IsAdmin   bool      `bun:"is_admin"`
	CreatedAt time.Time `bun:"created_at"`
	// PasswordHash is the Argon2id hash of the user's dashboard password
	// (see [HashPassword]); nil without one.
	PasswordHash *string `bun:"password_hash"`
}

// APIKey is a stored API key: never the secret, only its hash and a
// display prefix.
type APIKey struct {
	ID         uuid.UUID  `bun:"id,pk"`
	UserID     uuid.UUID  `bun:"user_id"`
	Name       string     `bun:"name"`
	Prefix     string     `bun:"prefix"` // "tk_" and the first 8 characters of the secret
	Hash       string     `bun:"key_hash"`
	CreatedAt  time.Time  `bun:"created_at"`
	LastUsedAt *time.Time `bun:"last_used_at"`
	RevokedAt  *time.Time `bun:"revoked_at"`
}

// IsRevoked reports whether the key has been revoked.
func (k APIKey) IsRevoked() bool { return k.RevokedAt != nil }

// newKey returns a fresh random key and its stored form.
func newKey() (key string, prefix string, hash string) {
	b := make([]byte, secretBytes)
	rand.Read(b) // never returns an error (crypto/rand)
	key = KeyPrefix + keyEncoding.EncodeToString(b)
	return key, key[:len(KeyPrefix)+8], HashKey(key)
}

// HashKey returns the hex SHA-256 of key, the form in which keys are stored
// and looked up. Keys carry 200 random bits, so a fast hash suffices: there
// is nothing to brute-force.
func HashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// wellFormed reports whether key could be a Tradekit key, so that garbage
// is refused before any lookup.
func wellFormed(key string) bool {
	secret, ok := strings.CutPrefix(key, KeyPrefix)
	if !ok || len(secret) != keyEncoding.EncodedLen(secretBytes) {
		return false
	}
	_, err := keyEncoding.DecodeString(secret)
	return err == nil
}
