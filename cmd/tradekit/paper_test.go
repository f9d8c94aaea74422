package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/tradekit/tradekit/internal/dbtest"
)

// TestPaperApps registers, lists and deletes a paper broker app through
// the CLI, on both databases, and checks that only the secret's hash is
// stored.
func TestPaperApps(t *testing.T) {
	t.Parallel()
	dbtest.EachDSN(t, func(t *testing.T, dsn string) {
		env := map[string]string{"TRADEKIT_DB": dsn}
		out, err := cli(t, env, "paper", "apps", "create", "--name", "My Bot", "--redirect-uri", "https://bot.example/cb",
			"--redirect-uri", "http://127.0.0.1:9/cb")
		if err != nil {
			t.Fatalf("paper apps create: %v\n%s", err, out)
		}
		var id, secret string
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			if v, ok := strings.CutPrefix(line, "client_id: "); ok {
				id = v
			}
			if v, ok := strings.CutPrefix(line, "client_secret: "); ok {
				secret = v
			}
		}
		if !strings.HasPrefix(id, "app_") || len(secret) < 43 {
			t.Fatalf("paper apps create printed %q", out)
		}
		db := dbtest.MustOpen(t, dsn)
		var stored string
		if err := db.NewSelect().TableExpr("paper_apps").Column("secret_hash").Where("client_id = ?", id).Scan(context.Background(), &stored); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256([]byte(secret))
		if stored != hex.EncodeToString(sum[:]) {
			t.Errorf("stored %q, want the secret's SHA-256", stored)
		}
		out, err = cli(t, env, "paper", "apps", "list")
		if err != nil || !strings.Contains(out, id) || !strings.Contains(out, "My Bot") || !strings.Contains(out, "https://bot.example/cb http://127.0.0.1:9/cb") || strings.Contains(out, secret) {
			t.Errorf("paper apps list: %v\n%s", err, out)
		}
		if out, err := cli(t, env, "paper", "apps", "delete", "--id", id); err != nil || !strings.Contains(out, "deleted app "+id) {
			t.Errorf("paper apps delete: %v\n%s", err, out)
		}
		if _, err := cli(t, env, "paper", "apps", "delete", "--id", id); err == nil || !strings.Contains(err.Error(), "not found") {
			t.Errorf("deleting it again: %v, want not found", err)
		}
		for _, args := range [][]string{
			{"paper", "apps", "create", "--name", "x"},
			{"paper", "apps", "create", "--name", "x", "--redirect-uri", "/relative"},
			{"paper", "apps", "create", "--name", "x", "--redirect-uri", "https://a.example/cb#frag"},
			{"paper", "apps", "delete"},
			{"paper", "nothing"},
		} {
			if _, err := cli(t, env, args...); err == nil {
				t.Errorf("%v: no error", args)
			}
		}
	})
}
