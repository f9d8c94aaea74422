package bulk

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/google/uuid"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/marketdata"
)

// asset is what the writer knows of a symbol's asset.
type asset struct {
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
	// locked is the transaction ([marketdata.Loader.Tx]) in which the
	// asset is locked against deletion (PostgreSQL): created in it, or
	// locked by checkAssets. 0: none.
	locked int
}

// writer writes the batches of a bulk import through a
// [marketdata.Loader], on its one connection, and keeps the run's
// account: which assets exist, are fresh or locked, which days each file
// and the run wrote, what changed.
type writer struct {
	opt Options
	ld  *marketdata.Loader
	pg  bool

	assets map[string]*asset
	// changed holds the assets whose prices changed in the open
	// transaction, each with the earliest day the transaction wrote for
	// it (days since dayEpoch): the stored copies of its columns are
	// stale from there on, not before (see [marketdata.Loader.Commit]).
	changed map[uuid.UUID]int32
	// seen holds every asset imported for.
	seen         map[uuid.UUID]bool
	created      []string
	changedTotal int
	file         int
	// fileLocked are the assets that checkAssets locked in the current
	// file, whose locks a rollback of the file releases.
	fileLocked []*asset
	// fileAssets are the assets of the current file, whose days a written
	// file adds to runDays, the days of each asset the run wrote.
	fileAssets []*asset
	runDays    map[uuid.UUID]*daySet
	// txFiles counts the files written in the open transaction.
	txFiles int
	// rows are the rows of the files written; fileRows of the current one.
	rows, fileRows, committedRows int64
	from, to                      calendar.Date
}

// unknownDay stands in [writer.changed] for an asset whose written days
// are not known: it changed from its first day on.
const unknownDay = math.MinInt32

// begin begins a transaction (see [marketdata.Loader.Begin]).
func (w *writer) begin(ctx context.Context) error {
	w.txFiles = 0
	return w.ld.Begin(ctx)
}

// commit raises the price versions of the assets that changed and
// commits.
func (w *writer) commit(ctx context.Context) error {
	changes := make([]marketdata.PriceChange, 0, len(w.changed))
	for id, day := range w.changed {
		c := marketdata.PriceChange{AssetID: id}
		if day != unknownDay {
			c.From = dayEpoch.AddDays(int(day))
		}
		changes = append(changes, c)
	}
	if err := w.ld.Commit(ctx, changes); err != nil {
		return err
	}
	w.changedTotal += len(changes)
	clear(w.changed)
	w.committedRows = w.rows
	return nil
}

// writeFile writes the batches of f from q inside a savepoint. A bad file
// is rolled back to the savepoint and reported as ferr; err is a failure
// of the database, which ends the run.
func (w *writer) writeFile(ctx context.Context, f *sourceFile, q <-chan chan *batch, progress func()) (ferr, err error) {
	w.file++
	w.fileRows = 0
	w.fileLocked = w.fileLocked[:0]
	w.fileAssets = w.fileAssets[:0]
	// On SQLite a file that opens its transaction goes without a
	// savepoint: if it fails, the transaction, which holds nothing else,
	// is rolled back. Under a savepoint, SQLite writes each page that a
	// statement changes to its sub-journal file first.
	savepoint := w.pg || w.txFiles > 0
	if savepoint {
		if err := w.ld.Savepoint(ctx); err != nil {
			return nil, err
		}
	}
	var created []string
	changed := map[uuid.UUID]bool{}
	seen := map[uuid.UUID]bool{}
	from, to := calendar.Date{}, calendar.Date{}
	for c := range q {
		var b *batch
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
		ferr = &marketdata.ParseError{Msg: "no rows after the header row"}
	}
	if ferr != nil {
		if savepoint {
			if err := w.ld.RollbackSavepoint(ctx); err != nil {
				return nil, err
			}
		} else {
			if err := w.ld.Restart(ctx); err != nil {
				return nil, err
			}
			w.txFiles = 0
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
		if err := w.ld.ReleaseSavepoint(ctx); err != nil {
			return nil, err
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
	for _, a := range w.fileAssets {
		if !changed[a.id] {
			continue
		}
		// The file's earliest day for the asset bounds its changed rows
		// from below.
		day, ok := a.days.first()
		if !ok {
			day = unknownDay
		}
		if old, had := w.changed[a.id]; !had || day < old {
			w.changed[a.id] = day
		}
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
func (w *writer) writeBatch(ctx context.Context, b *batch, created *[]string, changed, seen map[uuid.UUID]bool) (ferr, err error) {
	assets := make([]*asset, len(b.symbols))
	var check []*asset
	for i, sym := range b.symbols {
		a := w.assets[sym]
		if a == nil {
			a = &asset{id: b.ids[i]}
			w.assets[sym] = a
		}
		if !a.exists {
			spec := w.opt.NewAssets
			spec.Symbol, spec.Name = sym, ""
			na, err := w.ld.CreateAsset(ctx, spec)
			if err != nil {
				if errors.Is(err, tradekit.ErrInvalid) || errors.Is(err, tradekit.ErrConflict) {
					return fmt.Errorf("%s: %s", sym, trimPrefix(err)), nil
				}
				return nil, err
			}
			if na.ID != a.id {
				return fmt.Errorf("%s: the asset was created with id %s meanwhile", sym, na.ID), nil
			}
			a.exists, a.checked, a.fresh, a.locked = true, true, w.file, w.ld.Tx()
			*created = append(*created, sym)
		}
		if !a.checked || (w.pg && a.locked != w.ld.Tx()) {
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
			return &marketdata.ParseError{Line: int(k.line), Msg: fmt.Sprintf("%s %s repeats an earlier row of the file",
				b.symbols[k.sym], dayEpoch.AddDays(int(k.day)))}, nil
		}
	}
	if w.pg {
		// Nothing to update when every asset is fresh: the loader COPYs
		// straight into prices, as a raw load would. A refusal (which the
		// checks above should make impossible) fails the file, not the
		// run: its savepoint is rolled back.
		fresh := allFresh(assets, w.file)
		ids, refused, err := w.ld.CopyPrices(ctx, b.data, fresh)
		if refused != nil || err != nil {
			return refused, err
		}
		if fresh {
			for _, a := range assets {
				changed[a.id] = true
			}
		}
		for _, id := range ids {
			changed[id] = true
		}
		return nil, nil
	}
	return w.writeSQLite(ctx, b, assets, changed)
}

// writeSQLite writes the rows of b with [marketdata.Loader.InsertPrices],
// marking in changed the assets whose stored prices changed. The rows of
// assets fresh in the current file (no prices before the run, so nothing
// to conflict with) are INSERTed; the others are upserted.
func (w *writer) writeSQLite(ctx context.Context, b *batch, assets []*asset, changed map[uuid.UUID]bool) (ferr, err error) {
	rows := &marketdata.LoadRows{Data: b.data, Ends: b.ends, Volumes: b.vols, IDs: b.ids, Fresh: make([]bool, len(assets))}
	for i, a := range assets {
		rows.Fresh[i] = a.fresh == w.file
	}
	for r := 0; r < b.rows; {
		sym := b.keys[r].sym
		end := r + 1
		for end < b.rows && b.keys[end].sym == sym {
			end++
		}
		rows.Runs = append(rows.Runs, marketdata.LoadRun{Asset: sym, End: end})
		r = end
	}
	hit, refused, err := w.ld.InsertPrices(ctx, rows)
	if refused != nil || err != nil {
		return refused, err
	}
	for i, a := range assets {
		if hit[i] {
			changed[a.id] = true
		}
	}
	return nil, nil
}

// checkAssets reads whether the stored assets as have prices (the first
// time the run meets each: an asset without prices is fresh for the
// current file), and on PostgreSQL locks them against deletion until the
// transaction ends, FOR KEY SHARE, as the foreign-key check of each row
// would (see [marketdata.Loader.CheckAssets]). ferr names an asset
// deleted since the run began.
func (w *writer) checkAssets(ctx context.Context, as []*asset) (ferr, err error) {
	ids := make([]uuid.UUID, len(as))
	for i, a := range as {
		ids[i] = a.id
	}
	has, err := w.ld.CheckAssets(ctx, ids)
	if err != nil {
		return nil, err
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
		if w.pg && a.locked != w.ld.Tx() {
			a.locked = w.ld.Tx()
			w.fileLocked = append(w.fileLocked, a)
		}
	}
	return nil, nil
}

// allFresh reports whether every asset of a batch of file may have its
// rows copied straight into prices (see asset.fresh).
func allFresh(assets []*asset, file int) bool {
	for _, a := range assets {
		if a.fresh != file {
			return false
		}
	}
	return true
}
