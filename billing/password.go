package billing

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"
	"golang.org/x/sync/semaphore"

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

// PasswordWait is the longest a password hash waits for the process's
// hashing slots (see [HashPassword]) before it gives up with
// [ErrPasswordBusy]. A hash with the default parameters takes about 0.1 s
// on an idle core, so a waiting hash lets several go first.
const PasswordWait = time.Second

// ErrPasswordBusy is returned by [HashPassword], [CheckPassword] and
// [Store.SignIn] when the hashing slots stayed taken for [PasswordWait].
// It wraps [tradekit.ErrUnavailable] (the server answers 503 with
// Retry-After), and its message is written for end users.
var ErrPasswordBusy error = &tradekit.Error{Kind: tradekit.ErrUnavailable,
	Msg: "too many sign-ins are being checked at once; retry in a moment"}

// hashGate bounds the Argon2id hashing running at once in the process to
// GOMAXPROCS lanes, as read at the first hash. A hash holds its
// parameters' memory (64 MiB by default) while it runs, so the gate also
// bounds the memory that sign-ins can take, whoever sends them.
var hashGate = sync.OnceValue(func() *gate { return newGate(runtime.GOMAXPROCS(0)) })

// gate is a weighted semaphore of slots whose waiters give up after a
// while.
type gate struct {
	size int64
	sem  *semaphore.Weighted
}

// newGate returns a gate of size slots, at least 1.
func newGate(size int) *gate {
	n := int64(max(size, 1))
	return &gate{size: n, sem: semaphore.NewWeighted(n)}
}

// do runs fn once n of the gate's slots are free (all of them when n is
// more), first come first served. It returns [ErrPasswordBusy] without
// running fn when they did not come free within wait, and ctx's error
// when ctx ended first.
func (g *gate) do(ctx context.Context, wait time.Duration, n int, fn func()) error {
	w := min(max(int64(n), 1), g.size)
	if !g.sem.TryAcquire(w) {
		wctx, cancel := context.WithTimeout(ctx, wait)
		defer cancel()
		if err := g.sem.Acquire(wctx, w); err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("billing: waiting to hash a password: %w", ctx.Err())
			}
			return ErrPasswordBusy
		}
	}
	defer g.sem.Release(w)
	fn()
	return nil
}

// idKey computes the Argon2id key of pw through the process's hash gate,
// taking a slot per lane.
func idKey(ctx context.Context, pw string, salt []byte, p PasswordParams, n uint32) ([]byte, error) {
	var key []byte
	err := hashGate().do(ctx, PasswordWait, int(p.Threads), func() {
		key = argon2.IDKey([]byte(pw), salt, p.Time, p.Memory, p.Threads, n)
	})
	return key, err
}

// HashPassword returns the Argon2id hash of pw with a random salt, in the
// PHC string format: $argon2id$v=19$m=65536,t=3,p=2$<salt>$<hash>, both in
// unpadded base64. It checks pw with [CheckPasswordRules] first.
//
// A process runs at most GOMAXPROCS lanes of hashing at once,
// HashPassword's and [CheckPassword]'s together: a hash takes one slot
// per lane (p.Threads, 2 by default), so GOMAXPROCS/2 default hashes run
// at once, which keep every CPU busy (more would only share them, each
// holding its memory longer). Past that a hash waits up to
// [PasswordWait] for its slots and then returns [ErrPasswordBusy].
func HashPassword(pw string, p PasswordParams) (string, error) {
	return hashPassword(context.Background(), pw, p)
}

// hashPassword is [HashPassword], giving up waiting for a slot when ctx
// ends.
func hashPassword(ctx context.Context, pw string, p PasswordParams) (string, error) {
	if err := CheckPasswordRules(pw); err != nil {
		return "", err
	}
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("billing: salt: %w", err)
	}
	key, err := idKey(ctx, pw, salt, p, keyLen)
	if err != nil {
		return "", err
	}
	return formatHash(p, salt, key), nil
}

// formatHash writes a hash in the PHC string format.
func formatHash(p PasswordParams, salt, key []byte) string {
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, p.Memory, p.Time, p.Threads,
		b64.EncodeToString(salt), b64.EncodeToString(key))
}

// dummyHash returns a well-formed hash with the parameters p that no
// password matches in practice (its key is zeros, not the hash of
// anything). Checking a password against it costs what checking one
// against a real hash with p costs, so an unknown email takes as long to
// refuse as a wrong password, and takes a hashing slot as well.
func dummyHash(p PasswordParams) string {
	return formatHash(p, make([]byte, saltLen), make([]byte, keyLen))
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
// time. The error is [ErrPasswordBusy] when the hashing slots did not
// come free in time (see [HashPassword]), and otherwise for a hash
// HashPassword did not write.
func CheckPassword(hash, pw string) (bool, error) {
	return checkPassword(context.Background(), hash, pw)
}

// checkPassword is [CheckPassword], giving up waiting for a slot when ctx
// ends.
func checkPassword(ctx context.Context, hash, pw string) (bool, error) {
	p, salt, key, err := parseHash(hash)
	if err != nil {
		return false, err
	}
	got, err := idKey(ctx, pw, salt, p, uint32(len(key)))
	if err != nil {
		return false, err
	}
	return subtle.ConstantTimeCompare(got, key) == 1, nil
}

// NeedsRehash reports whether hash was made with other parameters than
// p, so that a successful sign-in should store a new one.
func NeedsRehash(hash string, p PasswordParams) bool {
	q, _, _, err := parseHash(hash)
	return err != nil || q != p
}
