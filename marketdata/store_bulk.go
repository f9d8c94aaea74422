package marketdata

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/calendar"
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
// connection, file after file: on PostgreSQL, with COPY straight into
// prices for a chunk whose assets had no prices before the run (in the
// first file that has rows for them, so no row can conflict), and
// otherwise with COPY into a temporary table and one INSERT … ON CONFLICT
// per chunk; and with one prepared
// INSERT … SELECT FROM json_each(?) per chunk on SQLite, in transactions
// of opt.CommitRows rows. Each file is written inside a savepoint, so a
// bad row (or a date repeated for a symbol within a file) rolls its file
// back whole and the run goes on with the next file; the file and line are
// in the result's Failed list. The price versions of the assets whose
// prices changed go up once per transaction (see [Store.SavePrices]).
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
		changed: map[uuid.UUID]bool{}, seen: map[uuid.UUID]bool{}}
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
	if len(res.Failed) > 0 {
		return res, fmt.Errorf("marketdata: %d of %d files not imported, first %w", len(res.Failed), len(files), res.Failed[0])
	}
	return res, nil
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
}

// bulkWriter writes the batches of a bulk import on one connection.
type bulkWriter struct {
	opt  BulkOptions
	pg   bool
	conn bun.Conn
	stmt *sql.Stmt // SQLite: the prepared INSERT

	assets map[string]*bulkAsset
	// changed holds the assets whose prices changed in the open
	// transaction; seen every asset imported for.
	changed, seen map[uuid.UUID]bool
	created       []string
	changedTotal  int
	file          int
	// rows are the rows of the files written; fileRows of the current one.
	rows, fileRows, committedRows int64
	from, to                      calendar.Date
}

func (w *bulkWriter) begin(ctx context.Context) error {
	if _, err := w.conn.ExecContext(ctx, "BEGIN"); err != nil {
		return fmt.Errorf("marketdata: bulk import: begin: %w", err)
	}
	if w.pg {
		_, err := w.conn.ExecContext(ctx, `CREATE TEMP TABLE IF NOT EXISTS prices_load (
			asset_id UUID, date DATE, open NUMERIC, high NUMERIC, low NUMERIC, close NUMERIC, volume BIGINT)`)
		if err != nil {
			return fmt.Errorf("marketdata: bulk import: %w", err)
		}
		return nil
	}
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
	if w.stmt != nil {
		w.stmt.Close()
		w.stmt = nil
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
	if w.stmt != nil {
		w.stmt.Close()
	}
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
	if _, err := w.conn.ExecContext(ctx, "SAVEPOINT bulk_file"); err != nil {
		return nil, fmt.Errorf("marketdata: bulk import: %w", err)
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
		if _, err := w.conn.ExecContext(ctx, "ROLLBACK TO SAVEPOINT bulk_file"); err != nil {
			return nil, fmt.Errorf("marketdata: bulk import: %w", err)
		}
		if _, err := w.conn.ExecContext(ctx, "RELEASE SAVEPOINT bulk_file"); err != nil {
			return nil, fmt.Errorf("marketdata: bulk import: %w", err)
		}
		for _, s := range created {
			w.assets[s].exists = false
		}
		w.fileRows = 0
		return ferr, nil
	}
	if _, err := w.conn.ExecContext(ctx, "RELEASE SAVEPOINT bulk_file"); err != nil {
		return nil, fmt.Errorf("marketdata: bulk import: %w", err)
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
	for i, sym := range b.symbols {
		a := w.assets[sym]
		if a == nil {
			a = &bulkAsset{id: b.ids[i]}
			w.assets[sym] = a
		}
		if !a.exists {
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
			a.exists, a.checked, a.fresh = true, true, w.file
			*created = append(*created, sym)
		}
		if w.pg && !a.checked {
			// A stored asset is fresh if it has no prices yet.
			a.checked = true
			has, err := w.conn.NewSelect().Table("prices").Where("asset_id = ?", a.id).Exists(ctx)
			if err != nil {
				return nil, fmt.Errorf("marketdata: bulk import: %w", err)
			}
			if !has {
				a.fresh = w.file
			}
		}
		if a.file != w.file {
			a.file, a.days = w.file, &daySet{}
		}
		assets[i] = a
		seen[a.id] = true
	}
	for _, k := range b.keys {
		if !assets[k.sym].days.add(k.day) {
			return &ParseError{Line: int(k.line), Msg: fmt.Sprintf("%s %s repeats an earlier row of the file",
				b.symbols[k.sym], dayEpoch.AddDays(int(k.day)))}, nil
		}
	}
	if w.pg && allFresh(assets, w.file) {
		// Nothing to update: COPY straight into prices, as a raw load
		// would. A refusal (which the checks above should make
		// impossible) fails the file, not the run: its savepoint is
		// rolled back.
		if _, err := pgdriver.CopyFrom(ctx, w.conn, bytes.NewReader(b.data), "COPY prices ("+priceColumns+") FROM STDIN"); err != nil {
			return fmt.Errorf("copy: %w", err), nil
		}
		for _, a := range assets {
			changed[a.id] = true
		}
		return nil, nil
	}
	if w.pg {
		if _, err := pgdriver.CopyFrom(ctx, w.conn, bytes.NewReader(b.data), "COPY prices_load FROM STDIN"); err != nil {
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
	var n int64
	start := 0
	for _, end := range b.stmts {
		r, err := w.conn.ExecContext(ctx, unsafe.String(&b.data[start], end-start))
		if err != nil {
			return nil, fmt.Errorf("marketdata: bulk import: %w", err)
		}
		if k, err := r.RowsAffected(); err != nil || k > 0 {
			n++
		}
		start = end
	}
	if n > 0 {
		for _, a := range assets {
			changed[a.id] = true
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
