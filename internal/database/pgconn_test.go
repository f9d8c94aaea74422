package database_test

import (
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"

	"github.com/tradekit/tradekit/internal/database"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/internal/testkit"
)

// typesRow has a column of each type Tradekit's tables use.
type typesRow struct {
	bun.BaseModel `bun:"table:types_probe"`

	ID      uuid.UUID       `bun:"id,pk"`
	Flag    bool            `bun:"flag"`
	Small   int16           `bun:"small"`
	Count   int64           `bun:"count"`
	Ratio   float64         `bun:"ratio"`
	Price   decimal.Decimal `bun:"price"`
	Name    string          `bun:"name"`
	Day     time.Time       `bun:"day"`
	At      time.Time       `bun:"at"`
	Blob    []byte          `bun:"blob"`
	Doc     map[string]any  `bun:"doc,type:jsonb"`
	Missing *string         `bun:"missing"`
}

// typesByID reads a typesRow; in a transaction after a lock it runs as
// its function's call, in one batch with the lock.
var typesByID = database.NewPrepared("types_by_id", func(db bun.IDB, params ...any) schema.QueryAppender {
	return db.NewSelect().Model((*typesRow)(nil)).
		Column("id", "flag", "small", "count", "ratio", "price", "name", "day", "at", "blob", "doc", "missing").
		Where("id = ?", params[0])
})

// TestReadAfterLock checks the reads that go in one batch with what a
// transaction of RunInTx has pending (BEGIN, a lock, a write): that bun
// scans them exactly as it scans the same read run alone, a Prepared read
// (its function's call) as well as bun's own; that a read after a lock
// sees what the lock's previous holder committed; and that a pending
// statement's failure is the read's error, and rolls the transaction
// back.
func TestReadAfterLock(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		ctx := context.Background()
		if _, err := db.NewCreateTable().Model((*typesRow)(nil)).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		want := typesRow{
			ID: uuid.New(), Flag: true, Small: -7, Count: 1 << 40, Ratio: 0.1, Price: decimal.RequireFromString("1234.567890123456789"),
			Name: "it's", Day: time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC), At: time.Date(2026, 11, 29, 7, 1, 49, 918213000, time.UTC),
			Blob: []byte{0, 1, 0xfe}, Doc: map[string]any{"qty": "10", "n": 2.5},
		}
		if _, err := db.NewInsert().Model(&want).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		var alone, prepAlone typesRow
		if err := db.NewSelect().Model(&alone).Where("id = ?", want.ID).Scan(ctx); err != nil {
			t.Fatal(err)
		}
		if err := typesByID.Scan(ctx, db, &prepAlone, want.ID); err != nil {
			t.Fatal(err)
		}
		check := func() {
			t.Helper()
			var got, prep typesRow
			err := database.RunInTx(ctx, db, func(ctx context.Context, tx bun.IDB) error {
				if err := database.LockUser(ctx, tx, want.ID); err != nil {
					return err
				}
				if err := tx.NewSelect().Model(&got).Where("id = ?", want.ID).Scan(ctx); err != nil {
					return err
				}
				if err := database.LockUser(ctx, tx, uuid.New()); err != nil {
					return err
				}
				return typesByID.Scan(ctx, tx, &prep, want.ID)
			})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(alone, got); d != "" {
				t.Fatalf("bun's read after a lock differs from the read alone (-alone +after lock):\n%s", d)
			}
			if d := cmp.Diff(prepAlone, prep); d != "" {
				t.Fatalf("the Prepared read after a lock differs from it alone (-alone +after lock):\n%s", d)
			}
		}
		check()
		// Again, with the read prepared on the connection by the first
		// time (see pgConn.prepare): it goes in the batch as that
		// statement, bound and executed.
		check()
		if d := cmp.Diff(alone, prepAlone); d != "" {
			t.Fatalf("the Prepared read differs from bun's (-bun +prepared):\n%s", d)
		}
		if db.Dialect().Name().String() != "pg" {
			return
		}

		// The read that goes with a lock sees what the lock's holder
		// committed while it waited.
		key := uuid.New()
		held, done := make(chan struct{}), make(chan error, 1)
		go func() {
			done <- database.RunInTx(ctx, db, func(ctx context.Context, tx bun.IDB) error {
				if err := database.LockUser(ctx, tx, key); err != nil {
					return err
				}
				if _, err := tx.NewRaw("SELECT 1").Exec(ctx); err != nil {
					return err
				}
				close(held)
				waitForLockWaiter(t, db, key)
				_, err := tx.NewUpdate().Model((*typesRow)(nil)).Set("count = 42").Where("id = ?", want.ID).Exec(ctx)
				return err
			})
		}()
		<-held
		var count int64
		err := database.RunInTx(ctx, db, func(ctx context.Context, tx bun.IDB) error {
			if err := database.LockUser(ctx, tx, key); err != nil {
				return err
			}
			return tx.NewSelect().Model((*typesRow)(nil)).Column("count").Where("id = ?", want.ID).Scan(ctx, &count)
		})
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if err != nil || count != 42 {
			t.Fatalf("the read after the lock: count %d (%v), want the holder's 42", count, err)
		}

		// A pending write's failure is the read's error; nothing of the
		// transaction stays.
		err = database.RunInTx(ctx, db, func(ctx context.Context, tx bun.IDB) error {
			if err := database.ExecWithNext(ctx, tx, tx.NewUpdate().Model((*typesRow)(nil)).Set("count = 7").Where("id = ?", want.ID)); err != nil {
				return err
			}
			if err := database.ExecWithNext(ctx, tx, tx.NewInsert().Model(&want)); err != nil {
				return err
			}
			_, err := tx.NewSelect().Model((*typesRow)(nil)).Count(ctx)
			return err
		})
		if !database.IsUniqueViolation(err) {
			t.Fatalf("a read after a failing write: %v, want the unique violation", err)
		}
		if err := db.NewSelect().Model((*typesRow)(nil)).Column("count").Where("id = ?", want.ID).Scan(ctx, &count); err != nil || count != 42 {
			t.Fatalf("after the failed transaction: count %d (%v), want 42", count, err)
		}
	})
}

// waitForLockWaiter waits until a session waits for the advisory lock of
// key, as [database.LockUser] takes it.
func waitForLockWaiter(t *testing.T, db *bun.DB, key uuid.UUID) {
	k := binary.BigEndian.Uint64(key[:8])
	waitFor(t, "a session waiting for the lock", func() bool {
		var n int
		err := db.NewRaw("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND classid = ? AND objid = ?",
			int64(k>>32), int64(k&0xffffffff)).Scan(context.Background(), &n)
		return err == nil && n > 0
	})
}

// waitFor waits up to 10 s until ok, or fails the test naming what.
func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	if testkit.Poll(10*time.Second, ok) != nil {
		t.Errorf("10 s without %s", what)
	}
}
