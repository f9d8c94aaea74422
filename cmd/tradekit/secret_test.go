package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/tradekit/tradekit/alerts"
	"github.com/tradekit/tradekit/billing"
	"github.com/tradekit/tradekit/internal/dbtest"
)

func TestSecretKey(t *testing.T) {
	t.Parallel()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	dir := t.TempDir()
	dsn := filepath.Join(dir, "t.db")
	e := &env{getenv: func(string) string { return "" }}

	// SQLite without the variable: generated once into a 0600 file.
	k1, err := e.secretKey(dsn, log)
	if err != nil || len(k1) != 32 {
		t.Fatalf("first: %d bytes, %v", len(k1), err)
	}
	fi, err := os.Stat(dsn + ".secret")
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, %v", fi.Mode(), err)
	}
	k2, err := e.secretKey("sqlite:"+dsn, log)
	if err != nil || !bytes.Equal(k1, k2) {
		t.Errorf("second read gave another key: %v", err)
	}

	// PostgreSQL without the variable: none.
	if k, err := e.secretKey("postgres://u@127.0.0.1/x", log); k != nil || err != nil {
		t.Errorf("postgres without TRADEKIT_SECRET_KEY: %v, %v", k, err)
	}

	// The variable wins, and must be 32 bytes of base64.
	want := bytes.Repeat([]byte{9}, 32)
	e.getenv = func(string) string { return base64.StdEncoding.EncodeToString(want) }
	if k, err := e.secretKey(dsn, log); err != nil || !bytes.Equal(k, want) {
		t.Errorf("from the environment: %v, %v", k, err)
	}
	e.getenv = func(string) string { return "c2hvcnQ=" }
	if _, err := e.secretKey(dsn, log); err == nil || !strings.Contains(err.Error(), "TRADEKIT_SECRET_KEY") {
		t.Errorf("a short key: %v", err)
	}

	// A damaged file is an error, not a new key.
	e.getenv = func(string) string { return "" }
	os.WriteFile(dsn+".secret", []byte("garbage\n"), 0o600)
	if _, err := e.secretKey(dsn, log); err == nil {
		t.Error("a damaged key file was accepted")
	}
}

// TestServeNeedsKeyForSealedWebhooks checks that serve on PostgreSQL
// without TRADEKIT_SECRET_KEY refuses to start when live webhooks hold
// signing secrets sealed under a key, which it could not open to sign.
func TestServeNeedsKeyForSealedWebhooks(t *testing.T) {
	t.Parallel()
	db := dbtest.Postgres(t)
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	e := &env{getenv: func(string) string { return "" }}
	serveConfig := func() error {
		_, err := e.brokersConfig(ctx, db, "postgres://u@127.0.0.1/x", "http://127.0.0.1:8080", nil, log)
		return err
	}
	bs := billing.NewStore(db)
	p, err := bs.Plan(ctx, "free")
	if err != nil {
		t.Fatal(err)
	}
	u := billing.User{Email: "hooks@example.com", Name: "Hooks", PlanID: p.ID}
	if err := bs.CreateUser(ctx, &u, time.Now()); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	hooks := []alerts.Webhook{
		{ID: uuid.New(), UserID: u.ID, URL: "https://example.com/legacy", Secret: "whsec_plaintext", CreatedAt: now},
		{ID: uuid.New(), UserID: u.ID, URL: "https://example.com/deleted", Secret: "v1.sealed", CreatedAt: now, DeletedAt: &now},
	}
	if _, err := db.NewInsert().Model(&hooks).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := serveConfig(); err != nil {
		t.Fatalf("with a plaintext and a deleted webhook: %v, want none", err)
	}
	live := alerts.Webhook{ID: uuid.New(), UserID: u.ID, URL: "https://example.com/sealed", Secret: "v1.sealed", CreatedAt: now}
	if _, err := db.NewInsert().Model(&live).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := serveConfig(); err == nil || !strings.Contains(err.Error(), "webhooks (1)") || !strings.Contains(err.Error(), "TRADEKIT_SECRET_KEY") {
		t.Errorf("with a sealed webhook secret: %v, want an error naming the webhooks and TRADEKIT_SECRET_KEY", err)
	}
}
