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
// (the guardrail check and the reservation), fills applied to the ledger,
// reconciliations, guardrail changes and the count of custom indicators.
//
// On PostgreSQL it is a transaction-level advisory lock keyed by the
// first 8 bytes of the user id, which every instance takes alike. SQLite
// transactions begin IMMEDIATE (see [Open]), so a writer holds the whole
// database already and LockUser does nothing there. tx must be a
// [bun.Tx] or a [Tx] of [RunInTx]: outside a transaction the lock would
// end with its statement.
func LockUser(ctx context.Context, tx bun.IDB, userID uuid.UUID) error {
	if !InTx(tx) {
		return errors.New("database: LockUser needs a transaction")
	}
	if tx.Dialect().Name() != dialect.PG {
		return nil
	}
	key := int64(binary.BigEndian.Uint64(userID[:8]))
	if t, ok := tx.(*Tx); ok {
		// Sent with the next statement, which runs once the lock is
		// held; a DO block, so that the message returns no row before
		// that statement's.
		t.queue(fmt.Sprintf("DO $$BEGIN PERFORM pg_advisory_xact_lock(%d); END$$", key))
		return nil
	}
	if _, err := tx.NewRaw("SELECT pg_advisory_xact_lock(?)", key).Exec(ctx); err != nil {
		return fmt.Errorf("database: lock user %s: %w", userID, err)
	}
	return nil
}
