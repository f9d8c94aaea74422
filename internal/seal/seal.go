package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// KeySize is the size of a [Sealer]'s key: 32 bytes, for AES-256.
const KeySize = 32

// prefix starts every sealed value: the version of the format.
const prefix = "v1."

// ErrOpen reports a sealed value that does not open: another key, another
// context, or altered data.
var ErrOpen = errors.New("seal: a sealed secret does not open: wrong TRADEKIT_SECRET_KEY, or the data was altered")

// Sealer encrypts secrets at rest with AES-256-GCM. Each sealed value
// carries its own random 96-bit nonce and is bound to a context (such as
// the id of the row holding it), so that a sealed value copied onto
// another row does not open.
type Sealer struct {
	aead cipher.AEAD
}

// New returns a Sealer under key, which must be [KeySize] bytes.
func New(key []byte) (*Sealer, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("seal: the secret key is %d bytes, want %d", len(key), KeySize)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	return &Sealer{aead: aead}, nil
}

// Seal returns plaintext encrypted and bound to context, as base64 text:
// "v1." and then the nonce followed by the ciphertext and its tag.
func (s *Sealer) Seal(plaintext, context string) string {
	nonce := make([]byte, s.aead.NonceSize())
	rand.Read(nonce) // never returns an error (crypto/rand)
	out := s.aead.Seal(nonce, nonce, []byte(plaintext), []byte(context))
	return prefix + base64.RawStdEncoding.EncodeToString(out)
}

// Open returns the plaintext of sealed, which Seal made with the same key
// and context. The error is [ErrOpen] when it does not open.
func (s *Sealer) Open(sealed, context string) (string, error) {
	if !IsSealed(sealed) {
		return "", ErrOpen
	}
	b, err := base64.RawStdEncoding.DecodeString(sealed[len(prefix):])
	if err != nil || len(b) < s.aead.NonceSize() {
		return "", ErrOpen
	}
	n := s.aead.NonceSize()
	out, err := s.aead.Open(nil, b[:n], b[n:], []byte(context))
	if err != nil {
		return "", ErrOpen
	}
	return string(out), nil
}

// IsSealed reports whether v has the form of a value [Sealer.Seal] made:
// a column holding secrets written before they were sealed tells the
// two apart with it. The secrets sealed must therefore never start with
// "v1." themselves.
func IsSealed(v string) bool { return strings.HasPrefix(v, prefix) }
