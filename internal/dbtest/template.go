package dbtest

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/tradekit/tradekit/internal/database"
)

// A test database starts as a copy of a template that this process
// migrated once: migrating anew for each test costs about 0.1 s on SQLite
// (2.5 s under the race detector, SQLite being pure Go here) and 0.3 s on
// PostgreSQL, while a copy costs milliseconds. The copy then goes through
// [MustOpen] as before, whose migrations find nothing left to apply.
var (
	sqliteTemplate struct {
		once sync.Once
		dir  string // removed by Run
		path string
		err  error
	}
	pgTemplate struct {
		once sync.Once
		name string
		err  error
	}
)

// sqliteCopy writes a migrated SQLite database to path, copied from the
// process's template.
func sqliteCopy(tb testing.TB, path string) {
	tb.Helper()
	t := &sqliteTemplate
	t.once.Do(func() {
		if t.dir, t.err = os.MkdirTemp(tempDir, "tradekit-dbtest-"); t.err != nil {
			return
		}
		t.path = filepath.Join(t.dir, "template.db")
		t.err = migrateSQLite(t.path)
	})
	if t.err != nil {
		tb.Fatalf("dbtest: the SQLite template: %v", t.err)
	}
	if err := copyFile(t.path, path); err != nil {
		tb.Fatalf("dbtest: %v", err)
	}
}

// migrateSQLite creates the migrated database at path, with its write-ahead
// log checkpointed into the file, so that the file alone is the database.
func migrateSQLite(path string) error {
	ctx := context.Background()
	db, err := database.Open(ctx, path, database.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := database.Migrate(ctx, db); err != nil {
		return err
	}
	if _, err := db.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// copyFile copies the file src to dst, which it creates with mode 0600.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// pgTemplateName returns the name of the process's migrated template
// database on the server of adminDSN, creating it on first use. No
// connection to it stays open, so that CREATE DATABASE … TEMPLATE may
// copy it.
func pgTemplateName(adminDSN string, create func(name string) error) (string, error) {
	t := &pgTemplate
	t.once.Do(func() {
		t.name = "tk_template_" + randomHex(6)
		t.err = create(t.name)
	})
	return t.name, t.err
}

// removeTemplates removes the SQLite template's directory; the
// PostgreSQL template goes with its server, or stays on a server of the
// caller's (TRADEKIT_TEST_POSTGRES), as the test databases of a killed
// run would.
func removeTemplates() {
	if sqliteTemplate.dir != "" {
		os.RemoveAll(sqliteTemplate.dir)
	}
}
