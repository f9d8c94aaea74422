package database

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
	"github.com/uptrace/bun/migrate"
)

//go:embed migrations
var migrationFiles embed.FS

// migrateLockID is the PostgreSQL advisory lock key held while migrating
// ("tradekit" in ASCII, folded into 63 bits).
const migrateLockID = 0x7472_6164_656b_6974 >> 1

// Migrate applies the pending migrations of db's dialect, each in its own
// transaction, and returns the names of those it applied. A migration is
// recorded as applied only once it has succeeded.
func Migrate(ctx context.Context, db *bun.DB) ([]string, error) {
	dir := "migrations/sqlite"
	if db.Dialect().Name() == dialect.PG {
		dir = "migrations/postgres"
		// The lock is a transaction's, held open beside the migrations
		// (on a server connection of its own, even through a
		// transaction pooler), and released when it rolls back.
		lock, err := db.BeginTx(ctx, nil)
		if err != nil {
			return nil, fmt.Errorf("database: migrate: %w", err)
		}
		defer lock.Rollback()
		if err := LockKey(ctx, lock, migrateLockID); err != nil {
			return nil, fmt.Errorf("database: migrate: lock: %w", err)
		}
	}
	sub, err := fs.Sub(migrationFiles, dir)
	if err != nil {
		return nil, fmt.Errorf("database: migrate: %w", err)
	}
	ms := migrate.NewMigrations()
	if err := ms.Discover(sub); err != nil {
		return nil, fmt.Errorf("database: migrate: %w", err)
	}
	m := migrate.NewMigrator(db, ms, migrate.WithMarkAppliedOnSuccess(true))
	if err := m.Init(ctx); err != nil {
		return nil, fmt.Errorf("database: migrate: init: %w", err)
	}
	group, err := m.Migrate(ctx)
	if err != nil {
		return nil, fmt.Errorf("database: migrate: %w", err)
	}
	var names []string
	for _, mig := range group.Migrations {
		names = append(names, mig.Name)
	}
	return names, nil
}

// Version returns the schema version of db: the name of the latest
// migration applied (e.g. "20261208100000_paper_tokens_rotated"), or ""
// when none is.
func Version(ctx context.Context, db *bun.DB) (string, error) {
	var names []string
	err := db.NewSelect().Table(MigrationsTable).Column("name").OrderExpr("name DESC").Limit(1).Scan(ctx, &names)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("database: schema version: %w", err)
	}
	if len(names) == 0 {
		return "", nil
	}
	return names[0], nil
}
