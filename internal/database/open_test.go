package database_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tradekit/tradekit/internal/database"
)

// TestOpenSQLiteFileModes checks that Open creates a new SQLite file 0600
// and leaves the mode of an existing one as its owner set it. The -wal
// and -shm files, and the umask, are TestServeFilesPrivate's in
// cmd/tradekit.
func TestOpenSQLiteFileModes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	existing := filepath.Join(dir, "shared.db")
	if err := os.WriteFile(existing, nil, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(existing, 0o640); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		path string
		want os.FileMode
	}{
		{filepath.Join(dir, "new.db"), 0o600},
		{existing, 0o640},
	} {
		db, err := database.Open(context.Background(), tt.path, database.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec("CREATE TABLE t (x INTEGER)"); err != nil {
			t.Fatal(err)
		}
		db.Close()
		fi, err := os.Stat(tt.path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != tt.want {
			t.Errorf("%s: mode %v, want %v", filepath.Base(tt.path), got, tt.want)
		}
	}
}

// TestOpenSQLiteMissingDirectory checks that a path in a directory that
// does not exist is an error naming the path.
func TestOpenSQLiteMissingDirectory(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "nowhere", "t.db")
	_, err := database.Open(context.Background(), path, database.Options{})
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("Open(%s): %v, want an error naming the path", path, err)
	}
}
