package database

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// LockUser holds, until the transaction tx ends, the one lock that
// serialises whatever must see a user's earlier writes: order placements
// (the guardrail check and the reservation), reconciliations, guardrail
// changes and the count of custom indicators. It is [Lock] of the user's
// id.
func LockUser(ctx context.Context, tx bun.IDB, userID uuid.UUID) error {
	return Lock(ctx, tx, userID)
}

// Lock holds, until the transaction tx ends, the lock of the row with
// the given id (a user, a connection's ledger), for work that must see
// the earlier writes of whoever held it before.
//
// On PostgreSQL it is a transaction-level advisory lock keyed by the
// first 8 bytes of the id, which every instance takes alike (ids are
// random, so two ids share a key about once in 2^64 pairs, which would
// make them wait for each other, nothing worse). SQLite transactions
// begin IMMEDIATE (see [Open]), so a writer holds the whole database
// already and Lock does nothing there. tx must be a [bun.Tx] or a [Tx]
// of [RunInTx]: outside a transaction the lock would end with its
// statement.
func Lock(ctx context.Context, tx bun.IDB, id uuid.UUID) error {
	if err := LockKey(ctx, tx, int64(binary.BigEndian.Uint64(id[:8]))); err != nil {
		return fmt.Errorf("database: lock %s: %w", id, err)
	}
	return nil
}

// LockKey holds, until the transaction tx ends, the lock with the given
// key: the one helper behind every advisory lock of the repository
// ([Lock] and [LockUser] of ids, the follows' creation in package
// copytrading, [Migrate]'s). Keys are shared by every instance on the
// database, so each use picks a key of its own (a constant spelling its
// name, or the bits of an id).
//
// On PostgreSQL it is a transaction-level advisory lock
// (pg_advisory_xact_lock), released when tx commits or rolls back, which
// holds through a transaction pooler. SQLite transactions begin
// IMMEDIATE (see [Open]), so a writer holds the whole database already
// and LockKey does nothing there. tx must be a [bun.Tx] or a [Tx] of
// [RunInTx]: outside a transaction the lock would end with its
// statement.
func LockKey(ctx context.Context, tx bun.IDB, key int64) error {
	if !InTx(tx) {
		return errors.New("database: a lock needs a transaction")
	}
	if tx.Dialect().Name() != dialect.PG {
		return nil
	}
	if t, ok := tx.(*Tx); ok {
		// Sent with the next statement, which runs once the lock is
		// held.
		t.queue("SELECT pg_advisory_xact_lock($1)", key)
		return nil
	}
	if _, err := tx.NewRaw("SELECT pg_advisory_xact_lock(?)", key).Exec(ctx); err != nil {
		return fmt.Errorf("database: lock %d: %w", key, err)
	}
	return nil
}
