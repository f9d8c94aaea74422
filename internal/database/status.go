package database

import (
	"context"
	"fmt"
	"io/fs"
	"slices"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
	"github.com/uptrace/bun/migrate"
)

// MigrationsTable and MigrationLocksTable are the tables in which bun's
// migrate records the migrations applied to a database, and its lock:
// bookkeeping that each database keeps for itself.
const (
	MigrationsTable     = "bun_migrations"
	MigrationLocksTable = "bun_migration_locks"
)

// MigrationStatus compares the migrations applied to db with those of this
// binary, without changing anything: pending are the binary's migrations
// not applied to db, unknown those applied to db that the binary does not
// have (a newer version applied them). Both are empty for a database that
// is exactly up to date. A database with no migrations table at all is an
// error.
func MigrationStatus(ctx context.Context, db *bun.DB) (pending, unknown []string, err error) {
	dir := "migrations/sqlite"
	if db.Dialect().Name() == dialect.PG {
		dir = "migrations/postgres"
	}
	sub, err := fs.Sub(migrationFiles, dir)
	if err != nil {
		return nil, nil, fmt.Errorf("database: migration status: %w", err)
	}
	ms := migrate.NewMigrations()
	if err := ms.Discover(sub); err != nil {
		return nil, nil, fmt.Errorf("database: migration status: %w", err)
	}
	applied, err := migrate.NewMigrator(db, ms).AppliedMigrations(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("database: migration status: read %s: %w", MigrationsTable, err)
	}
	var known []string
	for _, m := range ms.Sorted() {
		known = append(known, m.Name)
	}
	var done []string
	for _, m := range applied {
		done = append(done, m.Name)
	}
	for _, name := range known {
		if !slices.Contains(done, name) {
			pending = append(pending, name)
		}
	}
	for _, name := range done {
		if !slices.Contains(known, name) {
			unknown = append(unknown, name)
		}
	}
	slices.Sort(unknown)
	return pending, unknown, nil
}
