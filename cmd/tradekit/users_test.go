package main

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/billing"
	"github.com/tradekit/tradekit/internal/dbtest"
)

// hashingMu is held by each test whose commands hash passwords, or might:
// at the default cost a hash takes every hashing slot of the process
// (GOMAXPROCS lanes), so hashes of tests run at once would wait for each
// other and could outwait billing.PasswordWait (ErrPasswordBusy). One
// such test at a time hashes one password at a time, and never waits for
// a slot; the tests that do not hash run beside it.
var hashingMu sync.Mutex

// hashing makes t the only test hashing passwords until it ends.
func hashing(t *testing.T) {
	hashingMu.Lock()
	t.Cleanup(hashingMu.Unlock)
}

// TestUsers creates a dashboard user and changes the password through the
// CLI, on both databases, and checks the password signs in.
func TestUsers(t *testing.T) {
	t.Parallel()
	hashing(t)
	dbtest.EachDSN(t, func(t *testing.T, dsn string) {
		env := map[string]string{"TRADEKIT_DB": dsn}
		if _, err := cli(t, env, "migrate"); err != nil {
			t.Fatal(err)
		}
		out, _, err := cliIn(t, env, "first password here\n", "users", "create", "--email", "Ada@Example.com", "--admin", "--plan", "pro")
		if err != nil || !strings.HasPrefix(out, "created user ada@example.com on plan pro, administrator of its own account (user ") {
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
		if !strings.Contains(out, "account "+ada.AccountID.String()+")") || !strings.Contains(out, ", member of the account of ada@example.com (user ") {
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
	t.Parallel()
	hashing(t)
	env := map[string]string{"TRADEKIT_DB": t.TempDir() + "/x.db"}
	for _, tt := range []struct {
		stdin string
		args  []string
		want  string
	}{
		{"", []string{"users"}, "create, set-password, set-role or list"},
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

// TestAdminPathForExistingUser is the newcomer's path of README: a key
// made by keys create makes a member; users create for that email says
// what to run instead; set-password and set-role make it an administrator
// who signs in. No output names an empty plan.
func TestAdminPathForExistingUser(t *testing.T) {
	t.Parallel()
	hashing(t)
	emptyPlan := regexp.MustCompile(`plan( [,)]|,|$)`)
	dbtest.EachDSN(t, func(t *testing.T, dsn string) {
		env := map[string]string{"TRADEKIT_DB": dsn}
		ctx := context.Background()
		db := dbtest.MustOpen(t, dsn)
		st := billing.NewStore(db)
		var all []string // every output, checked for an empty plan at the end

		out, err := cli(t, env, "keys", "create", "--email", "you@example.com", "--name", "laptop", "--plan", "pro")
		all = append(all, out)
		if err != nil || !strings.Contains(out, "created user you@example.com on plan pro, member of its own account (user ") ||
			!strings.Contains(out, "'tradekit users set-role --email you@example.com --role admin'") {
			t.Fatalf("keys create: %v\n%s", err, out)
		}

		_, stderr, status := cliMain(t, env, "a long passphrase\n", "users", "create", "--email", "You@Example.com", "--admin", "--plan", "pro")
		want := `tradekit: users create: user "you@example.com" exists already (plan pro, member, no password): ` +
			`set its password with 'tradekit users set-password --email you@example.com'; ` +
			`make it an administrator with 'tradekit users set-role --email you@example.com --role admin'` + "\n"
		if status != 1 || stderr != want {
			t.Errorf("users create for an existing user: status %d, stderr\n%s want\n%s", status, stderr, want)
		}

		if out, _, err = cliIn(t, env, "a long passphrase\n", "users", "set-password", "--email", "you@example.com"); err != nil {
			t.Fatal(err)
		}
		all = append(all, out)
		out, err = cli(t, env, "users", "set-role", "--email", "YOU@example.com", "--role", "admin")
		all = append(all, out)
		if err != nil || out != "you@example.com is now an administrator of its account\n" {
			t.Errorf("set-role admin: %v\n%s", err, out)
		}
		u, err := st.SignIn(ctx, "you@example.com", "a long passphrase", billing.DefaultPasswordParams())
		if err != nil || !u.IsAdmin {
			t.Fatalf("sign in after set-role admin: %+v, %v; want an administrator", u, err)
		}
		out, err = cli(t, env, "users", "set-role", "--email", "you@example.com", "--role", "administrator")
		if err != nil || out != "you@example.com is an administrator of its account already; nothing changed\n" {
			t.Errorf("set-role admin again: %v\n%s", err, out)
		}

		// keys create --admin on an existing user without --plan used to
		// print "plan ,".
		out, err = cli(t, env, "keys", "create", "--email", "other@example.com", "--name", "ci", "--plan", "business")
		all = append(all, out)
		if err != nil {
			t.Fatal(err)
		}
		out, err = cli(t, env, "keys", "create", "--email", "other@example.com", "--name", "ci2", "--admin")
		all = append(all, out)
		if err != nil || !strings.HasPrefix(out, "updated user other@example.com: plan business, administrator\n") {
			t.Errorf("keys create --admin for an existing user: %v\n%s", err, out)
		}
		out, _, err = cliIn(t, env, "bob's password 12\n", "users", "create", "--email", "bob@example.com", "--account-of", "you@example.com")
		all = append(all, out)
		if err != nil || !strings.Contains(out, "on plan pro, member of the account of you@example.com (user ") {
			t.Errorf("users create --account-of: %v\n%s", err, out)
		}

		// Demoting the last administrator is allowed, with a note.
		out, err = cli(t, env, "users", "set-role", "--email", "you@example.com", "--role", "member")
		if err != nil || out != "you@example.com is now a member of its account\n"+
			"note: the account has no administrator left: nobody can manage its keys or members in the dashboard\n" {
			t.Errorf("set-role member: %v\n%s", err, out)
		}
		if u, _ := st.UserByEmail(ctx, "you@example.com"); u.IsAdmin {
			t.Error("still an administrator after set-role member")
		}
		for _, out := range all {
			if emptyPlan.MatchString(out) {
				t.Errorf("an empty plan in:\n%s", out)
			}
		}
	})
}

func TestUsersSetRoleErrors(t *testing.T) {
	t.Parallel()
	hashing(t)
	env := map[string]string{"TRADEKIT_DB": t.TempDir() + "/x.db"}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"users", "set-role", "--role", "admin"}, "users set-role: --email is required"},
		{[]string{"users", "set-role", "--email", "a@b.c"}, `users set-role: --role must be admin or member, got ""`},
		{[]string{"users", "set-role", "--email", "a@b.c", "--role", "owner"}, `users set-role: --role must be admin or member, got "owner"`},
		{[]string{"users", "set-role", "--email", "a@b.c", "--role", "admin"}, `users set-role: user "a@b.c" not found`},
	} {
		_, err := cli(t, env, tt.args...)
		if err == nil || err.Error() != tt.want {
			t.Errorf("%v: error %v, want %q", tt.args, err, tt.want)
		}
	}
}

// TestCreatedUserSameWords checks that users create and keys create
// describe the role of the user they create in the same words (issue 40,
// point 13).
func TestCreatedUserSameWords(t *testing.T) {
	t.Parallel()
	hashing(t)
	ids := regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	dbtest.EachDSN(t, func(t *testing.T, dsn string) {
		env := map[string]string{"TRADEKIT_DB": dsn}
		for _, admin := range []string{"--admin=true", "--admin=false"} {
			byKeys, err := cli(t, env, "keys", "create", "--email", "k"+admin[8:]+"@example.com", "--name", "laptop", "--plan", "pro", admin)
			if err != nil {
				t.Fatal(err)
			}
			byUsers, _, err := cliIn(t, env, "a long passphrase\n", "users", "create", "--email", "u"+admin[8:]+"@example.com", "--plan", "pro", admin)
			if err != nil {
				t.Fatal(err)
			}
			first := func(out, who string) string {
				line, _, _ := strings.Cut(out, "\n")
				return ids.ReplaceAllString(strings.Replace(line, who, "EMAIL", 1), "ID")
			}
			k, u := first(byKeys, "k"+admin[8:]+"@example.com"), first(byUsers, "u"+admin[8:]+"@example.com")
			role := "member"
			if admin == "--admin=true" {
				role = "administrator"
			}
			want := "created user EMAIL on plan pro, " + role + " of its own account (user ID, account ID)"
			if k != want || u != want {
				t.Errorf("%s:\n keys create  %q\n users create %q\nwant %q", admin, k, u, want)
			}
		}
	})
}
