//go:build linux

package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tradekit/tradekit/internal/testkit"
)

// serveChildArgs, set in the environment, makes TestServeExitsWithParent
// the process that serves, with these arguments, as main would.
const serveChildArgs = "TRADEKIT_TEST_SERVE_ARGS"

// TestServeExitsWithParent starts serve under a shell, as `go run … &`
// starts it under go run, kills the shell with SIGKILL and checks that
// serve stops with --exit-with-parent, and keeps running without it (the
// shell is not go run).
func TestServeExitsWithParent(t *testing.T) {
	t.Parallel()
	if args := os.Getenv(serveChildArgs); args != "" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		if status := runMain(ctx, strings.Fields(args), os.Getenv, strings.NewReader(""), os.Stdout, os.Stderr); status != 0 {
			t.Fatalf("serve %s: exit status %d", args, status)
		}
		return
	}
	for _, tt := range []struct {
		name, flag string
		exits      bool
	}{
		{"with the flag", "--exit-with-parent", true},
		{"without it", "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			addr := freeAddr(t)
			pidFile, logFile := filepath.Join(dir, "pid"), filepath.Join(dir, "log")
			stdout, err := os.Create(pidFile)
			if err != nil {
				t.Fatal(err)
			}
			defer stdout.Close()
			stderr, err := os.Create(logFile)
			if err != nil {
				t.Fatal(err)
			}
			defer stderr.Close()
			// The shell starts serve in the background, writes its PID and
			// waits for it: serve's parent is the shell.
			sh := exec.Command("sh", "-c", `"$0" -test.run='^TestServeExitsWithParent$' & echo $!; wait`, os.Args[0])
			sh.Env = append(os.Environ(), serveChildArgs+"=serve --no-seed --addr "+addr+" --db "+filepath.Join(dir, "x.db")+" "+tt.flag)
			sh.Stdout, sh.Stderr = stdout, stderr
			if err := sh.Start(); err != nil {
				t.Fatal(err)
			}
			waitHealthy(t, "http://"+addr+"/healthz")
			b, _ := os.ReadFile(pidFile)
			pid, err := strconv.Atoi(strings.TrimSpace(string(bytes.SplitN(b, []byte("\n"), 2)[0])))
			if err != nil {
				t.Fatalf("the PID of serve: %q: %v", b, err)
			}
			t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })

			sh.Process.Kill()
			sh.Wait()
			if !tt.exits {
				// Nothing may happen: serve must outlive its parent. A
				// bounded sleep, then it must still answer.
				time.Sleep(time.Second)
				if !answers(addr) || exited(pid) {
					t.Fatal("serve stopped with its parent without --exit-with-parent")
				}
				syscall.Kill(pid, syscall.SIGTERM)
			}
			if err := testkit.Poll(15*time.Second, func() bool { return exited(pid) }); err != nil {
				log, _ := os.ReadFile(logFile)
				t.Fatalf("serve still runs 15 s after its parent was killed:\n%s", log)
			}
			if answers(addr) {
				t.Error("something still answers at serve's address")
			}
			log, _ := os.ReadFile(logFile)
			if tt.exits && (!strings.Contains(string(log), "serve exits when its parent process does") ||
				!strings.Contains(string(log), "why=--exit-with-parent")) {
				t.Errorf("serve did not log that it exits with its parent:\n%s", log)
			}
			// The test binary that served says PASS when serve returned
			// with exit status 0, as on SIGTERM.
			if out, _ := os.ReadFile(pidFile); !bytes.Contains(out, []byte("\nPASS\n")) {
				t.Errorf("serve did not stop cleanly:\n%s\n%s", out, log)
			}
		})
	}
}

// exited reports whether the process pid has exited: it is gone, or a
// zombie that nobody has reaped yet.
func exited(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	// pid (comm) state …: comm may hold spaces and parentheses.
	rest := b[bytes.LastIndexByte(b, ')')+1:]
	f := strings.Fields(string(rest))
	return len(f) == 0 || f[0] == "Z" || f[0] == "X"
}

// answers reports whether a server answers /healthz at addr.
func answers(addr string) bool {
	c := http.Client{Timeout: time.Second}
	res, err := c.Get("http://" + addr + "/healthz")
	if err != nil {
		return false
	}
	res.Body.Close()
	return true
}
