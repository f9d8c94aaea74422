package marketdata

import (
	"context"
	"database/sql/driver"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/database"
)

// The PostgreSQL-only paths of the store: bulk loading with COPY on one
// connection. (The LISTEN of price-version changes is in versions.go.)

// copyPrices writes ps on PostgreSQL with COPY (binary, each value
// encoded by pgx for its column's type) into a temporary table of
// the connection's session, then one INSERT ... SELECT with the upsert
// clause. Inside a transaction begun on conn (see [InConnTx]) it is all or
// nothing. It reports whether any row changed.
func copyPrices(ctx context.Context, conn bun.Conn, ps []Price) (bool, error) {
	_, err := conn.ExecContext(ctx, `CREATE TEMP TABLE IF NOT EXISTS prices_load (
		asset_id UUID, date DATE, open NUMERIC, high NUMERIC, low NUMERIC, close NUMERIC, volume BIGINT)`)
	if err != nil {
		return false, fmt.Errorf("marketdata: save prices: %w", err)
	}
	if _, err := conn.ExecContext(ctx, "TRUNCATE prices_load"); err != nil {
		return false, fmt.Errorf("marketdata: save prices: %w", err)
	}
	rows := pgx.CopyFromSlice(len(ps), func(i int) ([]any, error) {
		p := &ps[i]
		return []any{p.AssetID, pgDate(p.Date), pgNumeric(p.Open), pgNumeric(p.High), pgNumeric(p.Low), pgNumeric(p.Close), p.Volume}, nil
	})
	if _, err := database.CopyFrom(ctx, conn, "prices_load", priceColumnList, rows); err != nil {
		return false, fmt.Errorf("marketdata: save prices: copy: %w", err)
	}
	res, err := conn.ExecContext(ctx, "INSERT INTO prices ("+priceColumns+") SELECT "+priceColumns+" FROM prices_load"+priceUpsert)
	if err != nil {
		return false, fmt.Errorf("marketdata: save prices: %w", err)
	}
	if _, err := conn.ExecContext(ctx, "TRUNCATE prices_load"); err != nil {
		return false, fmt.Errorf("marketdata: save prices: %w", err)
	}
	n, err := res.RowsAffected()
	return err != nil || n > 0, nil
}

// pgNumeric returns d as pgx's NUMERIC, exactly: its coefficient and
// exponent.
func pgNumeric(d decimal.Decimal) pgtype.Numeric {
	return pgtype.Numeric{Int: d.Coefficient(), Exp: d.Exponent(), Valid: true}
}

// pgDate returns d as pgx's DATE.
func pgDate(d calendar.Date) pgtype.Date {
	return pgtype.Date{Time: time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, time.UTC), Valid: true}
}

// InConnTx runs fn in a transaction on one connection of db, with a Store
// built on that connection: on PostgreSQL, [Store.SavePrices] then loads
// with COPY. The transaction commits when fn returns nil and rolls back
// otherwise. On SQLite it is db.RunInTx with a Store on the bun.Tx.
func InConnTx(ctx context.Context, db *bun.DB, fn func(ctx context.Context, st *Store) error) error {
	if db.Dialect().Name() != dialect.PG {
		return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error { return fn(ctx, NewStore(tx)) })
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("marketdata: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
		return fmt.Errorf("marketdata: begin: %w", err)
	}
	done := false
	defer func() {
		if done {
			return
		}
		// fn failed or panicked: roll back, and never hand the pool a
		// connection left in an unknown state.
		if _, err := conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK"); err != nil {
			conn.Raw(func(any) error { return driver.ErrBadConn })
		}
	}()
	if err := fn(ctx, NewStore(conn)); err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return fmt.Errorf("marketdata: commit: %w", err)
	}
	done = true
	return nil
}
