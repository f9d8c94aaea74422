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
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/tradekit/tradekit/alerts"
	"github.com/tradekit/tradekit/billing"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/internal/seal"
)

func TestSecretKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	dir := t.TempDir()
	dsn := filepath.Join(dir, "t.db")
	db := dbtest.MustOpen(t, dsn)
	e := &env{getenv: func(string) string { return "" }}

	// SQLite without the variable: generated once into a 0600 file.
	k1, err := e.secretKey(ctx, db, dsn, log)
	if err != nil || len(k1) != 32 {
		t.Fatalf("first: %d bytes, %v", len(k1), err)
	}
	fi, err := os.Stat(dsn + ".secret")
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, %v", fi.Mode(), err)
	}
	k2, err := e.secretKey(ctx, db, "sqlite:"+dsn, log)
	if err != nil || !bytes.Equal(k1, k2) {
		t.Errorf("second read gave another key: %v", err)
	}

	// PostgreSQL without the variable: none.
	if k, err := e.secretKey(ctx, db, "postgres://u@127.0.0.1/x", log); k != nil || err != nil {
		t.Errorf("postgres without TRADEKIT_SECRET_KEY: %v, %v", k, err)
	}

	// The variable wins, and must be 32 bytes of base64.
	want := bytes.Repeat([]byte{9}, 32)
	e.getenv = func(string) string { return base64.StdEncoding.EncodeToString(want) }
	if k, err := e.secretKey(ctx, db, dsn, log); err != nil || !bytes.Equal(k, want) {
		t.Errorf("from the environment: %v, %v", k, err)
	}
	e.getenv = func(string) string { return "c2hvcnQ=" }
	if _, err := e.secretKey(ctx, db, dsn, log); err == nil || !strings.Contains(err.Error(), "TRADEKIT_SECRET_KEY") {
		t.Errorf("a short key: %v", err)
	}

	// A damaged file is an error, not a new key.
	e.getenv = func(string) string { return "" }
	os.WriteFile(dsn+".secret", []byte("garbage\n"), 0o600)
	if _, err := e.secretKey(ctx, db, dsn, log); err == nil {
		t.Error("a damaged key file was accepted")
	}
}

// TestSecretKeyRestoredWithout checks that a SQLite database holding
// sealed secrets, copied without its key file (sqlite3's .backup copies
// the database alone), is refused rather than given a new key that opens
// none of them, and so is another key, each error naming the file or
// the variable; with its key restored, it starts.
func TestSecretKeyRestoredWithout(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	dir := t.TempDir()
	dsn := filepath.Join(dir, "tradekit.db")
	db := dbtest.MustOpen(t, dsn)
	e := &env{getenv: func(string) string { return "" }}
	key, err := e.secretKey(ctx, db, dsn, log)
	if err != nil {
		t.Fatal(err)
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
	sealer, err := seal.New(key)
	if err != nil {
		t.Fatal(err)
	}
	hook := alerts.Webhook{ID: uuid.New(), UserID: u.ID, URL: "https://example.com/h", CreatedAt: time.Now().UTC()}
	hook.Secret = sealer.Seal("whsec_x", alerts.SealedColumns()[0].Prefix+hook.ID.String())
	if _, err := db.NewInsert().Model(&hook).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := e.secretKey(ctx, db, dsn, log); err != nil {
		t.Fatalf("with its key file: %v", err)
	}

	// The copy without the key file.
	if err := os.Rename(dsn+".secret", dsn+".secret.saved"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.secretKey(ctx, db, dsn, log); err == nil || !strings.Contains(err.Error(), dsn+".secret is missing") ||
		!strings.Contains(err.Error(), "webhooks.secret") {
		t.Errorf("without the key file: %v, want an error naming the missing file and the sealed column", err)
	}
	if _, err := os.Stat(dsn + ".secret"); err == nil {
		t.Error("a new key file was written")
	}
	other := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	e.getenv = func(string) string { return other }
	if _, err := e.secretKey(ctx, db, dsn, log); err == nil || !strings.Contains(err.Error(), "TRADEKIT_SECRET_KEY does not open") {
		t.Errorf("another key in the environment: %v, want it refused by name", err)
	}
	e.getenv = func(string) string { return base64.StdEncoding.EncodeToString(key) }
	if _, err := e.secretKey(ctx, db, dsn, log); err != nil {
		t.Errorf("the right key in the environment: %v", err)
	}
	e.getenv = func(string) string { return "" }
	if err := os.Rename(dsn+".secret.saved", dsn+".secret"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.secretKey(ctx, db, dsn, log); err != nil {
		t.Errorf("with the key file restored: %v", err)
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

// TestNewKeyFileRace: processes starting on one new SQLite database at
// the same moment each make a key; the file appears whole, and they all
// end with the one it holds.
func TestNewKeyFileRace(t *testing.T) {
	t.Parallel()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	path := filepath.Join(t.TempDir(), "t.db.secret")
	keys := make([][]byte, 8)
	errs := make([]error, len(keys))
	var wg sync.WaitGroup
	for i := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			keys[i], errs[i] = newKeyFile(path, log)
		}()
	}
	wg.Wait()
	stored, err := readKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range keys {
		if errs[i] != nil || !bytes.Equal(keys[i], stored) {
			t.Errorf("maker %d: %v, a key other than the file's: %t", i, errs[i], !bytes.Equal(keys[i], stored))
		}
	}
	if matches, _ := filepath.Glob(path + ".new-*"); len(matches) != 0 {
		t.Errorf("left behind: %v", matches)
	}
}
