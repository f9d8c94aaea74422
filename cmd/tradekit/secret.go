package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/tradekit/tradekit/internal/database"
	"github.com/tradekit/tradekit/internal/dbcopy"
	"github.com/tradekit/tradekit/internal/seal"
	"github.com/tradekit/tradekit/server"
)

// secretKeySize is the size of TRADEKIT_SECRET_KEY: 32 bytes, AES-256.
const secretKeySize = 32

// secretKey returns the key that seals broker tokens and webhook secrets
// in db: TRADEKIT_SECRET_KEY (base64 of 32 bytes) when set; on SQLite,
// else, the key in the file beside the database (<path>.secret, mode
// 0600 whatever the umask), generated the first time; on PostgreSQL,
// else, nil: the server then refuses connections and webhooks, saying
// what to set, since instances sharing a database must share the key.
//
// A key that does not open the sealed values db holds is refused, naming
// where it came from; so is a missing key file of a SQLite database that
// holds some (a copy made without its .secret file): a new key would
// open none of them.
//
// db need not be migrated: serve checks the key before it migrates and
// seeds, and a table that does not exist yet holds no sealed value.
func (e *env) secretKey(ctx context.Context, db bun.IDB, dsn string, log *slog.Logger) ([]byte, error) {
	tables, err := existingTables(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	var cols []seal.Column
	for _, c := range sealedColumns() {
		if tables[c.Table] {
			cols = append(cols, c)
		}
	}
	sample, sealed, err := dbcopy.FindSealed(ctx, db, cols)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	key, err := e.envSecretKey()
	if err != nil {
		return nil, fmt.Errorf("serve: %w (e.g. openssl rand -base64 32)", err)
	}
	from := "TRADEKIT_SECRET_KEY"
	if key == nil {
		if database.IsPostgres(dsn) {
			return nil, nil
		}
		path := strings.TrimPrefix(dsn, "sqlite:") + ".secret"
		if key, err = readKeyFile(path); err != nil {
			return nil, fmt.Errorf("serve: %w; restore it, or remove it and reconnect every broker", err)
		}
		if key == nil {
			if sealed {
				return nil, fmt.Errorf("serve: the database holds sealed secrets (%s.%s) but its key file %s is missing: "+
					"restore the key file saved with the database (a copy of a SQLite database needs its .secret file), "+
					"or set TRADEKIT_SECRET_KEY to that key", sample.Column.Table, sample.Column.Column, path)
			}
			return newKeyFile(path, log)
		}
		from = "the key in " + path
	}
	if sealed && !sample.Opens(key) {
		return nil, fmt.Errorf("serve: %s does not open the sealed secrets the database holds (%s.%s): give the key that sealed them",
			from, sample.Column.Table, sample.Column.Column)
	}
	return key, nil
}

// existingTables returns the names of the tables of db's schema: those
// of the current schema on PostgreSQL, of the main database on SQLite.
func existingTables(ctx context.Context, db bun.IDB) (map[string]bool, error) {
	q := "SELECT name FROM sqlite_master WHERE type = 'table'"
	if db.Dialect().Name() == dialect.PG {
		q = "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
	}
	var names []string
	if err := db.NewRaw(q).Scan(ctx, &names); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("list the tables: %w", err)
	}
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m, nil
}

// newKeyFile writes a new random key into the file path (0600 whatever
// the umask, which may have taken even the owner's bits), and returns it.
// The file appears whole or not at all: the key is written to a file of
// its own beside it, then linked to path, so that another process
// starting on the same database at the same moment never reads it half
// written; when that process linked its key first, newKeyFile returns
// that one.
func newKeyFile(path string, log *slog.Logger) ([]byte, error) {
	key := make([]byte, secretKeySize)
	rand.Read(key) // never returns an error (crypto/rand)
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".new-*")
	if err != nil {
		return nil, fmt.Errorf("serve: write the secret key: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	_, err = fmt.Fprintln(f, base64.StdEncoding.EncodeToString(key))
	if err == nil {
		err = f.Chmod(0o600)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Link(tmp, path)
	}
	if errors.Is(err, fs.ErrExist) {
		return readKeyFile(path) // another process's, written whole
	}
	if err != nil {
		return nil, fmt.Errorf("serve: write the secret key: %w", err)
	}
	log.Info("generated the key that encrypts broker tokens; keep it with the database", "path", path)
	return key, nil
}

// alpacaConfig returns the alpaca provider's configuration from the
// environment, nil when TRADEKIT_ALPACA_CLIENT_ID is unset.
func (e *env) alpacaConfig() (*server.AlpacaConfig, error) {
	id, secret := e.getenv("TRADEKIT_ALPACA_CLIENT_ID"), e.getenv("TRADEKIT_ALPACA_CLIENT_SECRET")
	if id == "" && secret == "" {
		return nil, nil
	}
	if id == "" || secret == "" {
		return nil, fmt.Errorf("serve: set both TRADEKIT_ALPACA_CLIENT_ID and TRADEKIT_ALPACA_CLIENT_SECRET, or neither")
	}
	return &server.AlpacaConfig{ClientID: id, ClientSecret: secret,
		AuthorizeURL: e.getenv("TRADEKIT_ALPACA_AUTHORIZE_URL"), TokenURL: e.getenv("TRADEKIT_ALPACA_TOKEN_URL"),
		APIURL: e.getenv("TRADEKIT_ALPACA_API_URL")}, nil
}
