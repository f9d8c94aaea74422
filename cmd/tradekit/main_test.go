package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tradekit/tradekit/internal/database"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/internal/testkit"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// cli runs the CLI in process and returns its stdout.
func cli(t *testing.T, env map[string]string, args ...string) (string, error) {
	t.Helper()
	stdout, _, err := cli2(t, env, args...)
	return stdout, err
}

// cli2 runs the CLI in process and returns its stdout and stderr.
func cli2(t *testing.T, env map[string]string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	return cliIn(t, env, "", args...)
}

// cliIn runs the CLI in process with stdin and returns its stdout and
// stderr.
func cliIn(t *testing.T, env map[string]string, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = run(context.Background(), args, func(k string) string { return env[k] }, strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), err
}

var keyLine = regexp.MustCompile(`^tk_[a-z2-7]{40}$`)

// TestEndToEnd is the newcomer's path: serve, create a key, call the API
// with it, list and delete the key, stop the server cleanly.
func TestEndToEnd(t *testing.T) {
	t.Parallel()
	dbtest.EachDSN(t, func(t *testing.T, dsn string) {
		env := map[string]string{"TRADEKIT_DB": dsn}
		addr := freeAddr(t)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		var serveOut bytes.Buffer
		go func() {
			done <- run(ctx, []string{"serve", "--addr", addr, "--no-seed"}, func(k string) string { return env[k] }, strings.NewReader(""), &serveOut, &bytes.Buffer{})
		}()
		waitHealthy(t, "http://"+addr+"/healthz")

		out, err := cli(t, env, "keys", "create", "--email", "Dev@Example.com", "--name", "laptop")
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		key := lines[len(lines)-1]
		if !keyLine.MatchString(key) {
			t.Fatalf("last line of keys create is %q, want the key alone:\n%s", key, out)
		}

		status, body := call(t, "http://"+addr+"/api/v1/billing/plans", key)
		if status != 200 || !strings.Contains(body, `"slug":"free"`) || !strings.Contains(body, `"apiRequestsPerMinute":30`) {
			t.Errorf("plans with the new key: %d %s", status, body)
		}
		if status, body := call(t, "http://"+addr+"/api/v1/billing/plans", ""); status != 401 || !strings.Contains(body, `"code":"UNAUTHORIZED"`) {
			t.Errorf("plans without a key: %d %s", status, body)
		}

		out, err = cli(t, env, "keys", "list", "--email", "dev@example.com")
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(out, key[3:]) || !strings.Contains(out, key[:11]) || !strings.Contains(out, "active") {
			t.Errorf("keys list must show the prefix and never the secret:\n%s", out)
		}
		id := strings.Fields(strings.Split(out, "\n")[1])[0]
		if _, err := cli(t, env, "keys", "delete", "--id", id); err != nil {
			t.Fatal(err)
		}
		testkit.Eventually(t, 5*time.Second, func() bool {
			status, _ := call(t, "http://"+addr+"/api/v1/billing/plans", key)
			return status == 401
		}, "the server to refuse the deleted key")

		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve returned %v after SIGTERM-like cancellation", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("serve did not stop")
		}
	})
}

// TestDefaultDatabase checks that with no flag and no environment the
// database is tradekit.db in the working directory.
func TestDefaultDatabase(t *testing.T) {
	// One line (issue 40, point 13): how many, and the version, the
	// name of the latest migration file.
	files, err := filepath.Glob(filepath.Join(repoRoot(t), "internal", "database", "migrations", "sqlite", "*.up.sql"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no migration files: %v", err)
	}
	t.Chdir(t.TempDir())
	version, _, _ := strings.Cut(filepath.Base(files[len(files)-1]), "_")
	out, err := cli(t, nil, "migrate")
	if want := fmt.Sprintf("database is up to date at version %s (%d migrations applied now)\n", version, len(files)); err != nil || out != want {
		t.Errorf("first migrate: %v, %q; want %q", err, out, want)
	}
	if matches, _ := filepath.Glob("tradekit.db"); len(matches) != 1 {
		t.Error("tradekit.db not created in the working directory")
	}
	out, err = cli(t, nil, "migrate", "--verbose")
	if want := "database is up to date at version " + version + " (0 migrations applied now)\n"; err != nil || out != want {
		t.Errorf("second migrate: %v, %q; want %q", err, out, want)
	}
	if err := os.Remove("tradekit.db"); err != nil {
		t.Fatal(err)
	}
	out, err = cli(t, nil, "migrate", "--verbose")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); err != nil || len(lines) != len(files)+1 || lines[0] != "applied "+func() string {
		v, _, _ := strings.Cut(filepath.Base(files[0]), "_")
		return v
	}() {
		t.Errorf("migrate --verbose: %v, want each migration listed:\n%s", err, out)
	}
}

// repoRoot returns the root of the repository, two levels above this
// package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func TestErrors(t *testing.T) {
	t.Parallel()
	env := map[string]string{"TRADEKIT_DB": filepath.Join(t.TempDir(), "x.db")}
	tests := []struct {
		args []string
		want string
	}{
		{nil, "no command"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"keys"}, "create, list or delete"},
		{[]string{"keys", "create", "--name", "x"}, "--email is required"},
		{[]string{"keys", "create", "--email", "a@b.c"}, "--name is required"},
		{[]string{"keys", "create", "--email", "a@b.c", "--name", "x", "--plan", "gold"}, `plan "gold"`},
		{[]string{"keys", "list", "--email", "nobody@b.c"}, "not found"},
		{[]string{"keys", "delete", "--id", "42"}, "--id must be"},
		{[]string{"serve", "--log-format", "xml"}, "--log-format"},
		{[]string{"serve", "--paper-signups-per-hour", "-1"}, "--paper-signups-per-hour must be 0 (no limit) or more"},
		{[]string{"serve", "--paper-requests-per-minute", "-1"}, "--paper-requests-per-minute must be 0 (no limit) or more"},
		{[]string{"migrate", "extra"}, `unexpected argument "extra"`},
		{[]string{"keys", "frob"}, `unknown subcommand "frob"`},
		{[]string{"keys", "create", "--bogus"}, "keys create: flag provided but not defined: -bogus (see 'tradekit keys create -h')"},
		{[]string{"import"}, "give a kind"},
		{[]string{"import", "frob"}, `unknown kind "frob"`},
		{[]string{"profiles"}, "give a subcommand: build"},
		{[]string{"help", "frob"}, `unknown command "frob"`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, err := cli(t, env, tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// TestHelp asks for help at every level: each prints its usage to stdout,
// nothing to stderr, and succeeds (exit status 0), without touching the
// database.
func TestHelp(t *testing.T) {
	t.Chdir(t.TempDir())
	tests := []struct {
		args []string
		want []string // in stdout
	}{
		{[]string{"-h"}, []string{"usage: tradekit <command>", "keys create", "import prices"}},
		{[]string{"--help"}, []string{"usage: tradekit <command>"}},
		{[]string{"help"}, []string{"usage: tradekit <command>"}},
		{[]string{"help", "keys", "create"}, []string{"usage: tradekit keys create --email EMAIL", "--plan SLUG"}},
		{[]string{"help", "import"}, []string{"usage: tradekit import <kind>"}},
		{[]string{"serve", "-h"}, []string{"usage: tradekit serve", "--addr HOST:PORT", "--no-seed", "--db DSN", "--exit-with-parent",
			"go build -o bin/tradekit ./cmd/tradekit",
			// a flag's text of several lines stays indented under the flag
			"On by\n        default when that process is go run", "--sync-interval DURATION"}},
		{[]string{"migrate", "--help"}, []string{"usage: tradekit migrate [--db DSN]"}},
		{[]string{"seed", "-h"}, []string{"usage: tradekit seed", "SYNTHETIC"}},
		{[]string{"keys", "-h"}, []string{"usage: tradekit keys <subcommand>", "create", "list", "delete"}},
		{[]string{"keys", "--help"}, []string{"usage: tradekit keys <subcommand>"}},
		{[]string{"keys", "help"}, []string{"usage: tradekit keys <subcommand>"}},
		{[]string{"keys", "create", "-h"}, []string{"usage: tradekit keys create", "--email EMAIL", "--name NAME", "--admin"}},
		{[]string{"keys", "list", "-h"}, []string{"usage: tradekit keys list --email EMAIL"}},
		{[]string{"keys", "delete", "-h"}, []string{"usage: tradekit keys delete --id ID"}},
		{[]string{"users", "-h"}, []string{"usage: tradekit users <subcommand>", "set-role", "set-password"}},
		{[]string{"users", "set-role", "-h"}, []string{"usage: tradekit users set-role --email EMAIL --role admin|member", "--role ROLE"}},
		{[]string{"import", "-h"}, []string{"usage: tradekit import <kind>", "prices", "fundamentals"}},
		{[]string{"import", "--help"}, []string{"usage: tradekit import <kind>"}},
		{[]string{"import", "prices", "-h"}, []string{"usage: tradekit import prices --symbol SYM --file PATH", "--exchange SYMBOL", `(default stock)`}},
		{[]string{"import", "assets", "-h"}, []string{"usage: tradekit import assets --file PATH", "--format FORMAT"}},
		{[]string{"import", "prices", "--symbol", "X", "-h"}, []string{"usage: tradekit import prices"}},
		{[]string{"profiles", "-h"}, []string{"usage: tradekit profiles <subcommand>", "build"}},
		{[]string{"profiles", "build", "-h"}, []string{"usage: tradekit profiles build", "--shard I/N", "--workers N"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			stdout, stderr, err := cli2(t, nil, tt.args...)
			if err != nil {
				t.Errorf("error %v, want none (exit status 0)", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout)
				}
			}
			if stderr != "" {
				t.Errorf("stderr %q, want nothing", stderr)
			}
		})
	}
	if matches, _ := filepath.Glob("*.db"); len(matches) > 0 {
		t.Errorf("help created %v", matches)
	}
}

// TestKeysLastUsedAndDeleteTwice serves, uses a key, waits, stops the
// server (which writes the key's last use) and checks that keys list
// shows the time of the request, not of the write; then revokes the key
// twice, the second time with an error saying it is already revoked.
func TestKeysLastUsedAndDeleteTwice(t *testing.T) {
	t.Parallel()
	dbtest.EachDSN(t, func(t *testing.T, dsn string) {
		env := map[string]string{"TRADEKIT_DB": dsn}
		out, err := cli(t, env, "keys", "create", "--email", "used@example.com", "--name", "ci")
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		key := lines[len(lines)-1]

		addr := freeAddr(t)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- run(ctx, []string{"serve", "--addr", addr, "--no-seed"}, func(k string) string { return env[k] }, strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{})
		}()
		waitHealthy(t, "http://"+addr+"/healthz")
		before := time.Now()
		if status, body := call(t, "http://"+addr+"/api/v1/billing/plans", key); status != 200 {
			t.Fatalf("plans: %d %s", status, body)
		}
		after := time.Now()
		// The server writes last-used times every 30 s and when it stops:
		// stop it more than a second (the listing's precision) later. Not
		// a wait: the stop must come at a later second than the request.
		time.Sleep(1100 * time.Millisecond)
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("serve did not stop")
		}

		out, err = cli(t, env, "keys", "list", "--email", "used@example.com")
		if err != nil {
			t.Fatal(err)
		}
		rows := strings.Split(strings.TrimSpace(out), "\n")
		if len(rows) != 2 {
			t.Fatalf("keys list:\n%s", out)
		}
		f := strings.Fields(rows[1]) // ID PREFIX NAME CREATED LAST-USED STATUS
		lastUsed, err := time.Parse(time.RFC3339, f[4])
		if err != nil {
			t.Fatalf("LAST USED %q: %v\n%s", f[4], err, out)
		}
		if lastUsed.Before(before.Truncate(time.Second)) || lastUsed.After(after) {
			t.Errorf("LAST USED %s, want the request's time, between %s and %s (the write came a second later)\n%s",
				f[4], before.UTC().Format(time.RFC3339Nano), after.UTC().Format(time.RFC3339Nano), out)
		}

		id := f[0]
		if out, err := cli(t, env, "keys", "delete", "--id", id); err != nil || !strings.Contains(out, "revoked key "+id) {
			t.Fatalf("first delete: %v\n%s", err, out)
		}
		_, err = cli(t, env, "keys", "delete", "--id", id)
		if err == nil || !strings.Contains(err.Error(), "already revoked") || !strings.Contains(err.Error(), id) {
			t.Errorf("second delete: error %v, want one saying key %s is already revoked", err, id)
		}
	})
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func waitHealthy(t *testing.T, url string) {
	t.Helper()
	testkit.Eventually(t, 30*time.Second, func() error {
		res, err := http.Get(url)
		if err != nil {
			return err
		}
		var body map[string]string
		json.NewDecoder(res.Body).Decode(&body)
		res.Body.Close()
		if res.StatusCode != 200 || body["status"] != "ok" {
			return fmt.Errorf("%d %v", res.StatusCode, body)
		}
		return nil
	}, "%s to answer ok", url)
}

func call(t *testing.T, url, key string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var buf bytes.Buffer
	buf.ReadFrom(res.Body)
	return res.StatusCode, fmt.Sprint(buf.String())
}

// TestBatchStatementOutlastsAPITimeout: the commands' database handle
// lets one PostgreSQL statement run longer than the server's bound, as
// the demo seed's INSERT … SELECT does on a loaded machine; the server's
// handle keeps the bound.
func TestBatchStatementOutlastsAPITimeout(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("sleeps longer than apiTimeout")
	}
	dsn := dbtest.PostgresDSN(t)
	long := (apiTimeout + time.Second).Seconds()
	// The two handles' statements at once: each sleeps for long.
	t.Run("commands", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		e := &env{getenv: func(string) string { return "" }, stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}
		db, err := e.open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.ExecContext(ctx, "SELECT pg_sleep(?)", long); err != nil {
			t.Errorf("a %gs statement on the commands' handle: %v", long, err)
		}
	})
	t.Run("server", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		api, err := openWith(ctx, dsn, database.Options{Timeout: apiTimeout})
		if err != nil {
			t.Fatal(err)
		}
		defer api.Close()
		var ne net.Error
		if _, err := api.ExecContext(ctx, "SELECT pg_sleep(?)", long); !errors.As(err, &ne) || !ne.Timeout() {
			t.Errorf("a %gs statement on the server's handle: error %v, want a timeout", long, err)
		}
	})
}

// TestTopLevelHelpListsEveryFlag compares each command of `tradekit -h`
// with its own help: the flags the top-level entry names are those the
// command's help lists, --verbose aside, which the top level mentions
// once for all.
func TestTopLevelHelpListsEveryFlag(t *testing.T) {
	t.Parallel()
	top, _, err := cli2(t, nil, "-h")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(top, "Every command also takes --verbose") {
		t.Errorf("tradekit -h does not mention --verbose:\n%s", top)
	}
	flagName := regexp.MustCompile(`--[a-z][a-z-]*`)
	helpFlag := regexp.MustCompile(`(?m)^  (--[a-z][a-z-]*)`)
	entries := 0
	// An entry starts at a line indented by two spaces and goes on over
	// the lines indented further.
	var entry []string
	check := func() {
		if len(entry) == 0 {
			return
		}
		defer func() { entry = nil }()
		head, _, _ := strings.Cut(strings.TrimSpace(entry[0]), "  ") // the command, or the command and its synopsis
		var cmd []string
		for _, w := range strings.Fields(head) {
			if strings.HasPrefix(w, "-") || strings.HasPrefix(w, "[") {
				break
			}
			w, _, _ = strings.Cut(w, "|") // import industries|assets|…: the first stands for all
			cmd = append(cmd, w)
		}
		listed := map[string]bool{}
		for _, f := range flagName.FindAllString(strings.Join(entry, " "), -1) {
			listed[f] = true
		}
		help, _, err := cli2(t, nil, append(cmd, "-h")...)
		if err != nil {
			t.Errorf("%v -h: %v", cmd, err)
			return
		}
		has := map[string]bool{}
		for _, m := range helpFlag.FindAllStringSubmatch(help, -1) {
			has[m[1]] = true
		}
		entries++
		for f := range has {
			if !listed[f] && f != "--verbose" {
				t.Errorf("tradekit -h does not list %s of %q, which '%s -h' shows", f, strings.Join(cmd, " "), strings.Join(cmd, " "))
			}
		}
		for f := range listed {
			if !has[f] {
				t.Errorf("tradekit -h lists %s for %q, which '%s -h' does not have", f, strings.Join(cmd, " "), strings.Join(cmd, " "))
			}
		}
	}
	_, commands, _ := strings.Cut(top, "commands:\n")
	commands, _, _ = strings.Cut(commands, "\n\n")
	for _, line := range strings.Split(commands, "\n") {
		if !strings.HasPrefix(line, "   ") {
			check()
		}
		entry = append(entry, line)
	}
	check()
	if entries < 12 {
		t.Errorf("checked %d commands of tradekit -h, want every one:\n%s", entries, top)
	}
}
