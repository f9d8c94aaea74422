package marketdata

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/database"
)

// ImportPricesBulk imports the daily prices of many assets from path, in
// one run: a CSV file with a symbol (or ticker) column, a directory of
// such files or of per-symbol SYMBOL.csv files (walked recursively, see
// [BulkFiles]), any of them gzip-compressed (.csv.gz), or Polygon-style
// day flat files (ticker, volume, open, close, high, low, window_start,
// …), recognised by their window_start column. Columns are matched by
// name as in [ReadPricesCSV]; unknown symbols get a new asset from
// opt.NewAssets, as [ImportPrices] does; dates already stored are updated.
//
// The method: files are read and cut into chunks of whole lines, which
// opt.Workers goroutines parse and check ([Price.Validate]) into the
// database's load format, while one goroutine writes them on one
// connection, file after file, in transactions of about opt.CommitRows
// rows. An asset is fresh in a file when it had no prices before the run
// and the file is the first with rows for it: none of its rows there can
// conflict (a date repeated within a file is refused first).
//
// On PostgreSQL the load format is COPY's binary one (no text for the
// server to parse), and a chunk whose assets are all fresh is COPYed
// straight into prices, as a raw load would be; other chunks are COPYed
// into a temporary table and upserted with one INSERT … ON CONFLICT. Where
// the role may (a superuser, or one granted SET on the parameter), the
// writes to prices run with session_replication_role = replica (SET LOCAL),
// which keeps the foreign-key triggers of prices from checking every row
// against assets, the costliest part of a COPY: the writer creates each
// new asset before its rows (with the triggers on) and locks the stored
// ones FOR KEY SHARE, once per transaction, as those triggers would
// (prices has no other trigger).
//
// On SQLite the rows go through a few prepared statements, each compiled
// once per run and then only bound and stepped: a plain INSERT of eight
// rows (or one, under a savepoint) for fresh assets, and the same with
// ON CONFLICT … DO UPDATE for the others. A statement never holds two assets' rows, so its
// count of changed rows tells which assets changed.
//
// Each file is written inside a savepoint, so a bad row (or a date
// repeated for a symbol within a file) rolls its file back whole and the
// run goes on with the next file; the file and line are in the result's
// Failed list. The price versions of the assets whose prices changed go up
// once per transaction (see [Store.SavePrices]).
//
// ImportPricesBulk returns an error wrapping [tradekit.ErrInvalid] when
// some files failed (the result still counts what was imported), and any
// database error as it is, after which the current transaction is rolled
// back.
func ImportPricesBulk(ctx context.Context, db *bun.DB, path string, opt BulkOptions) (BulkResult, error) {
	var res BulkResult
	files, err := bulkFiles(path)
	if err != nil {
		return res, err
	}
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	if opt.CommitRows <= 0 {
		opt.CommitRows = 2_000_000
	}
	w := &bulkWriter{opt: opt, pg: db.Dialect().Name() == dialect.PG, assets: map[string]*bulkAsset{},
		changed: map[uuid.UUID]bool{}, seen: map[uuid.UUID]bool{}, runDays: map[uuid.UUID]*daySet{}}
	var known []struct {
		Symbol string    `bun:"symbol"`
		ID     uuid.UUID `bun:"id"`
	}
	if err := db.NewRaw("SELECT symbol, id FROM assets").Scan(ctx, &known); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return res, fmt.Errorf("marketdata: bulk import: %w", err)
	}
	parser := &bulkParser{pg: w.pg, known: make(map[string]uuid.UUID, len(known))}
	for _, k := range known {
		parser.known[k.Symbol] = k.ID
		w.assets[k.Symbol] = &bulkAsset{id: k.ID, exists: true}
	}

	conn, err := db.Conn(ctx)
	if err != nil {
		return res, fmt.Errorf("marketdata: bulk import: %w", err)
	}
	defer conn.Close()
	w.conn = conn
	defer w.closeStmts()
	if !w.pg {
		// On this connection only, for the run: a page cache large enough
		// that the transaction does not spill to disk page by page, and no
		// foreign-key lookup per row (the writer stores every asset before
		// its rows, so the references hold). Both are restored at the end.
		for _, q := range []string{"PRAGMA cache_size = -262144", "PRAGMA foreign_keys = OFF"} {
			if _, err := conn.ExecContext(ctx, q); err != nil {
				return res, fmt.Errorf("marketdata: bulk import: %w", err)
			}
		}
		defer func() {
			for _, q := range []string{"PRAGMA cache_size = -2000", "PRAGMA foreign_keys = ON"} {
				if _, err := conn.ExecContext(context.WithoutCancel(ctx), q); err != nil {
					conn.Raw(func(any) error { return driver.ErrBadConn })
				}
			}
		}()
	}

	// The pipeline: a dispatcher starts one reader per file, at most
	// opt.Workers at a time, in file order; readers cut their file into
	// chunks that the parse workers turn into batches; the writer (this
	// goroutine) takes the files in order and each file's batches in order.
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	jobs := make(chan func())
	for range opt.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case job := <-jobs:
					job()
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	var read atomic.Int64
	var total int64
	for _, f := range files {
		total += f.size
	}
	queues := make(chan chan chan *bulkBatch, opt.Workers)
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(queues)
		sem := make(chan struct{}, opt.Workers)
		for _, f := range files {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			q := make(chan chan *bulkBatch, 4)
			select {
			case queues <- q:
			case <-ctx.Done():
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				readFile(ctx, f, parser, jobs, q, &read)
			}()
		}
	}()

	progress := func(done int) {
		if opt.Progress != nil {
			opt.Progress(BulkProgress{Files: len(files), FilesDone: done, Rows: w.rows + w.fileRows,
				Bytes: read.Load(), TotalBytes: total})
		}
	}
	if err := w.begin(ctx); err != nil {
		return res, err
	}
	done := false
	defer func() {
		if !done {
			w.rollback(ctx)
		}
	}()
	for i, f := range files {
		var q chan chan *bulkBatch
		select {
		case q = <-queues:
		case <-ctx.Done():
			return res, ctx.Err()
		}
		ferr, err := w.writeFile(ctx, f, q, func() { progress(i) })
		if err != nil {
			return res, err
		}
		if ferr != nil {
			f.stop.Store(true)
			for range q { // let the reader finish
			}
			res.Failed = append(res.Failed, &FileError{File: f.path, Err: ferr})
		} else {
			res.Files++
			if f.layout != nil && f.layout.volume < 0 {
				res.NoVolumeFiles++
			}
		}
		if w.rows-w.committedRows >= int64(opt.CommitRows) {
			if err := w.commit(ctx); err != nil {
				return res, err
			}
			if err := w.begin(ctx); err != nil {
				return res, err
			}
		}
		progress(i + 1)
	}
	if err := w.commit(ctx); err != nil {
		return res, err
	}
	done = true
	res.Rows, res.Assets, res.Created, res.Changed = w.rows, len(w.seen), w.created, w.changedTotal
	res.From, res.To = w.from, w.to
	if res.NonTradingRows, res.NonTradingDays, err = nonTradingDays(ctx, NewStore(w.conn), w.runDays); err != nil {
		return res, err
	}
	if len(res.Failed) > 0 {
		return res, fmt.Errorf("marketdata: %d of %d files not imported, first %w", len(res.Failed), len(files), res.Failed[0])
	}
	return res, nil
}

// maxNonTradingDays is how many rows dated on non-trading days a
// [BulkResult] lists, the earliest.
const maxNonTradingDays = 10

// nonTradingDays returns the number of the days of days (asset id to the
// days written for it) on which the asset's exchange does not trade by its
// calendar, and the earliest [maxNonTradingDays] of them. Assets without
// an exchange calendar count none.
func nonTradingDays(ctx context.Context, st *Store, days map[uuid.UUID]*daySet) (int, []NonTradingDay, error) {
	if len(days) == 0 {
		return 0, nil, nil
	}
	var assets []struct {
		ID         uuid.UUID `bun:"id"`
		Symbol     string    `bun:"symbol"`
		ExchangeID uuid.UUID `bun:"exchange_id"`
	}
	if err := st.db.NewRaw("SELECT id, symbol, exchange_id FROM assets").Scan(ctx, &assets); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, nil, fmt.Errorf("marketdata: bulk import: %w", err)
	}
	type exchangeDays struct {
		ex      Exchange
		cal     *calendar.Calendar
		ok      bool
		trading map[int32]bool // by rowKey.day, as far as asked
	}
	exchanges := map[uuid.UUID]*exchangeDays{}
	n := 0
	var out []NonTradingDay
	for _, a := range assets {
		ds := days[a.ID]
		if ds == nil {
			continue
		}
		x := exchanges[a.ExchangeID]
		if x == nil {
			x = &exchangeDays{trading: map[int32]bool{}}
			ex, err := st.Exchange(ctx, a.ExchangeID)
			if err != nil && !errors.Is(err, tradekit.ErrNotFound) {
				return 0, nil, err
			}
			x.ex = ex
			x.cal, x.ok = ex.Calendar()
			exchanges[a.ExchangeID] = x
		}
		if !x.ok {
			continue
		}
		listed := 0
		ds.each(func(day int32) {
			trading, ok := x.trading[day]
			if !ok {
				trading = x.cal.IsTradingDay(dayEpoch.AddDays(int(day)))
				x.trading[day] = trading
			}
			if trading {
				return
			}
			n++
			if listed < maxNonTradingDays { // days come in order: the asset's earliest
				out = append(out, NonTradingDay{Symbol: a.Symbol, Exchange: x.ex, Date: dayEpoch.AddDays(int(day))})
				listed++
			}
		})
	}
	slices.SortFunc(out, func(a, b NonTradingDay) int {
		if c := a.Date.Compare(b.Date); c != 0 {
			return c
		}
		return strings.Compare(a.Symbol, b.Symbol)
	})
	return n, out[:min(len(out), maxNonTradingDays)], nil
}

// bulkAsset is what the writer knows of a symbol's asset.
type bulkAsset struct {
	id uuid.UUID
	// exists is false until the asset is stored.
	exists bool
	// days are the days the current file has for the asset.
	days *daySet
	// file is the index of the file days belong to.
	file int
	// fresh is the file (w.file) whose rows may be copied straight into
	// prices (PostgreSQL): the asset had no prices before the run and
	// this is the first file with rows for it, so none of them can
	// conflict (repeats within the file are refused by days). 0: none.
	fresh int
	// checked tells whether a stored asset was checked for prices.
	checked bool
	// locked is the transaction (bulkWriter.tx) in which the asset is
	// locked against deletion (PostgreSQL): created in it, or locked by
	// checkAssets. 0: none.
	locked int
}

// bulkWriter writes the batches of a bulk import on one connection.
type bulkWriter struct {
	opt  BulkOptions
	pg   bool
	conn bun.Conn
	// SQLite: the statements that write rows, by [rows > 1][upsert],
	// prepared when first used, and their arguments.
	stmts [4]*sqliteStmt
	args  []driver.NamedValue

	assets map[string]*bulkAsset
	// changed holds the assets whose prices changed in the open
	// transaction; seen every asset imported for.
	changed, seen map[uuid.UUID]bool
	created       []string
	changedTotal  int
	file          int
	// tx counts the transactions begun; fileLocked are the assets that
	// checkAssets locked in the current file, whose locks a rollback of
	// the file releases.
	tx         int
	fileLocked []*bulkAsset
	// fileAssets are the assets of the current file, whose days a written
	// file adds to runDays, the days of each asset the run wrote.
	fileAssets []*bulkAsset
	runDays    map[uuid.UUID]*daySet
	// txFiles counts the files written in the open transaction.
	txFiles int
	// triggersOn is set when the role may not turn the foreign-key
	// triggers off; quiet tells whether they are off in the open
	// transaction (see quietTriggers).
	triggersOn, quiet bool
	// rows are the rows of the files written; fileRows of the current one.
	rows, fileRows, committedRows int64
	from, to                      calendar.Date
}

// begin begins a transaction. On PostgreSQL it also finds, in the run's
// first transaction, whether the role may set session_replication_role
// (a superuser may, or a role granted SET on the parameter): see
// quietTriggers.
func (w *bulkWriter) begin(ctx context.Context) error {
	w.tx++
	w.txFiles = 0
	w.quiet = false
	if _, err := w.conn.ExecContext(ctx, "BEGIN"); err != nil {
		return fmt.Errorf("marketdata: bulk import: begin: %w", err)
	}
	if !w.pg {
		return nil
	}
	if !w.triggersOn && w.tx == 1 {
		if _, err := w.conn.ExecContext(ctx, "SAVEPOINT bulk_role"); err != nil {
			return fmt.Errorf("marketdata: bulk import: %w", err)
		}
		if err := w.quietTriggers(ctx, true); err != nil {
			w.triggersOn = true
			if _, err := w.conn.ExecContext(ctx, "ROLLBACK TO SAVEPOINT bulk_role"); err != nil {
				return fmt.Errorf("marketdata: bulk import: %w", err)
			}
		}
		if _, err := w.conn.ExecContext(ctx, "RELEASE SAVEPOINT bulk_role"); err != nil {
			return fmt.Errorf("marketdata: bulk import: %w", err)
		}
	}
	_, err := w.conn.ExecContext(ctx, `CREATE TEMP TABLE IF NOT EXISTS prices_load (
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
// than the rest of the row's COPY; the writer makes the check redundant,
// since it creates every new asset before its rows and locks the stored
// ones as the triggers would (checkAssets). prices has no other trigger.
// When the role may not set the parameter (triggersOn), quietTriggers does
// nothing and the triggers run as usual.
func (w *bulkWriter) quietTriggers(ctx context.Context, quiet bool) error {
	if w.triggersOn || w.quiet == quiet {
		return nil
	}
	role := "origin"
	if quiet {
		role = "replica"
	}
	if _, err := w.conn.ExecContext(ctx, "SET LOCAL session_replication_role = "+role); err != nil {
		return err
	}
	w.quiet = quiet
	return nil
}

// commit raises the price versions of the assets that changed and
// commits.
func (w *bulkWriter) commit(ctx context.Context) error {
	if len(w.changed) > 0 {
		ids := make([]uuid.UUID, 0, len(w.changed))
		for id := range w.changed {
			ids = append(ids, id)
		}
		ps := make([]Price, len(ids))
		for i, id := range ids {
			ps[i].AssetID = id
		}
		if err := NewStore(w.conn).bumpPriceVersions(ctx, ps); err != nil {
			return err
		}
		w.changedTotal += len(ids)
		clear(w.changed)
	}
	if _, err := w.conn.ExecContext(ctx, "COMMIT"); err != nil {
		return fmt.Errorf("marketdata: bulk import: commit: %w", err)
	}
	w.committedRows = w.rows
	return nil
}

// rollback ends the open transaction after a failure, and never hands the
// pool a connection in an unknown state.
func (w *bulkWriter) rollback(ctx context.Context) {
	if _, err := w.conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK"); err != nil {
		w.conn.Raw(func(any) error { return driver.ErrBadConn })
	}
}

// writeFile writes the batches of f from q inside a savepoint. A bad file
// is rolled back to the savepoint and reported as ferr; err is a failure
// of the database, which ends the run.
func (w *bulkWriter) writeFile(ctx context.Context, f *bulkFile, q <-chan chan *bulkBatch, progress func()) (ferr, err error) {
	w.file++
	w.fileRows = 0
	w.fileLocked = w.fileLocked[:0]
	w.fileAssets = w.fileAssets[:0]
	// On SQLite a file that opens its transaction goes without a
	// savepoint: if it fails, the transaction, which holds nothing else,
	// is rolled back. Under a savepoint, SQLite writes each page that a
	// statement changes to its sub-journal file first.
	savepoint := w.pg || w.txFiles > 0
	quiet := w.quiet // a rollback to the savepoint undoes a SET LOCAL since
	if savepoint {
		if _, err := w.conn.ExecContext(ctx, "SAVEPOINT bulk_file"); err != nil {
			return nil, fmt.Errorf("marketdata: bulk import: %w", err)
		}
	}
	var created []string
	changed := map[uuid.UUID]bool{}
	seen := map[uuid.UUID]bool{}
	from, to := calendar.Date{}, calendar.Date{}
	for c := range q {
		var b *bulkBatch
		select {
		case b = <-c:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if b.err == nil {
			ferr, err = w.writeBatch(ctx, b, &created, changed, seen)
		} else {
			ferr = b.err
		}
		if err != nil {
			return nil, err
		}
		if ferr != nil {
			break
		}
		if w.fileRows == 0 || b.from.Before(from) {
			from = b.from
		}
		if b.to.After(to) {
			to = b.to
		}
		w.fileRows += int64(b.rows)
		progress()
	}
	if ferr == nil && w.fileRows == 0 {
		ferr = &ParseError{Msg: "no rows after the header row"}
	}
	if ferr != nil {
		if savepoint {
			if _, err := w.conn.ExecContext(ctx, "ROLLBACK TO SAVEPOINT bulk_file"); err != nil {
				return nil, fmt.Errorf("marketdata: bulk import: %w", err)
			}
			if _, err := w.conn.ExecContext(ctx, "RELEASE SAVEPOINT bulk_file"); err != nil {
				return nil, fmt.Errorf("marketdata: bulk import: %w", err)
			}
			w.quiet = quiet
		} else {
			if _, err := w.conn.ExecContext(ctx, "ROLLBACK"); err != nil {
				return nil, fmt.Errorf("marketdata: bulk import: rollback: %w", err)
			}
			if err := w.begin(ctx); err != nil {
				return nil, err
			}
		}
		for _, s := range created {
			w.assets[s].exists = false
		}
		for _, a := range w.fileLocked {
			a.locked = 0 // the rollback released the lock
		}
		w.fileRows = 0
		return ferr, nil
	}
	if savepoint {
		if _, err := w.conn.ExecContext(ctx, "RELEASE SAVEPOINT bulk_file"); err != nil {
			return nil, fmt.Errorf("marketdata: bulk import: %w", err)
		}
	}
	w.txFiles++
	for _, a := range w.fileAssets {
		d := w.runDays[a.id]
		if d == nil {
			d = &daySet{}
			w.runDays[a.id] = d
		}
		d.union(a.days)
	}
	for id := range changed {
		w.changed[id] = true
	}
	for id := range seen {
		w.seen[id] = true
	}
	w.created = append(w.created, created...)
	if w.rows == 0 || from.Before(w.from) {
		w.from = from
	}
	if to.After(w.to) {
		w.to = to
	}
	w.rows += w.fileRows
	w.fileRows = 0
	return nil, nil
}

// writeBatch creates the batch's new assets, checks that no asset and date
// repeats within the file, and writes the rows.
func (w *bulkWriter) writeBatch(ctx context.Context, b *bulkBatch, created *[]string, changed, seen map[uuid.UUID]bool) (ferr, err error) {
	st := NewStore(w.conn)
	assets := make([]*bulkAsset, len(b.symbols))
	var check []*bulkAsset
	for i, sym := range b.symbols {
		a := w.assets[sym]
		if a == nil {
			a = &bulkAsset{id: b.ids[i]}
			w.assets[sym] = a
		}
		if !a.exists {
			if err := w.quietTriggers(ctx, false); err != nil {
				return nil, fmt.Errorf("marketdata: bulk import: %w", err)
			}
			spec := w.opt.NewAssets
			spec.Symbol, spec.Name = sym, ""
			na, err := newAsset(ctx, st, spec)
			if err != nil {
				if errors.Is(err, tradekit.ErrInvalid) || errors.Is(err, tradekit.ErrConflict) {
					return fmt.Errorf("%s: %s", sym, trimPrefix(err)), nil
				}
				return nil, err
			}
			if na.ID != a.id {
				return fmt.Errorf("%s: the asset was created with id %s meanwhile", sym, na.ID), nil
			}
			a.exists, a.checked, a.fresh, a.locked = true, true, w.file, w.tx
			*created = append(*created, sym)
		}
		if !a.checked || (w.pg && a.locked != w.tx) {
			check = append(check, a)
		}
		if a.file != w.file {
			a.file, a.days = w.file, &daySet{}
			w.fileAssets = append(w.fileAssets, a)
		}
		assets[i] = a
		seen[a.id] = true
	}
	if len(check) > 0 {
		if ferr, err := w.checkAssets(ctx, check); ferr != nil || err != nil {
			return ferr, err
		}
	}
	for _, k := range b.keys {
		if !assets[k.sym].days.add(k.day) {
			return &ParseError{Line: int(k.line), Msg: fmt.Sprintf("%s %s repeats an earlier row of the file",
				b.symbols[k.sym], dayEpoch.AddDays(int(k.day)))}, nil
		}
	}
	if w.pg {
		if err := w.quietTriggers(ctx, true); err != nil {
			return nil, fmt.Errorf("marketdata: bulk import: %w", err)
		}
	}
	if w.pg && allFresh(assets, w.file) {
		// Nothing to update: COPY straight into prices, as a raw load
		// would. A refusal (which the checks above should make
		// impossible) fails the file, not the run: its savepoint is
		// rolled back.
		if _, err := database.CopyFrom(ctx, w.conn, "COPY prices ("+priceColumns+") FROM STDIN", bytes.NewReader(b.data)); err != nil {
			return fmt.Errorf("copy: %w", err), nil
		}
		for _, a := range assets {
			changed[a.id] = true
		}
		return nil, nil
	}
	if w.pg {
		if _, err := database.CopyFrom(ctx, w.conn, "COPY prices_load FROM STDIN", bytes.NewReader(b.data)); err != nil {
			return nil, fmt.Errorf("marketdata: bulk import: copy: %w", err)
		}
		var ids []uuid.UUID
		err := w.conn.NewRaw(`WITH ins AS (INSERT INTO prices (`+priceColumns+`) SELECT `+priceColumns+
			` FROM prices_load`+priceUpsert+` RETURNING asset_id) SELECT DISTINCT asset_id FROM ins`).Scan(ctx, &ids)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("marketdata: bulk import: %w", err)
		}
		for _, id := range ids {
			changed[id] = true
		}
		if _, err := w.conn.ExecContext(ctx, "TRUNCATE prices_load"); err != nil {
			return nil, fmt.Errorf("marketdata: bulk import: %w", err)
		}
		return nil, nil
	}
	return w.writeSQLite(ctx, b, assets, changed)
}

// sqliteStmt is a statement that writes price rows, prepared once on the
// driver connection under the bulk connection and used only inside
// [bun.Conn.Raw]: each row then costs binding its values and a step of
// the compiled statement, where statements of literal rows cost SQLite a
// parse and a compilation per row.
type sqliteStmt struct {
	stmt driver.Stmt
	exec driver.StmtExecContext
}

// sqliteStmtRows is the number of rows a multi-row sqliteStmt writes:
// more rows per statement save per-statement work, but the driver finds
// each parameter's value by a linear search of them all.
const sqliteStmtRows = 8

// sqliteStmtSQL returns the statement that writes rows price rows: a plain
// INSERT, or with upsert the INSERT … ON CONFLICT of every price write.
func sqliteStmtSQL(rows int, upsert bool) string {
	const row = "(?, ?, ?, ?, ?, ?, ?)"
	q := "INSERT INTO prices (" + priceColumns + ") VALUES " + strings.Repeat(row+", ", rows-1) + row
	if upsert {
		q += priceUpsert
	}
	return q
}

// writeSQLite writes the rows of b, marking in changed the assets whose
// stored prices changed. The rows of assets fresh in the current file (no
// prices before the run, so nothing to conflict with) are INSERTed; the
// others are upserted. A statement never mixes two assets, so that its
// count of changed rows tells whether its asset changed.
//
// Statements write sqliteStmtRows rows, but one inside a file's savepoint
// (a file that does not open its transaction): SQLite journals the pages
// a multi-row statement changes so that it can undo the statement alone,
// and while a savepoint is open that journal is the sub-journal file,
// which grows by a page or so per statement for the whole file; a
// one-row INSERT needs no such journal.
func (w *bulkWriter) writeSQLite(ctx context.Context, b *bulkBatch, assets []*bulkAsset, changed map[uuid.UUID]bool) (ferr, err error) {
	ids := make([]any, len(b.ids)) // boxed once, not once per row
	for i, id := range b.ids {
		ids[i] = id.String()
	}
	hit := make([]bool, len(assets))
	// The statements run without ctx's Done channel, which the driver
	// would watch with a goroutine per statement; ctx is checked between
	// assets instead.
	stmtCtx := context.WithoutCancel(ctx)
	var stmtErr error
	err = w.conn.Raw(func(dc any) error {
		if len(w.args) == 0 {
			w.args = make([]driver.NamedValue, 7*sqliteStmtRows)
			for i := range w.args {
				w.args[i].Ordinal = i + 1
			}
		}
		data, start := b.data, uint32(0)
		for r := 0; r < b.rows; {
			if err := ctx.Err(); err != nil {
				return err
			}
			sym := b.keys[r].sym
			end := r + 1
			for end < b.rows && b.keys[end].sym == sym {
				end++
			}
			fresh := assets[sym].fresh == w.file
			for r < end {
				n := sqliteStmtRows
				if end-r < n || w.txFiles > 0 { // w.txFiles > 0: under a savepoint
					n = 1
				}
				st, err := w.sqliteStmt(ctx, dc, n, !fresh)
				if err != nil {
					return err
				}
				args := w.args[:7*n]
				for i := range n {
					row := args[7*i : 7*i+7]
					row[0].Value = ids[sym]
					for j, e := range b.ends[(r+i)*5 : (r+i)*5+5] {
						row[j+1].Value = unsafe.String(&data[start], e-start)
						start = e
					}
					row[6].Value = b.vols[r+i]
				}
				res, err := st.exec.ExecContext(stmtCtx, args)
				if err != nil {
					if fresh {
						// Nothing should conflict; if something does,
						// the file fails, not the run.
						stmtErr = err
					}
					return err
				}
				if k, err := res.RowsAffected(); err != nil || k > 0 {
					hit[sym] = true
				}
				r += n
			}
		}
		return nil
	})
	if stmtErr != nil {
		return fmt.Errorf("insert: %w", stmtErr), nil
	}
	if err != nil {
		return nil, fmt.Errorf("marketdata: bulk import: %w", err)
	}
	for i, a := range assets {
		if hit[i] {
			changed[a.id] = true
		}
	}
	return nil, nil
}

// sqliteStmt returns the statement that writes rows rows (1 or
// sqliteStmtRows), with upsert or not, preparing it on the driver
// connection dc the first time.
func (w *bulkWriter) sqliteStmt(ctx context.Context, dc any, rows int, upsert bool) (*sqliteStmt, error) {
	i := 0
	if rows > 1 {
		i = 2
	}
	if upsert {
		i++
	}
	if w.stmts[i] != nil {
		return w.stmts[i], nil
	}
	pc, ok := dc.(driver.ConnPrepareContext)
	if !ok {
		return nil, fmt.Errorf("the SQLite driver (%T) cannot prepare statements", dc)
	}
	st, err := pc.PrepareContext(ctx, sqliteStmtSQL(rows, upsert))
	if err != nil {
		return nil, err
	}
	exec, ok := st.(driver.StmtExecContext)
	if !ok {
		st.Close()
		return nil, fmt.Errorf("the SQLite driver's statement (%T) cannot run with a context", st)
	}
	w.stmts[i] = &sqliteStmt{stmt: st, exec: exec}
	return w.stmts[i], nil
}

// closeStmts closes the prepared SQLite statements.
func (w *bulkWriter) closeStmts() {
	w.conn.Raw(func(any) error {
		for i, st := range w.stmts {
			if st != nil {
				st.stmt.Close()
				w.stmts[i] = nil
			}
		}
		return nil
	})
}

// checkAssets reads whether the stored assets as have prices (the first
// time the run meets each: an asset without prices is fresh for the
// current file), and on PostgreSQL locks them against deletion until the
// transaction ends, FOR KEY SHARE, as the foreign-key check of each row
// would. That lock is what lets the rows skip that check (see
// [bulkWriter.begin]). ferr names an asset deleted since the run began.
func (w *bulkWriter) checkAssets(ctx context.Context, as []*bulkAsset) (ferr, err error) {
	ids := make([]uuid.UUID, len(as))
	for i, a := range as {
		ids[i] = a.id
	}
	q := "SELECT a.id, EXISTS (SELECT 1 FROM prices p WHERE p.asset_id = a.id) AS has FROM assets a WHERE a.id IN (?)"
	if w.pg {
		q += " FOR KEY SHARE OF a"
	}
	var found []struct {
		ID  uuid.UUID `bun:"id"`
		Has bool      `bun:"has"`
	}
	if err := w.conn.NewRaw(q, bun.In(ids)).Scan(ctx, &found); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("marketdata: bulk import: %w", err)
	}
	has := make(map[uuid.UUID]bool, len(found))
	for _, f := range found {
		has[f.ID] = f.Has
	}
	for _, a := range as {
		h, ok := has[a.id]
		if !ok {
			return fmt.Errorf("asset %s was deleted during the import", a.id), nil
		}
		if !a.checked {
			a.checked = true
			if !h {
				a.fresh = w.file
			}
		}
		if w.pg && a.locked != w.tx {
			a.locked = w.tx
			w.fileLocked = append(w.fileLocked, a)
		}
	}
	return nil, nil
}

// allFresh reports whether every asset of a batch of file may have its
// rows copied straight into prices (see bulkAsset.fresh).
func allFresh(assets []*bulkAsset, file int) bool {
	for _, a := range assets {
		if a.fresh != file {
			return false
		}
	}
	return true
}
