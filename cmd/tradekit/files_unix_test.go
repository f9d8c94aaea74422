//go:build unix

package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// privateFilesDir, set in the environment, makes TestServeFilesPrivate
// the child process that serves from that directory under umask 0.
const privateFilesDir = "TRADEKIT_TEST_PRIVATE_FILES_DIR"

// TestServeFilesPrivate checks that `tradekit serve` on a new SQLite
// database creates the database, its -wal and -shm files and the .secret
// key file 0600 even under umask 0, where SQLite's own default is 0644.
// The umask belongs to the whole process, so a child process serves.
func TestServeFilesPrivate(t *testing.T) {
	t.Parallel()
	if dir := os.Getenv(privateFilesDir); dir != "" {
		servePrivate(t, dir)
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestServeFilesPrivate$", "-test.v")
	cmd.Env = append(os.Environ(), privateFilesDir+"="+dir)
	if out, err := cmd.CombinedOutput(); err != nil || !bytes.Contains(out, []byte("--- PASS")) {
		t.Fatalf("the child process: %v\n%s", err, out)
	}
}

// servePrivate serves from dir under umask 0 and, while the server runs,
// checks the mode of every file in dir.
func servePrivate(t *testing.T, dir string) {
	syscall.Umask(0)
	db := filepath.Join(dir, "t.db")
	env := map[string]string{"TRADEKIT_DB": db}
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", addr, "--no-seed"}, func(k string) string { return env[k] },
			strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{})
	}()
	waitHealthy(t, "http://"+addr+"/healthz")
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()

	for _, name := range []string{db, db + "-wal", db + "-shm", db + ".secret"} {
		if _, err := os.Stat(name); err != nil {
			t.Errorf("%s is missing: %v", filepath.Base(name), err)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want -rw-------", e.Name(), fi.Mode().Perm())
		}
	}
}
