package seal_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/tradekit/tradekit/internal/seal"
)

func TestSealer(t *testing.T) {
	t.Parallel()
	key := bytes.Repeat([]byte{7}, seal.KeySize)
	s, err := seal.New(key)
	if err != nil {
		t.Fatal(err)
	}
	const token = "at_0123456789abcdef"
	sealed := s.Seal(token, "access:1")
	if strings.Contains(sealed, token) || !strings.HasPrefix(sealed, "v1.") || !seal.IsSealed(sealed) {
		t.Fatalf("sealed %q", sealed)
	}
	if seal.IsSealed(token) {
		t.Errorf("IsSealed(%q) = true", token)
	}
	if again := s.Seal(token, "access:1"); again == sealed {
		t.Error("two seals of one token are equal: the nonce is not random")
	}
	if got, err := s.Open(sealed, "access:1"); err != nil || got != token {
		t.Errorf("Open = %q, %v", got, err)
	}
	other, _ := seal.New(bytes.Repeat([]byte{8}, seal.KeySize))
	tampered := sealed[:len(sealed)-2] + "AA"
	for name, open := range map[string]func() (string, error){
		"another context": func() (string, error) { return s.Open(sealed, "access:2") },
		"another key":     func() (string, error) { return other.Open(sealed, "access:1") },
		"tampered":        func() (string, error) { return s.Open(tampered, "access:1") },
		"plaintext":       func() (string, error) { return s.Open(token, "access:1") },
		"empty":           func() (string, error) { return s.Open("", "access:1") },
	} {
		if got, err := open(); !errors.Is(err, seal.ErrOpen) {
			t.Errorf("%s: opened to %q, %v; want ErrOpen", name, got, err)
		}
	}
	if _, err := seal.New(key[:16]); err == nil {
		t.Error("a 16-byte key was accepted")
	}
}
