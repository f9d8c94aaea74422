package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/uuid"

	"github.com/tradekit/tradekit"
)

// cliMain runs the CLI in process as main does and returns its stdout,
// its stderr and its exit status.
func cliMain(t *testing.T, env map[string]string, stdin string, args ...string) (stdout, stderr string, status int) {
	t.Helper()
	var out, errOut bytes.Buffer
	status = runMain(context.Background(), args, func(k string) string { return env[k] }, strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), status
}

// TestErrorsForUsers checks the stderr of representative failures: one
// line, "tradekit: ", the command, and the message written for users,
// which names no package; --verbose shows the chain behind it.
func TestErrorsForUsers(t *testing.T) {
	t.Parallel()
	hashing(t)
	env := map[string]string{"TRADEKIT_DB": filepath.Join(t.TempDir(), "x.db")}
	missing := uuid.NewString()
	prices := writeFile(t, "p.csv", "date,open,high,low,close,volume\n2026-01-02,1,2,0.5,1,10\n")
	missingFile := filepath.Join(t.TempDir(), "missing.csv")
	missingDB := filepath.Join(t.TempDir(), "no", "such", "dir", "x.db")
	tests := []struct {
		stdin string
		args  []string
		want  string
	}{
		{"", []string{"keys", "list", "--email", "nobody@example.com"},
			`tradekit: keys list: user "nobody@example.com" not found`},
		{"", []string{"keys", "list", "--email", "nobody@example.com", "--verbose"},
			`tradekit: keys list: billing: user "nobody@example.com" not found`},
		{"", []string{"keys", "delete", "--id", missing},
			"tradekit: keys delete: key " + missing + " not found"},
		{"", []string{"keys", "create", "--email", "a@example.com", "--name", "x", "--plan", "gold"},
			`tradekit: keys create: --plan: plan "gold" not found: want free, pro or business`},
		{"long enough password\n", []string{"users", "create", "--email", "a@example.com", "--account-of", "ghost@example.com"},
			`tradekit: users create: --account-of: user "ghost@example.com" not found`},
		{"long enough password\n", []string{"users", "create", "--email", "a@example.com", "--account-of", "ghost@example.com", "--verbose"},
			`tradekit: users create: --account-of: billing: user "ghost@example.com" not found`},
		{"short\n", []string{"users", "create", "--email", "a@example.com"},
			"tradekit: users create: password: must be at least 12 characters, not 5"},
		{"", []string{"users", "set-role", "--email", "ghost@example.com", "--role", "admin"},
			`tradekit: users set-role: user "ghost@example.com" not found`},
		{"", []string{"import", "prices", "--symbol", "X", "--file", prices, "--exchange", "ZZZ"},
			"tradekit: import prices: " + prices + `: nothing imported: unknown exchange "ZZZ"`},
		{"", []string{"migrate", "extra"}, `tradekit: migrate: unexpected argument "extra"`},
		// No package prefix, no Go error kind, no "stat" (issue 40, point 7).
		{"", []string{"import", "prices", "--file", missingFile},
			"tradekit: import prices: " + missingFile + ": no such file or directory"},
		{"", []string{"import", "prices", "--file", missingFile, "--verbose"},
			"tradekit: import prices: " + missingFile + ": bulk: stat " + missingFile + ": no such file or directory"},
		{"", []string{"import", "prices", "--symbol", "X", "--file", missingFile},
			"tradekit: import prices: " + missingFile + ": no such file or directory"},
		{"", []string{"import", "prices", "--symbol", "X", "--file", prices, "--currency", "US"},
			"tradekit: import prices: " + prices + `: nothing imported: asset X: currency "US" is not a 3-letter code`},
		{"", []string{"import", "prices", "--symbol", "X", "--file", prices, "--currency", "US", "--verbose"},
			"tradekit: import prices: " + prices + `: nothing imported: marketdata: asset X: currency "US" is not a 3-letter code: invalid argument`},
		{"", []string{"paper", "apps", "delete", "--id", "nope"}, `tradekit: paper apps delete: app "nope" not found`},
		{"", []string{"paper", "apps", "delete", "--id", "nope", "--verbose"}, `tradekit: paper apps delete: paper: app "nope" not found`},
		{"", []string{"migrate", "--db", missingDB}, "tradekit: migrate: " + missingDB + ": no such file or directory"},
		{"", []string{"migrate", "--db", missingDB, "--verbose"},
			"tradekit: migrate: database: create " + missingDB + ": open " + missingDB + ": no such file or directory"},
		{"", []string{"profiles"}, "tradekit: profiles: give a subcommand: build (see 'tradekit profiles -h')"},
		{"", []string{"keys", "frob"}, `tradekit: keys: unknown subcommand "frob": want create, list or delete`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, stderr, status := cliMain(t, env, tt.stdin, tt.args...)
			if status != 1 || stderr != tt.want+"\n" {
				t.Errorf("status %d, stderr %q; want 1 and the one line %q", status, stderr, tt.want)
			}
		})
	}
}

// TestWithCommand checks that an error a command returns as a lower layer
// made it gets the command's name, and one that names it already does
// not get it twice.
func TestWithCommand(t *testing.T) {
	t.Parallel()
	pkg := fmt.Errorf("billing: %w", tradekit.Errorf(tradekit.ErrNotFound, "user %s not found", tradekit.Quote("x")))
	tests := []struct {
		err        error
		msg, chain string
	}{
		{pkg, `keys list: user "x" not found`, `keys list: billing: user "x" not found`},
		{fail("keys list", pkg), `keys list: user "x" not found`, `keys list: billing: user "x" not found`},
		{fail("keys list", fail("--email", pkg)), `keys list: --email: user "x" not found`, `keys list: --email: billing: user "x" not found`},
		{errors.New("keys list: --email is required"), "keys list: --email is required", "keys list: --email is required"},
		{errors.New("database: ping: refused"), "keys list: ping: refused", "keys list: database: ping: refused"},
		{fmt.Errorf("--email: %w", &tradekit.ParamError{Param: "email", Msg: "is too long"}), "keys list: email: is too long",
			"keys list: --email: email: is too long"},
	}
	for _, tt := range tests {
		err := withCommand("keys list", tt.err)
		if err.Error() != tt.msg || chain(err) != tt.chain {
			t.Errorf("withCommand(%q):\n message %q, want %q\n chain   %q, want %q", tt.err, err, tt.msg, chain(err), tt.chain)
		}
		if !errors.Is(err, tt.err) {
			t.Errorf("withCommand(%q) does not wrap it", tt.err)
		}
	}
	if err := withCommand("keys list", nil); err != nil {
		t.Errorf("withCommand(nil) = %v", err)
	}
	if got := oneLine("a\nb\r\nc\rd"); got != "a b c d" {
		t.Errorf("oneLine = %q", got)
	}
}

// TestUserMessage checks the message written for users of each kind of
// chain: the outermost cmdError's, else the ParamError's or Error's that
// ends the chain, else the error's own.
func TestUserMessage(t *testing.T) {
	t.Parallel()
	notFound := tradekit.Errorf(tradekit.ErrNotFound, "user %s not found", tradekit.Quote("x"))
	param := &tradekit.ParamError{Param: "email", Msg: "is too long"}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"an Error", notFound, `user "x" not found`},
		{"a wrapped Error", fmt.Errorf("billing: %w", notFound), `user "x" not found`},
		{"a wrapped ParamError", fmt.Errorf("billing: %w", param), "email: is too long"},
		{"a cmdError", fmt.Errorf("outer: %w", fail("--email", fmt.Errorf("billing: %w", notFound))), `--email: user "x" not found`},
		{"nested cmdErrors", fail("users create", fail("--account-of", notFound)), `users create: --account-of: user "x" not found`},
		{"a cmdError of a plain error", fmt.Errorf("outer: %w", fail("--file", errors.New("open p.csv: no such file"))),
			"--file: open p.csv: no such file"},
		{"a plain error", fmt.Errorf("database: %w", errors.New("ping: refused")), "ping: refused"},
		{"a kind alone", fmt.Errorf("paper: %w", tradekit.ErrUnavailable), "unavailable"},
		{"a kind at the end", fmt.Errorf("marketdata: asset X: currency %q: %w", "US", tradekit.ErrInvalid), `asset X: currency "US"`},
		{"a file error", fmt.Errorf("database: create /tmp/x.db: %w", &fs.PathError{Op: "open", Path: "/tmp/x.db", Err: syscall.ENOENT}),
			"/tmp/x.db: no such file or directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := userMessage(tt.err); got != tt.want {
				t.Errorf("userMessage(%q) = %q, want %q", tt.err, got, tt.want)
			}
		})
	}
}

// TestPackageNames checks that [packageNames] names every package of the
// module, so that no new package's prefix reaches users.
func TestPackageNames(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "examples" || name == "scripts") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.PackageClauseOnly)
		if err != nil {
			return err
		}
		if name := f.Name.Name; name != "main" && !seen[name] {
			seen[name] = true
			if !packageNames[name] {
				t.Errorf("package %s (%s) is missing from packageNames", name, filepath.Dir(path))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) < 10 {
		t.Fatalf("found only %d packages under %s", len(seen), root)
	}
}
