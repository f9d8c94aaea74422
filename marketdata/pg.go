package marketdata

import (
	"bytes"
	"context"
	"database/sql/driver"
	"fmt"
	"strconv"

	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/tradekit/tradekit/internal/database"
)

// The PostgreSQL-only paths of the store: bulk loading with COPY on one
// connection. (The LISTEN of price-version changes is in versions.go.)

// copyPrices writes ps on PostgreSQL with COPY into a temporary table of
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
	var buf bytes.Buffer
	buf.Grow(len(ps) * 80)
	var line []byte
	for _, p := range ps {
		line = line[:0]
		line = append(line, p.AssetID.String()...)
		line = append(line, '\t')
		line, _ = p.Date.AppendText(line)
		for _, d := range [4]decimal.Decimal{p.Open, p.High, p.Low, p.Close} {
			line = append(line, '\t')
			line = append(line, d.String()...)
		}
		line = append(line, '\t')
		line = strconv.AppendInt(line, p.Volume, 10)
		line = append(line, '\n')
		buf.Write(line)
	}
	if _, err := database.CopyFrom(ctx, conn, "COPY prices_load FROM STDIN", &buf); err != nil {
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
