package connect

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
)

// KeySize is the size of a [Sealer]'s key: 32 bytes, for AES-256.
const KeySize = 32

// Sealer encrypts secrets at rest with AES-256-GCM. Each sealed value
// carries its own random 96-bit nonce and is bound to a context (the
// connection's id), so a sealed token copied onto another connection's
// row does not open.
type Sealer struct {
	aead cipher.AEAD
}

// NewSealer returns a Sealer under key, which must be [KeySize] bytes.
func NewSealer(key []byte) (*Sealer, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("connect: the secret key is %d bytes, want %d", len(key), KeySize)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	return &Sealer{aead: aead}, nil
}

// Seal returns plaintext encrypted and bound to context, as base64 text:
// "v1." and then the nonce followed by the ciphertext and its tag.
func (s *Sealer) Seal(plaintext, context string) string {
	nonce := make([]byte, s.aead.NonceSize())
	rand.Read(nonce) // never returns an error (crypto/rand)
	out := s.aead.Seal(nonce, nonce, []byte(plaintext), []byte(context))
	return "v1." + base64.RawStdEncoding.EncodeToString(out)
}

// errSealed reports a sealed value that does not open.
var errSealed = errors.New("connect: a sealed secret does not open: wrong TRADEKIT_SECRET_KEY, or the data was altered")

// Open returns the plaintext of sealed, which Seal made with the same key
// and context.
func (s *Sealer) Open(sealed, context string) (string, error) {
	if len(sealed) < 3 || sealed[:3] != "v1." {
		return "", errSealed
	}
	b, err := base64.RawStdEncoding.DecodeString(sealed[3:])
	if err != nil || len(b) < s.aead.NonceSize() {
		return "", errSealed
	}
	n := s.aead.NonceSize()
	out, err := s.aead.Open(nil, b[:n], b[n:], []byte(context))
	if err != nil {
		return "", errSealed
	}
	return string(out), nil
}
