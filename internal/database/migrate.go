package database

import (
	"context"
	"embed"
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
		conn, err := db.Conn(ctx)
		if err != nil {
			return nil, fmt.Errorf("database: migrate: %w", err)
		}
		defer conn.Close()
		if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock(?)", migrateLockID); err != nil {
			return nil, fmt.Errorf("database: migrate: lock: %w", err)
		}
		defer conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(?)", migrateLockID)
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
