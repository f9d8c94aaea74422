package portal

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"net"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/uptrace/bun"
)

// The consent form's defences: a CSRF token the broker signs and accepts
// once, and a bound on the accounts one client address may open.

// DefaultSignupLimit is how many paper accounts one client address may
// open in a UTC hour when Config.SignupLimit is zero.
const DefaultSignupLimit = 10

// signupWindow is the window of the sign-up limit: UTC clock hours.
const signupWindow = time.Hour

// nonceBytes is the size of a consent token's nonce: 128 bits.
const nonceBytes = 16

// tokenLabel starts every message the consent tokens' HMAC signs, so that
// no other use of the key can produce one.
const tokenLabel = "tradekit paper consent token v1\x00"

// maxLoginHint bounds the login_hint shown on the consent page, in bytes:
// the longest email address SMTP allows.
const maxLoginHint = 254

// newKey returns a random key for the consent tokens, used when
// Config.SigningKey is nil.
func newKey() []byte {
	k := make([]byte, 32)
	rand.Read(k) // never returns an error (crypto/rand)
	return k
}

// issueToken returns a CSRF token for the consent form of ar, shown to the
// browser whose CSRF cookie holds binding, valid until exp:
//
//	base64url(nonce ‖ exp) "." base64url(HMAC-SHA256(key, label ‖ nonce ‖ exp ‖ binding ‖ ar))
//
// where ar is every field of the request the form posts back, each
// length-prefixed. The broker stores nothing until the form is posted.
func (p *Portal) issueToken(ar authRequest, binding string, exp time.Time) string {
	payload := make([]byte, nonceBytes, nonceBytes+8)
	rand.Read(payload) // never returns an error (crypto/rand)
	payload = binary.BigEndian.AppendUint64(payload, uint64(exp.Unix()))
	enc := base64.RawURLEncoding
	return enc.EncodeToString(payload) + "." + enc.EncodeToString(p.tokenMAC(payload, ar, binding))
}

// tokenMAC returns the HMAC of a consent token's payload bound to the
// browser's cookie and to the authorization request.
func (p *Portal) tokenMAC(payload []byte, ar authRequest, binding string) []byte {
	m := hmac.New(sha256.New, p.key)
	m.Write([]byte(tokenLabel))
	m.Write(payload)
	var n [binary.MaxVarintLen64]byte
	for _, s := range []string{binding, ar.client.ID, ar.redirectURI, ar.responseType, ar.state, ar.scope,
		ar.codeChallenge, ar.codeChallengeMethod, ar.loginHint} {
		m.Write(n[:binary.PutUvarint(n[:], uint64(len(s)))])
		m.Write([]byte(s))
	}
	return m.Sum(nil)
}

// verifyToken checks a consent form's CSRF token: that the broker signed
// it for this request and this browser's cookie, and that it has not
// expired at now. It returns the token's nonce, in hex, and its expiry.
// It does not check that the token is unused: [claimNonce] does, when the
// decision is stored.
func (p *Portal) verifyToken(tok string, ar authRequest, binding string, now time.Time) (string, time.Time, bool) {
	enc := base64.RawURLEncoding
	pl, m, ok := strings.Cut(tok, ".")
	if !ok || len(pl) != enc.EncodedLen(nonceBytes+8) || len(m) != enc.EncodedLen(sha256.Size) {
		return "", time.Time{}, false
	}
	payload, err1 := enc.DecodeString(pl)
	mac, err2 := enc.DecodeString(m)
	if err1 != nil || err2 != nil || !hmac.Equal(mac, p.tokenMAC(payload, ar, binding)) {
		return "", time.Time{}, false
	}
	exp := binary.BigEndian.Uint64(payload[nonceBytes:])
	if exp > math.MaxInt64 || !now.Before(time.Unix(int64(exp), 0)) {
		return "", time.Time{}, false
	}
	return hex.EncodeToString(payload[:nonceBytes]), time.Unix(int64(exp), 0).UTC(), true
}

// errTokenUsed is the page shown for a consent form posted a second time.
var errTokenUsed = &pageError{http.StatusForbidden, "This form was already submitted. Go back to the application and connect again."}

// claimNonce records that the consent token with the nonce was used, and
// returns errTokenUsed when it was used already, maybe by a concurrent
// request. Run inside the decision's transaction, the claim is undone
// with it: a decision that fails leaves its form usable.
func claimNonce(ctx context.Context, db bun.IDB, nonce string, exp time.Time) error {
	res, err := db.NewRaw("INSERT INTO paper_consent_nonces (nonce, expires_at) VALUES (?, ?) ON CONFLICT (nonce) DO NOTHING",
		nonce, exp.Unix()).Exec(ctx)
	if err != nil {
		return fmt.Errorf("paper: claim consent token: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("paper: claim consent token: %w", err)
	}
	if n != 1 {
		return errTokenUsed
	}
	return nil
}

// retryError is a page error that goes away with time: the page answers
// with a Retry-After header.
type retryError struct {
	*pageError
	after time.Duration
}

func (e *retryError) Unwrap() error { return e.pageError }

// countSignup counts a new account opened from the client address addr at
// now, unless addr has opened p.signupLimit in the current UTC hour
// already; then it counts nothing and returns a *retryError of status 429
// that lasts until the hour ends. One upsert does it, so that concurrent
// sign-ups, on any number of Brokers sharing the database, never exceed
// the limit.
func (p *Portal) countSignup(ctx context.Context, db bun.IDB, addr string, now time.Time) error {
	if p.signupLimit < 0 {
		return nil
	}
	start := now.Truncate(signupWindow)
	var counts []int
	err := db.NewRaw(`INSERT INTO paper_signups (address, window_start, count) VALUES (?, ?, 1)
		ON CONFLICT (address, window_start) DO UPDATE SET count = paper_signups.count + 1
		WHERE paper_signups.count < ?
		RETURNING count`, addr, start.Unix(), p.signupLimit).Scan(ctx, &counts)
	if err != nil {
		return fmt.Errorf("paper: count sign-up: %w", err)
	}
	if len(counts) == 1 {
		return nil
	}
	after := start.Add(signupWindow).Sub(now)
	minutes := int(math.Ceil(after.Minutes()))
	return &retryError{
		pageError: &pageError{http.StatusTooManyRequests, fmt.Sprintf(
			"Your network has opened %d paper accounts this hour, the most this broker allows. Try again in %d minute%s.",
			p.signupLimit, minutes, plural(minutes))},
		after: after,
	}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// purgeConsent deletes the used consent tokens that have expired and the
// sign-up counts of past hours. It runs after each decision, outside its
// transaction, and only logs its errors: what it leaves is deleted next
// time.
func (p *Portal) purgeConsent(ctx context.Context, now time.Time) {
	if _, err := p.db.NewRaw("DELETE FROM paper_consent_nonces WHERE expires_at < ?", now.Unix()).Exec(ctx); err != nil {
		p.log.Warn("paper: purge used consent tokens", "err", err)
	}
	if _, err := p.db.NewRaw("DELETE FROM paper_signups WHERE window_start < ?", now.Truncate(signupWindow).Unix()).Exec(ctx); err != nil {
		p.log.Warn("paper: purge sign-up counts", "err", err)
	}
}

// peerAddress is the default Config.ClientAddress: the host part of the
// request's RemoteAddr.
func peerAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// isLoginHint reports whether s may be shown as a login_hint: at most
// maxLoginHint bytes of printable UTF-8.
func isLoginHint(s string) bool {
	if len(s) > maxLoginHint || !utf8.ValidString(s) {
		return false
	}
	return strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) < 0
}
