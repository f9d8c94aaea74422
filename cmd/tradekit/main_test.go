package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tradekit/tradekit/internal/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// cli runs the CLI in process and returns its stdout.
func cli(t *testing.T, env map[string]string, args ...string) (string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), args, func(k string) string { return env[k] }, &stdout, &stderr)
	return stdout.String(), err
}

var keyLine = regexp.MustCompile(`^tk_[a-z2-7]{40}$`)

// TestEndToEnd is the newcomer's path: serve, create a key, call the API
// with it, list and delete the key, stop the server cleanly.
func TestEndToEnd(t *testing.T) {
	dbtest.EachDSN(t, func(t *testing.T, dsn string) {
		env := map[string]string{"TRADEKIT_DB": dsn}
		addr := freeAddr(t)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		var serveOut bytes.Buffer
		go func() {
			done <- run(ctx, []string{"serve", "--addr", addr, "--no-seed"}, func(k string) string { return env[k] }, &serveOut, &bytes.Buffer{})
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
		deadline := time.Now().Add(5 * time.Second)
		for {
			status, _ := call(t, "http://"+addr+"/api/v1/billing/plans", key)
			if status == 401 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the server still accepts a key deleted 5 s ago")
			}
			time.Sleep(100 * time.Millisecond)
		}

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
	t.Chdir(t.TempDir())
	out, err := cli(t, nil, "migrate")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "applied") {
		t.Errorf("first migrate applied nothing:\n%s", out)
	}
	if matches, _ := filepath.Glob("tradekit.db"); len(matches) != 1 {
		t.Error("tradekit.db not created in the working directory")
	}
	out, err = cli(t, nil, "migrate")
	if err != nil || !strings.Contains(out, "(0 migrations applied now)") {
		t.Errorf("second migrate: %v\n%s", err, out)
	}
}

func TestErrors(t *testing.T) {
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
		{[]string{"migrate", "extra"}, `unexpected argument "extra"`},
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
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if res, err := http.Get(url); err == nil {
			var body map[string]string
			json.NewDecoder(res.Body).Decode(&body)
			res.Body.Close()
			if res.StatusCode == 200 && body["status"] == "ok" {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s never answered", url)
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
