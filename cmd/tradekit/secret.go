package main

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"strings"

	"github.com/tradekit/tradekit/internal/database"
	"github.com/tradekit/tradekit/server"
)

// secretKeySize is the size of TRADEKIT_SECRET_KEY: 32 bytes, AES-256.
const secretKeySize = 32

// secretKey returns the key that seals broker tokens and webhook secrets: TRADEKIT_SECRET_KEY
// (base64 of 32 bytes) when set; on SQLite, else, the key in the file
// beside the database (<path>.secret, mode 0600 whatever the umask),
// generated the first time; on PostgreSQL, else, nil: the server then refuses connections and webhooks,
// saying what to set, since instances sharing a database must share the
// key.
func (e *env) secretKey(dsn string, log *slog.Logger) ([]byte, error) {
	if v := strings.TrimSpace(e.getenv("TRADEKIT_SECRET_KEY")); v != "" {
		key, err := base64.StdEncoding.DecodeString(v)
		if err != nil || len(key) != secretKeySize {
			return nil, fmt.Errorf("serve: TRADEKIT_SECRET_KEY must be the base64 of %d bytes (e.g. openssl rand -base64 32)", secretKeySize)
		}
		return key, nil
	}
	if database.IsPostgres(dsn) {
		return nil, nil
	}
	path := strings.TrimPrefix(dsn, "sqlite:") + ".secret"
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(b)))
		if err != nil || len(key) != secretKeySize {
			return nil, fmt.Errorf("serve: %s does not hold the base64 of %d bytes; restore it, or remove it and reconnect every broker", path, secretKeySize)
		}
		return key, nil
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("serve: read the secret key: %w", err)
	}
	key := make([]byte, secretKeySize)
	rand.Read(key) // never returns an error (crypto/rand)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("serve: write the secret key: %w", err)
	}
	// 0600 whatever the umask, which may have taken even the owner's bits.
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return nil, fmt.Errorf("serve: write the secret key: %w", err)
	}
	if _, err := fmt.Fprintln(f, base64.StdEncoding.EncodeToString(key)); err != nil {
		f.Close()
		return nil, fmt.Errorf("serve: write the secret key: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("serve: write the secret key: %w", err)
	}
	log.Info("generated the key that encrypts broker tokens; keep it with the database", "path", path)
	return key, nil
}

// alpacaConfig returns the alpaca provider's configuration from the
// environment, nil when TRADEKIT_ALPACA_CLIENT_ID is unset.
func (e *env) alpacaConfig() (*server.AlpacaConfig, error) {
	id, secret := e.getenv("TRADEKIT_ALPACA_CLIENT_ID"), e.getenv("TRADEKIT_ALPACA_CLIENT_SECRET")
	if id == "" && secret == "" {
		return nil, nil
	}
	if id == "" || secret == "" {
		return nil, fmt.Errorf("serve: set both TRADEKIT_ALPACA_CLIENT_ID and TRADEKIT_ALPACA_CLIENT_SECRET, or neither")
	}
	return &server.AlpacaConfig{ClientID: id, ClientSecret: secret,
		AuthorizeURL: e.getenv("TRADEKIT_ALPACA_AUTHORIZE_URL"), TokenURL: e.getenv("TRADEKIT_ALPACA_TOKEN_URL"),
		APIURL: e.getenv("TRADEKIT_ALPACA_API_URL")}, nil
}
