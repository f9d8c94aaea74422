package database_test

import (
	"context"
	"database/sql"
	"encoding/binary"
	"testing"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/tradekit/tradekit/internal/database"
	"github.com/tradekit/tradekit/internal/dbtest"
)

func TestLockUser(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		alice, bob := uuid.New(), uuid.New()
		if err := database.LockUser(ctx, db, alice); err == nil {
			t.Error("LockUser outside a transaction succeeded")
		}
		if db.Dialect().Name() != dialect.PG {
			// SQLite: a writer holds the database; LockUser only checks.
			err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error { return database.LockUser(ctx, tx, alice) })
			if err != nil {
				t.Fatal(err)
			}
			return
		}
		// While one transaction holds alice's lock, another cannot take
		// it, and can take bob's; after the commit it can take alice's.
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := database.LockUser(ctx, tx, alice); err != nil {
			t.Fatal(err)
		}
		try := func(userID uuid.UUID) bool {
			t.Helper()
			var got bool
			err := db.RunInTx(ctx, &sql.TxOptions{}, func(ctx context.Context, other bun.Tx) error {
				key := int64(binary.BigEndian.Uint64(userID[:8]))
				return other.NewRaw("SELECT pg_try_advisory_xact_lock(?)", key).Scan(ctx, &got)
			})
			if err != nil {
				t.Fatal(err)
			}
			return got
		}
		if try(alice) {
			t.Error("another transaction took alice's lock while it was held")
		}
		if !try(bob) {
			t.Error("alice's lock kept another transaction from bob's")
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if !try(alice) {
			t.Error("alice's lock outlived its transaction")
		}
	})
}
