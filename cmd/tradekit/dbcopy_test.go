package main

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/internal/seal"
)

// mustSealedSQLite returns the path of a migrated SQLite database holding
// a webhook whose secret is sealed with key, which is in the database's
// key file (<path>.secret) as serve would have written it.
func mustSealedSQLite(t *testing.T, key []byte) string {
	t.Helper()
	ctx := context.Background()
	path := dbtest.SQLiteDSN(t)
	db := dbtest.MustOpen(t, path)
	sealer, err := seal.New(key)
	if err != nil {
		t.Fatal(err)
	}
	user, hook := uuid.New(), uuid.New()
	now := time.Now().UTC().Truncate(time.Microsecond)
	if _, err := db.NewRaw(`INSERT INTO users (id, email, name, plan_id, is_admin, created_at, account_id)
		SELECT ?, 'a@example.com', 'A', id, FALSE, ?, ? FROM plans WHERE slug = 'free'`, user, now, user).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := db.NewRaw("INSERT INTO webhooks (id, user_id, url, secret, created_at) VALUES (?, ?, 'https://example.com/h', ?, ?)",
		hook, user, sealer.Seal("whsec", "webhook:"+hook.String()), now).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".secret", []byte(base64.StdEncoding.EncodeToString(key)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestDBCopyKeys copies sealed secrets SQLite → PostgreSQL → SQLite and
// checks the rules of their key: a TRADEKIT_SECRET_KEY other than the
// source's key file, or that does not open them, or none from a
// PostgreSQL source, is refused before anything is written; the way to
// PostgreSQL prints how to give its servers the key; the way back writes
// the key file beside the new SQLite database.
func TestDBCopyKeys(t *testing.T) {
	t.Parallel()
	key := []byte("0123456789abcdef0123456789abcdef")
	other := base64.StdEncoding.EncodeToString([]byte("fedcba9876543210fedcba9876543210"))
	src := mustSealedSQLite(t, key)
	pg := dbtest.PostgresDSN(t)

	_, err := cli(t, map[string]string{"TRADEKIT_SECRET_KEY": other}, "db", "copy", "--from", src, "--to", pg)
	if err == nil || !strings.Contains(err.Error(), "TRADEKIT_SECRET_KEY differs from the key of the source") {
		t.Errorf("another key in the environment: %v, want a refusal", err)
	}
	out, err := cli(t, nil, "db", "copy", "--from", src, "--to", pg)
	if err != nil {
		t.Fatal(err)
	}
	if want := "export TRADEKIT_SECRET_KEY=$(cat " + src + ".secret)"; !strings.Contains(out, want) || !strings.Contains(out, "checksums match") {
		t.Errorf("db copy to PostgreSQL printed:\n%s\nwant the line %q", out, want)
	}
	if _, err := cli(t, nil, "db", "copy", "--from", src, "--to", pg); err == nil || !strings.Contains(err.Error(), "the target is not empty: the table ") {
		t.Errorf("a second copy into the same target: %v, want a refusal naming a table", err)
	}

	back := filepath.Join(t.TempDir(), "back.db")
	_, err = cli(t, nil, "db", "copy", "--from", pg, "--to", back)
	if err == nil || !strings.Contains(err.Error(), "set TRADEKIT_SECRET_KEY") {
		t.Errorf("from PostgreSQL without a key: %v, want a refusal", err)
	}
	_, err = cli(t, map[string]string{"TRADEKIT_SECRET_KEY": other}, "db", "copy", "--from", pg, "--to", back)
	if err == nil || !strings.Contains(err.Error(), "does not open the sealed secrets of the source (webhooks.secret)") {
		t.Errorf("from PostgreSQL with the wrong key: %v, want a refusal", err)
	}
	if _, err := os.Stat(back + ".secret"); err == nil {
		t.Errorf("a refused copy wrote %s.secret", back)
	}
	env := map[string]string{"TRADEKIT_SECRET_KEY": base64.StdEncoding.EncodeToString(key)}
	if out, err := cli(t, env, "db", "copy", "--from", pg, "--to", back); err != nil {
		t.Fatalf("from PostgreSQL with the key: %v\n%s", err, out)
	}
	info, err := os.Stat(back + ".secret")
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("%s.secret has mode %v, want 0600", back, info.Mode().Perm())
	}
	got, err := readKeyFile(back + ".secret")
	if err != nil || string(got) != string(key) {
		t.Errorf("%s.secret holds %q (%v), want the key", back, got, err)
	}
}

// TestDBCopyFlags checks the errors of bad command lines, which name the
// flag at fault and never print a DSN's password.
func TestDBCopyFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "empty.db"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"no from", []string{"--to", "x.db"}, "--from is required"},
		{"no to", []string{"--from", "x.db"}, "--to is required"},
		{"same", []string{"--from", "x.db", "--to", "sqlite:x.db"}, "name the same database"},
		{"db", []string{"--db", "x.db", "--from", "a.db", "--to", "b.db"}, "--db is not used"},
		{"unreachable", []string{"--from", "postgres://u:hunter2@127.0.0.1:1/x?sslmode=disable", "--to", filepath.Join(dir, "t.db")}, "--from"},
		{"missing", []string{"--from", filepath.Join(dir, "missing.db"), "--to", filepath.Join(dir, "t.db")}, "--from: " + filepath.Join(dir, "missing.db") + ": no such file or directory"},
		{"not migrated", []string{"--from", filepath.Join(dir, "empty.db"), "--to", filepath.Join(dir, "t.db")}, "not a migrated Tradekit database"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := cli(t, nil, append([]string{"db", "copy"}, tt.args...)...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("db copy %v: %v, want an error with %q", tt.args, err, tt.want)
			}
			if err != nil && strings.Contains(err.Error(), "hunter2") {
				t.Errorf("the error shows the password: %v", err)
			}
		})
	}
}
