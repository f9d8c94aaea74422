package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/billing"
	"github.com/tradekit/tradekit/internal/dbtest"
)

// TestUsers creates a dashboard user and changes the password through the
// CLI, on both databases, and checks the password signs in.
func TestUsers(t *testing.T) {
	dbtest.EachDSN(t, func(t *testing.T, dsn string) {
		env := map[string]string{"TRADEKIT_DB": dsn}
		if _, err := cli(t, env, "migrate"); err != nil {
			t.Fatal(err)
		}
		out, _, err := cliIn(t, env, "first password here\n", "users", "create", "--email", "Ada@Example.com", "--admin", "--plan", "pro")
		if err != nil || !strings.Contains(out, "created user ada@example.com") || !strings.Contains(out, "admin true") {
			t.Fatalf("users create: %v\n%s", err, out)
		}
		db := dbtest.MustOpen(t, dsn)
		signIn := func(pw string) error {
			_, err := billing.NewStore(db).SignIn(context.Background(), "ada@example.com", pw, billing.DefaultPasswordParams())
			return err
		}
		if err := signIn("first password here"); err != nil {
			t.Fatalf("sign in with the created password: %v", err)
		}
		if _, _, err := cliIn(t, env, "second password!\r\n", "users", "set-password", "--email", "ada@example.com"); err != nil {
			t.Fatal(err)
		}
		if err := signIn("first password here"); !errors.Is(err, tradekit.ErrUnauthorized) {
			t.Errorf("the old password still signs in: %v", err)
		}
		if err := signIn("second password!"); err != nil {
			t.Errorf("the new password: %v", err)
		}
		out, _, err = cliIn(t, env, "bob's password 12\n", "users", "create", "--email", "bob@example.com", "--account-of", "ADA@example.com")
		if err != nil {
			t.Fatalf("users create --account-of: %v", err)
		}
		ada, _ := billing.NewStore(db).UserByEmail(context.Background(), "ada@example.com")
		if !strings.Contains(out, "account "+ada.AccountID.String()) || !strings.Contains(out, "admin false") {
			t.Errorf("users create --account-of: want ada's account %s\n%s", ada.AccountID, out)
		}
		out, err = cli(t, env, "users", "list", "--account-of", "bob@example.com")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if err != nil || len(lines) != 3 || !strings.HasPrefix(lines[1], "ada@example.com") || !strings.Contains(lines[1], "administrator") ||
			!strings.HasPrefix(lines[2], "bob@example.com") || !strings.Contains(lines[2], "member") {
			t.Errorf("users list: %v\n%s", err, out)
		}
	})
}

func TestUsersErrors(t *testing.T) {
	env := map[string]string{"TRADEKIT_DB": t.TempDir() + "/x.db"}
	for _, tt := range []struct {
		stdin string
		args  []string
		want  string
	}{
		{"", []string{"users"}, "create, set-password or list"},
		{"long enough password\n", []string{"users", "create", "--email", "a@b.c", "--account-of", "ghost@b.c"}, `users create: --account-of: user "ghost@b.c" not found`},
		{"", []string{"users", "list"}, "--account-of is required"},
		{"", []string{"users", "create", "--email", "a@b.c"}, "give the password on standard input"},
		{"short\n", []string{"users", "create", "--email", "a@b.c"}, "password: must be at least 12 characters"},
		{"long enough password\n", []string{"users", "create", "--email", "nope"}, "--email is required"},
		{"long enough password\n", []string{"users", "set-password", "--email", "ghost@b.c"}, `users set-password: user "ghost@b.c" not found`},
	} {
		_, _, err := cliIn(t, env, tt.stdin, tt.args...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: error %v, want %q", tt.args, err, tt.want)
		}
	}
}
