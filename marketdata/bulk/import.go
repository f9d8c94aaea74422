package bulk

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/marketdata"
)

// Options configures [Import]. The zero value gives the
// defaults.
type Options struct {
	// Workers is the number of goroutines that read, decompress and parse
	// the files. Default: runtime.GOMAXPROCS(0).
	Workers int
	// NewAssets gives the Type, Currency and Exchange of the assets the
	// import creates for unknown symbols (see [marketdata.PriceImport]; its Symbol and
	// Name are ignored: a new asset is named after its symbol).
	NewAssets marketdata.PriceImport
	// Progress, when set, is called by the writing goroutine after each
	// batch it writes. It must return quickly.
	Progress func(Progress)
	// CommitRows is the number of rows after which the import commits, at
	// the end of a file. Default 2,000,000. Whatever the value, a file is
	// imported whole or not at all: it is written inside a savepoint, or
	// (SQLite) opens its transaction, which is rolled back if it fails.
	CommitRows int
}

// Progress tells how far an [Import] run has come.
type Progress struct {
	// Files is the number of input files; FilesDone of them are finished
	// (imported or failed).
	Files, FilesDone int
	// Rows is the number of rows written so far.
	Rows int64
	// Bytes of TotalBytes input bytes are read (on disk: compressed bytes
	// for a .gz file).
	Bytes, TotalBytes int64
}

// Result summarises an [Import] run.
type Result struct {
	// Files is the number of files imported.
	Files int
	// Rows is the number of rows imported (inserted, updated or found
	// unchanged).
	Rows int64
	// Assets is the number of assets that rows were imported for.
	Assets int
	// Created lists the symbols of the assets the import created, in the
	// order it created them.
	Created []string
	// Changed is the number of assets whose stored prices changed (their
	// price version went up).
	Changed int
	// From and To are the first and last dates imported.
	From, To calendar.Date
	// Failed lists the files not imported, in input order, each with the
	// reason (for a bad row, a *[marketdata.ParseError] naming its line).
	Failed []*FileError
	// NonTradingRows is the number of rows imported that are dated on a
	// day their asset's exchange holds no session by its calendar
	// (weekends and holidays, as [marketdata.ImportResult.NonTradingDays]), and
	// NonTradingDays the earliest of them, at most 10, in date order.
	// They are stored all the same; such dates are often a sign of a
	// wrong exchange or date column.
	NonTradingRows int
	NonTradingDays []NonTradingDay
	// NoVolumeFiles is the number of files imported that have no volume
	// column (FX and crypto files often have none): their rows' volume is
	// 0.
	NoVolumeFiles int
}

// NonTradingDay is a row of a bulk import dated on a day its asset's
// exchange does not trade.
type NonTradingDay struct {
	// Symbol is the asset's symbol.
	Symbol string
	// Exchange is the asset's exchange, whose calendar tells why.
	Exchange marketdata.Exchange
	// Date is the row's date.
	Date calendar.Date
}

// FileError is the failure of one input file of [Import]: none
// of its rows is imported.
type FileError struct {
	// File is the path of the file.
	File string
	// Err is the reason, often a *[marketdata.ParseError] naming the line.
	Err error
}

// Error implements error: "data/ACME.csv: line 7: high 10.5 is below open 11 or close 11".
func (e *FileError) Error() string { return e.File + ": " + e.Err.Error() }

// Unwrap returns the reason.
func (e *FileError) Unwrap() error { return e.Err }

// Import imports the daily prices of many assets from path, in one run:
// a CSV file with a symbol (or ticker) column, a directory of such files
// or of per-symbol SYMBOL.csv files (walked recursively, see [Files]), any
// of them gzip-compressed (.csv.gz), or Polygon-style day flat files
// (ticker, volume, open, close, high, low, window_start, …), recognised by
// their window_start column. Columns are matched by name as in
// [marketdata.ReadPricesCSV]; unknown symbols get a new asset from
// opt.NewAssets, as [marketdata.ImportPrices] does; dates already stored
// are updated. The package doc describes the method.
//
// Each file is imported whole or not at all: a bad row (or a date
// repeated for a symbol within a file) rolls its file back and the run
// goes on with the next file; the file and line are in the result's
// Failed list. The price versions of the assets whose prices changed go up
// once per transaction (see [marketdata.Store.SavePrices]).
//
// Import returns an error wrapping [tradekit.ErrInvalid] when some files
// failed (the result still counts what was imported), and any database
// error as it is, after which the current transaction is rolled back.
func Import(ctx context.Context, db *bun.DB, path string, opt Options) (Result, error) {
	var res Result
	files, err := listFiles(path)
	if err != nil {
		return res, err
	}
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	if opt.CommitRows <= 0 {
		opt.CommitRows = 2_000_000
	}
	ld, err := marketdata.NewLoader(ctx, db)
	if err != nil {
		return res, err
	}
	defer ld.Close(ctx)
	known, err := ld.AssetIDs(ctx)
	if err != nil {
		return res, err
	}
	w := &writer{opt: opt, ld: ld, pg: ld.IsPostgres(), assets: make(map[string]*asset, len(known)),
		changed: map[uuid.UUID]int32{}, seen: map[uuid.UUID]bool{}, runDays: map[uuid.UUID]*daySet{}}
	p := &parser{pg: w.pg, known: known}
	for sym, id := range known {
		w.assets[sym] = &asset{id: id, exists: true}
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
	queues := make(chan chan chan *batch, opt.Workers)
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
			q := make(chan chan *batch, 4)
			select {
			case queues <- q:
			case <-ctx.Done():
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				readFile(ctx, f, p, jobs, q, &read)
			}()
		}
	}()

	progress := func(done int) {
		if opt.Progress != nil {
			opt.Progress(Progress{Files: len(files), FilesDone: done, Rows: w.rows + w.fileRows,
				Bytes: read.Load(), TotalBytes: total})
		}
	}
	if err := w.begin(ctx); err != nil {
		return res, err
	}
	done := false
	defer func() {
		if !done {
			w.ld.Rollback(ctx)
		}
	}()
	for i, f := range files {
		var q chan chan *batch
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
	if err := w.ld.Analyze(ctx, w.rows); err != nil {
		return res, err
	}
	res.Rows, res.Assets, res.Created, res.Changed = w.rows, len(w.seen), w.created, w.changedTotal
	res.From, res.To = w.from, w.to
	if res.NonTradingRows, res.NonTradingDays, err = nonTradingDays(ctx, w.ld, w.runDays); err != nil {
		return res, err
	}
	if len(res.Failed) > 0 {
		return res, fmt.Errorf("bulk: %d of %d files not imported, first %w", len(res.Failed), len(files), res.Failed[0])
	}
	return res, nil
}
