package billing

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"

	"github.com/tradekit/tradekit"
)

// Password lengths, in characters.
const (
	MinPassword = 12
	MaxPassword = 256
)

// PasswordParams are the cost parameters of Argon2id (RFC 9106): memory
// in KiB, passes over it, and lanes.
type PasswordParams struct {
	Memory  uint32
	Time    uint32
	Threads uint8
}

// DefaultPasswordParams returns the parameters new hashes use: 64 MiB,
// 3 passes, 2 lanes, RFC 9106's second recommended option (which asks
// for 4 lanes; 2 keep the cost on a 2-core server near 0.1 s).
func DefaultPasswordParams() PasswordParams {
	return PasswordParams{Memory: 64 << 10, Time: 3, Threads: 2}
}

const (
	saltLen = 16 // bytes
	keyLen  = 32 // bytes
)

var b64 = base64.RawStdEncoding

// CheckPasswordRules returns a *tradekit.ParamError naming "password"
// when pw is too short, too long or not UTF-8.
func CheckPasswordRules(pw string) error {
	if !utf8.ValidString(pw) {
		return &tradekit.ParamError{Param: "password", Msg: "is not valid UTF-8"}
	}
	switch n := utf8.RuneCountInString(pw); {
	case n < MinPassword:
		return &tradekit.ParamError{Param: "password", Msg: fmt.Sprintf("must be at least %d characters, not %d", MinPassword, n)}
	case n > MaxPassword:
		return &tradekit.ParamError{Param: "password", Msg: fmt.Sprintf("must be at most %d characters", MaxPassword)}
	}
	return nil
}

// HashPassword returns the Argon2id hash of pw with a random salt, in the
// PHC string format: $argon2id$v=19$m=65536,t=3,p=2$<salt>$<hash>, both in
// unpadded base64. It checks pw with [CheckPasswordRules] first.
func HashPassword(pw string, p PasswordParams) (string, error) {
	if err := CheckPasswordRules(pw); err != nil {
		return "", err
	}
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("billing: salt: %w", err)
	}
	key := argon2.IDKey([]byte(pw), salt, p.Time, p.Memory, p.Threads, keyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, p.Memory, p.Time, p.Threads,
		b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// errBadHash is the error of a stored hash that is not one HashPassword
// writes: stored data gone bad, of no tradekit kind.
var errBadHash = errors.New("billing: malformed password hash")

// parseHash reads a hash written by HashPassword.
func parseHash(hash string) (p PasswordParams, salt, key []byte, err error) {
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" || parts[2] != fmt.Sprintf("v=%d", argon2.Version) {
		return p, nil, nil, errBadHash
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.Memory, &p.Time, &p.Threads); err != nil ||
		p.Memory == 0 || p.Time == 0 || p.Threads == 0 || p.Memory > 4<<20 {
		return p, nil, nil, errBadHash
	}
	if salt, err = b64.DecodeString(parts[4]); err != nil || len(salt) < 8 {
		return p, nil, nil, errBadHash
	}
	if key, err = b64.DecodeString(parts[5]); err != nil || len(key) < 16 {
		return p, nil, nil, errBadHash
	}
	return p, salt, key, nil
}

// CheckPassword reports whether pw matches hash, comparing in constant
// time. The error is for a hash HashPassword did not write.
func CheckPassword(hash, pw string) (bool, error) {
	p, salt, key, err := parseHash(hash)
	if err != nil {
		return false, err
	}
	got := argon2.IDKey([]byte(pw), salt, p.Time, p.Memory, p.Threads, uint32(len(key)))
	return subtle.ConstantTimeCompare(got, key) == 1, nil
}

// NeedsRehash reports whether hash was made with other parameters than
// p, so that a successful sign-in should store a new one.
func NeedsRehash(hash string, p PasswordParams) bool {
	q, _, _, err := parseHash(hash)
	return err != nil || q != p
}
