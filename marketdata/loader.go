package marketdata

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/database"
)

// Loader writes price rows in bulk on one connection of a database: the
// storage side of package marketdata/bulk's importer, which owns the
// method (files, parsing, which rows go where) while the SQL that names
// the prices and assets tables stays here. A Loader is not safe for
// concurrent use; every method runs on its one connection, in the
// transactions that [Loader.Begin] opens and [Loader.Commit] ends.
//
// Rows come in the load format of the connection's database: on
// PostgreSQL COPY's text format, one "asset_id\tdate\topen\thigh\tlow\tclose\tvolume\n"
// line a row ([Loader.CopyPrices]); on SQLite the text of each row's
// date and four prices back to back with the volumes apart ([LoadRows],
// [Loader.InsertPrices]).
type Loader struct {
	conn bun.Conn
	pg   bool
	// tx counts the transactions begun: the current one's number.
	tx int
	// triggersOn is set when the role may not turn the foreign-key
	// triggers off; quiet tells whether they are off in the open
	// transaction (see quietTriggers), and savedQuiet what it was when the
	// open savepoint was taken.
	triggersOn, quiet, savedQuiet bool
	// savepoint tells whether a file's savepoint is open.
	savepoint bool
	// SQLite: the statements that write rows, by [rows > 1][upsert],
	// prepared when first used, and their arguments.
	stmts [4]*sqliteStmt
	args  []driver.NamedValue
}

// NewLoader takes a connection of db for a bulk load. On SQLite it sets,
// on that connection only and until [Loader.Close], a page cache large
// enough that a transaction does not spill to disk page by page, and no
// foreign-key lookup per row: the caller must create every asset (with
// [Loader.CreateAsset]) before writing its rows, so the references hold.
func NewLoader(ctx context.Context, db *bun.DB) (*Loader, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("marketdata: bulk import: %w", err)
	}
	l := &Loader{conn: conn, pg: db.Dialect().Name() == dialect.PG}
	if !l.pg {
		for _, q := range []string{"PRAGMA cache_size = -262144", "PRAGMA foreign_keys = OFF"} {
			if _, err := conn.ExecContext(ctx, q); err != nil {
				l.Close(ctx)
				return nil, fmt.Errorf("marketdata: bulk import: %w", err)
			}
		}
	}
	return l, nil
}

// Close closes the prepared statements, restores the SQLite settings that
// [NewLoader] changed and returns the connection to the pool; a connection
// whose settings cannot be restored is discarded instead.
func (l *Loader) Close(ctx context.Context) {
	l.closeStmts()
	if !l.pg {
		for _, q := range []string{"PRAGMA cache_size = -2000", "PRAGMA foreign_keys = ON"} {
			if _, err := l.conn.ExecContext(context.WithoutCancel(ctx), q); err != nil {
				l.conn.Raw(func(any) error { return driver.ErrBadConn })
			}
		}
	}
	l.conn.Close()
}

// IsPostgres reports whether the loader writes to PostgreSQL (rows in
// COPY's text format) rather than SQLite.
func (l *Loader) IsPostgres() bool { return l.pg }

// Tx returns the number of the open transaction: 1 for the first that
// [Loader.Begin] opened, and one more for each after it. Locks taken by
// [Loader.CheckAssets] hold until the end of the transaction they were
// taken in.
func (l *Loader) Tx() int { return l.tx }

// Store returns a Store on the loader's connection, inside its open
// transaction if there is one.
func (l *Loader) Store() *Store { return NewStore(l.conn) }

// AssetIDs returns the ids of the stored assets by symbol.
func (l *Loader) AssetIDs(ctx context.Context) (map[string]uuid.UUID, error) {
	var known []struct {
		Symbol string    `bun:"symbol"`
		ID     uuid.UUID `bun:"id"`
	}
	if err := l.conn.NewRaw("SELECT symbol, id FROM assets").Scan(ctx, &known); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("marketdata: bulk import: %w", err)
	}
	out := make(map[string]uuid.UUID, len(known))
	for _, k := range known {
		out[k.Symbol] = k.ID
	}
	return out, nil
}

// AssetExchange is a stored asset's id, symbol and exchange, as
// [Loader.AssetExchanges] lists them.
type AssetExchange struct {
	ID         uuid.UUID `bun:"id"`
	Symbol     string    `bun:"symbol"`
	ExchangeID uuid.UUID `bun:"exchange_id"`
}

// AssetExchanges returns the id, symbol and exchange of every stored
// asset.
func (l *Loader) AssetExchanges(ctx context.Context) ([]AssetExchange, error) {
	var assets []AssetExchange
	if err := l.conn.NewRaw("SELECT id, symbol, exchange_id FROM assets").Scan(ctx, &assets); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("marketdata: bulk import: %w", err)
	}
	return assets, nil
}

// Begin begins a transaction. On PostgreSQL it also finds, in the
// loader's first transaction, whether the role may set
// session_replication_role (a superuser may, or a role granted SET on the
// parameter): see quietTriggers.
func (l *Loader) Begin(ctx context.Context) error {
	l.tx++
	l.quiet = false
	if _, err := l.conn.ExecContext(ctx, "BEGIN"); err != nil {
		return fmt.Errorf("marketdata: bulk import: begin: %w", err)
	}
	if !l.pg {
		return nil
	}
	if !l.triggersOn && l.tx == 1 {
		if _, err := l.conn.ExecContext(ctx, "SAVEPOINT bulk_role"); err != nil {
			return fmt.Errorf("marketdata: bulk import: %w", err)
		}
		if err := l.quietTriggers(ctx, true); err != nil {
			l.triggersOn = true
			if _, err := l.conn.ExecContext(ctx, "ROLLBACK TO SAVEPOINT bulk_role"); err != nil {
				return fmt.Errorf("marketdata: bulk import: %w", err)
			}
		}
		if _, err := l.conn.ExecContext(ctx, "RELEASE SAVEPOINT bulk_role"); err != nil {
			return fmt.Errorf("marketdata: bulk import: %w", err)
		}
	}
	_, err := l.conn.ExecContext(ctx, `CREATE TEMP TABLE IF NOT EXISTS prices_load (
		asset_id UUID, date DATE, open NUMERIC, high NUMERIC, low NUMERIC, close NUMERIC, volume BIGINT)`)
	if err != nil {
		return fmt.Errorf("marketdata: bulk import: %w", err)
	}
	return nil
}

// quietTriggers sets session_replication_role for the rest of the
// transaction (SET LOCAL): replica, in which the foreign-key triggers of
// prices stay quiet, before rows are written to prices, and origin again
// before anything else (new assets, whose own references are checked as
// usual). Those triggers check each row against assets, which costs more
// than the rest of the row's COPY; the loader's caller makes the check
// redundant, since it creates every new asset before its rows and locks
// the stored ones as the triggers would ([Loader.CheckAssets]). prices has
// no other trigger. When the role may not set the parameter (triggersOn),
// quietTriggers does nothing and the triggers run as usual.
func (l *Loader) quietTriggers(ctx context.Context, quiet bool) error {
	if l.triggersOn || l.quiet == quiet {
		return nil
	}
	role := "origin"
	if quiet {
		role = "replica"
	}
	if _, err := l.conn.ExecContext(ctx, "SET LOCAL session_replication_role = "+role); err != nil {
		return err
	}
	l.quiet = quiet
	return nil
}

// PriceChange is an asset whose stored prices a bulk load changed, from
// the date From on (the earliest date the load wrote for it); a zero From
// means from its first day.
type PriceChange struct {
	AssetID uuid.UUID
	From    calendar.Date
}

// Commit raises the price versions of the assets changed (distinct ids,
// see [Store.SavePrices]), marks their prices changed from each one's
// From, so that readers of the stored copies of their columns re-read
// only the records from there on (see [Store.PriceColumnsOf]), and
// commits the open transaction.
func (l *Loader) Commit(ctx context.Context, changed []PriceChange) error {
	if len(changed) > 0 {
		ps := make([]Price, len(changed))
		for i, c := range changed {
			ps[i].AssetID, ps[i].Date = c.AssetID, c.From
		}
		if err := l.Store().bumpPriceVersions(ctx, ps); err != nil {
			return err
		}
	}
	if _, err := l.conn.ExecContext(ctx, "COMMIT"); err != nil {
		return fmt.Errorf("marketdata: bulk import: commit: %w", err)
	}
	return nil
}

// AnalyzeAfter is how many rows an import writes at least for
// [Loader.Analyze] to refresh the planner's statistics: about what
// PostgreSQL's autovacuum waits for in a table of a million rows (10 %),
// far more than a day of a market (10,000 rows).
const AnalyzeAfter = 100_000

// Analyze refreshes PostgreSQL's statistics of the prices table, after
// an import that wrote rows rows, when they are at least AnalyzeAfter;
// on SQLite, or for fewer rows, it does nothing. Autovacuum would do it
// within a minute or so; until then the planner takes a table that was
// empty for empty, and a read of many assets' latest records after a
// first import of millions (an alert pass, say) scanned the whole table:
// 11 s instead of 0.6 s for 2,500 assets.
func (l *Loader) Analyze(ctx context.Context, rows int64) error {
	if !l.pg || rows < AnalyzeAfter {
		return nil
	}
	if _, err := l.conn.ExecContext(ctx, "ANALYZE prices"); err != nil {
		return fmt.Errorf("marketdata: bulk import: analyze: %w", err)
	}
	return nil
}

// Rollback ends the open transaction after a failure, and never hands the
// pool a connection in an unknown state: one that cannot roll back is
// discarded at [Loader.Close].
func (l *Loader) Rollback(ctx context.Context) {
	if _, err := l.conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK"); err != nil {
		l.conn.Raw(func(any) error { return driver.ErrBadConn })
	}
}

// Restart rolls the open transaction back and begins the next one: what
// undoes a file written without a savepoint (see [Loader.Savepoint]).
func (l *Loader) Restart(ctx context.Context) error {
	if _, err := l.conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		return fmt.Errorf("marketdata: bulk import: rollback: %w", err)
	}
	return l.Begin(ctx)
}

// Savepoint opens the savepoint of a file, which [Loader.RollbackSavepoint]
// undoes and [Loader.ReleaseSavepoint] keeps. On SQLite, rows written
// under a savepoint go one to a statement (see [Loader.InsertPrices]).
func (l *Loader) Savepoint(ctx context.Context) error {
	if _, err := l.conn.ExecContext(ctx, "SAVEPOINT bulk_file"); err != nil {
		return fmt.Errorf("marketdata: bulk import: %w", err)
	}
	l.savepoint, l.savedQuiet = true, l.quiet
	return nil
}

// RollbackSavepoint undoes what was written since [Loader.Savepoint] and
// closes the savepoint.
func (l *Loader) RollbackSavepoint(ctx context.Context) error {
	if _, err := l.conn.ExecContext(ctx, "ROLLBACK TO SAVEPOINT bulk_file"); err != nil {
		return fmt.Errorf("marketdata: bulk import: %w", err)
	}
	if _, err := l.conn.ExecContext(ctx, "RELEASE SAVEPOINT bulk_file"); err != nil {
		return fmt.Errorf("marketdata: bulk import: %w", err)
	}
	l.savepoint = false
	l.quiet = l.savedQuiet // the rollback undid any SET LOCAL since
	return nil
}

// ReleaseSavepoint keeps what was written since [Loader.Savepoint] and
// closes the savepoint.
func (l *Loader) ReleaseSavepoint(ctx context.Context) error {
	if _, err := l.conn.ExecContext(ctx, "RELEASE SAVEPOINT bulk_file"); err != nil {
		return fmt.Errorf("marketdata: bulk import: %w", err)
	}
	l.savepoint = false
	return nil
}

// CreateAsset stores a new asset from spec as [ImportPrices] does for an
// unknown symbol (name, type, currency and exchange defaulted the same
// way). The errors are those of [Store.SaveAsset], and one wrapping
// [tradekit.ErrInvalid] for an unknown exchange.
func (l *Loader) CreateAsset(ctx context.Context, spec PriceImport) (Asset, error) {
	if err := l.quietTriggers(ctx, false); err != nil {
		return Asset{}, fmt.Errorf("marketdata: bulk import: %w", err)
	}
	return newAsset(ctx, l.Store(), spec)
}

// CheckAssets reports, for each of the stored assets ids, whether it has
// prices, and on PostgreSQL locks them against deletion until the
// transaction ends, FOR KEY SHARE, as the foreign-key check of each price
// row would: that lock is what lets [Loader.CopyPrices] skip the check. An
// id missing from the answer is an asset deleted since the caller read it.
func (l *Loader) CheckAssets(ctx context.Context, ids []uuid.UUID) (map[uuid.UUID]bool, error) {
	q := "SELECT a.id, EXISTS (SELECT 1 FROM prices p WHERE p.asset_id = a.id) AS has FROM assets a WHERE a.id IN (?)"
	if l.pg {
		q += " FOR KEY SHARE OF a"
	}
	var found []struct {
		ID  uuid.UUID `bun:"id"`
		Has bool      `bun:"has"`
	}
	if err := l.conn.NewRaw(q, bun.In(ids)).Scan(ctx, &found); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("marketdata: bulk import: %w", err)
	}
	has := make(map[uuid.UUID]bool, len(found))
	for _, f := range found {
		has[f.ID] = f.Has
	}
	return has, nil
}

// CopyPrices writes rows, in COPY's text format, to prices on PostgreSQL,
// with the foreign-key triggers quiet where the role may (see
// [Loader.Begin]). With fresh (none of the rows' assets had prices before
// and no row repeats an asset and date) they are COPYed straight into
// prices, as a raw load would, and changed is nil: every asset of the
// rows changed. Otherwise they are COPYed into a temporary table and upserted with one
// INSERT … ON CONFLICT, and changed lists the assets whose stored prices
// changed.
//
// refused is the database refusing a straight COPY, which the caller's
// checks should make impossible: the open savepoint's work is lost, not
// the transaction's. err is any other failure of the database, after which
// the transaction must be rolled back.
func (l *Loader) CopyPrices(ctx context.Context, rows []byte, fresh bool) (changed []uuid.UUID, refused, err error) {
	if err := l.quietTriggers(ctx, true); err != nil {
		return nil, nil, fmt.Errorf("marketdata: bulk import: %w", err)
	}
	if fresh {
		if _, err := database.CopyFrom(ctx, l.conn, "COPY prices ("+priceColumns+") FROM STDIN", bytes.NewReader(rows)); err != nil {
			return nil, fmt.Errorf("copy: %w", err), nil
		}
		return nil, nil, nil
	}
	if _, err := database.CopyFrom(ctx, l.conn, "COPY prices_load FROM STDIN", bytes.NewReader(rows)); err != nil {
		return nil, nil, fmt.Errorf("marketdata: bulk import: copy: %w", err)
	}
	err = l.conn.NewRaw(`WITH ins AS (INSERT INTO prices (`+priceColumns+`) SELECT `+priceColumns+
		` FROM prices_load`+priceUpsert+` RETURNING asset_id) SELECT DISTINCT asset_id FROM ins`).Scan(ctx, &changed)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, nil, fmt.Errorf("marketdata: bulk import: %w", err)
	}
	if _, err := l.conn.ExecContext(ctx, "TRUNCATE prices_load"); err != nil {
		return nil, nil, fmt.Errorf("marketdata: bulk import: %w", err)
	}
	return changed, nil, nil
}
