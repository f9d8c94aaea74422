package marketdata

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/ohlcv"
)

// VersionedColumns is an asset's whole daily history as columns (see
// [Store.PriceColumns]) with the asset's price version read before it:
// the columns are at least as new as Version.
type VersionedColumns struct {
	Version int64
	Bars    ohlcv.Series
}

// PriceColumnsOf returns the price columns of each of the assets, as
// [Store.PriceColumns] would, in a few queries whatever their number: one
// reads the price versions and the stored copies, then one per distinct
// date of change reads the records the copies lack. Assets that do not
// exist are left out of the result.
//
// A stale copy is brought up to date rather than rebuilt: its bars dated
// before the asset's prices_changed_from (the earliest date written since
// the copy was stored, see [Store.SavePrices]) are kept, and the records
// from that date on are read. After a day's import that is one record per
// asset. A copy that is missing, does not decode, or is stale for a reason
// not recorded (a change of corporate actions) is rebuilt from every
// record. PriceColumnsOf stores the copies it rebuilds, and those it
// brought up to date past a few dozen records, for the next reader.
//
// It is meant for passes over many assets, such as the evaluation of
// alerts after an import: per asset, PriceColumns pays several round
// trips.
func (s *Store) PriceColumnsOf(ctx context.Context, ids []uuid.UUID) (map[uuid.UUID]VersionedColumns, error) {
	return s.columnsOf(ctx, ids, func(id uuid.UUID, read int, whole bool) bool {
		return whole || read >= refreshAfter(id)
	})
}

// refreshAfter returns how many records read past a stale copy make
// PriceColumnsOf store the copy brought up to date: 16 to 47 by asset, so
// that the copies of assets imported together are not all stored by the
// same pass.
func refreshAfter(id uuid.UUID) int { return 16 + int(id[15]%32) }

// storedCopy is what columnsOf reads of an asset before its records.
type storedCopy struct {
	version int64   // the asset's price version
	from    SQLDate // its prices_changed_from; zero for NULL
	fresh   bool    // every chunk of the copy is tagged with version
	data    []byte  // the copy's chunks, in order
}

// columnsOf reads the columns of the assets ids as PriceColumnsOf
// describes, and stores the copy of each asset for which save, given the
// records read for it and whether they were all of them, says so.
func (s *Store) columnsOf(ctx context.Context, ids []uuid.UUID, save func(id uuid.UUID, read int, whole bool) bool) (map[uuid.UUID]VersionedColumns, error) {
	out := make(map[uuid.UUID]VersionedColumns, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.db.QueryContext(ctx, `SELECT a.id, a.prices_version, a.prices_changed_from, pc.version, pc.data
		FROM assets AS a LEFT JOIN price_columns AS pc ON pc.asset_id = a.id
		WHERE a.id IN (?) ORDER BY a.id, pc.chunk`, bun.In(ids))
	if err != nil {
		return nil, fmt.Errorf("marketdata: price columns: %w", err)
	}
	copies := map[uuid.UUID]*storedCopy{}
	var order []uuid.UUID
	for rows.Next() {
		var id uuid.UUID
		var current int64
		var from SQLDate
		var version sql.NullInt64
		var chunk sql.RawBytes // valid until Next: copied at once
		if err := rows.Scan(&id, &current, &from, &version, &chunk); err != nil {
			rows.Close()
			return nil, fmt.Errorf("marketdata: price columns: %w", err)
		}
		c, ok := copies[id]
		if !ok {
			c = &storedCopy{version: current, from: from, fresh: true}
			copies[id] = c
			order = append(order, id)
			// The first chunk tells the size; a corrupt one is not
			// believed past a bound.
			if len(chunk) >= columnsHeader && chunk[0] == columnsFormat {
				if size := binary.LittleEndian.Uint32(chunk[5:]); size <= maxColumnsSize {
					c.data = make([]byte, 0, size)
				}
			}
		}
		c.fresh = c.fresh && version.Valid && version.Int64 == current
		c.data = append(c.data, chunk...)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("marketdata: price columns: %w", err)
	}

	// The assets whose records are to be read, by the date to read them
	// from (the zero date: all of them), with the bars of the copy to keep.
	kept := map[uuid.UUID]ohlcv.Series{}
	byFrom := map[calendar.Date][]uuid.UUID{}
	var froms []calendar.Date
	for _, id := range order {
		c := copies[id]
		out[id] = VersionedColumns{Version: c.version}
		var bars ohlcv.Series
		decoded := false
		if len(c.data) > 0 {
			if b, err := decodeColumns(c.data); err == nil {
				bars, decoded = b, true
			}
		}
		from := calendar.Date{}
		switch {
		case decoded && c.fresh:
			out[id] = VersionedColumns{Version: c.version, Bars: bars}
			continue
		case decoded && c.from != SQLDate{}:
			from = calendar.Date(c.from)
			n, _ := slices.BinarySearchFunc(bars.Dates, from, calendar.Date.Compare)
			kept[id] = bars.Slice(0, n)
		}
		if byFrom[from] == nil {
			froms = append(froms, from)
		}
		byFrom[from] = append(byFrom[from], id)
	}
	slices.SortFunc(froms, calendar.Date.Compare)
	// Read after the versions: the records are at least as new as them.
	for _, from := range froms {
		group := byFrom[from]
		read, err := s.recordColumns(ctx, group, from)
		if err != nil {
			return nil, err
		}
		whole := !from.IsValid()
		for _, id := range group {
			bars := appendSeries(kept[id], read[id])
			vc := out[id]
			vc.Bars = bars
			out[id] = vc
			if save(id, read[id].Len(), whole) {
				// Tagged with the version read before the records: if they
				// changed in between, the tag is already old and the next
				// reader catches up.
				if err := s.saveColumns(ctx, id, vc.Version, encodeColumns(bars)); err != nil {
					return nil, err
				}
			}
		}
	}
	return out, nil
}

// recordColumns reads the price records of the assets ids dated on or
// after from (all of them for the zero date), as columns by asset.
func (s *Store) recordColumns(ctx context.Context, ids []uuid.UUID, from calendar.Date) (map[uuid.UUID]ohlcv.Series, error) {
	q, args := "SELECT asset_id, "+priceLine+" FROM prices WHERE asset_id IN (?)", []any{bun.In(ids)}
	if from.IsValid() {
		q += " AND date >= ?"
		args = append(args, SQLDate(from))
	}
	rows, err := s.db.QueryContext(ctx, q+" ORDER BY asset_id, date", args...)
	if err != nil {
		return nil, fmt.Errorf("marketdata: price columns: %w", err)
	}
	defer rows.Close()
	return scanColumns(rows)
}

// scanColumns reads rows of an asset id and its priceLine, ordered by
// asset and date, as columns by asset.
func scanColumns(rows *sql.Rows) (map[uuid.UUID]ohlcv.Series, error) {
	out := map[uuid.UUID]ohlcv.Series{}
	var id, curID uuid.UUID
	var line string
	var f [5]float64
	var cur ohlcv.Series
	for rows.Next() {
		if err := rows.Scan(&id, &line); err != nil {
			return nil, fmt.Errorf("marketdata: price columns: %w", err)
		}
		if id != curID {
			if curID != uuid.Nil {
				out[curID] = cur
			}
			curID, cur = id, ohlcv.Series{}
		}
		d, err := parseColumns(line, &f)
		if err != nil {
			return nil, fmt.Errorf("marketdata: price columns of %s: %q: %w", id, line, err)
		}
		cur.Dates = append(cur.Dates, d)
		cur.Open, cur.High, cur.Low = append(cur.Open, f[0]), append(cur.High, f[1]), append(cur.Low, f[2])
		cur.Close, cur.Volume = append(cur.Close, f[3]), append(cur.Volume, f[4])
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("marketdata: price columns: %w", err)
	}
	if curID != uuid.Nil {
		out[curID] = cur
	}
	return out, nil
}

// PriceTailsOf returns, for each of the assets, its latest bars (all of
// them when it has fewer) as columns, with the asset's price version
// read before them, as [Store.PriceColumnsOf] gives the whole history:
// for work that needs only the end of a history, such as an alert whose
// formula looks back a bounded number of bars (formula.Expr.Lookback).
// It reads the records themselves: one query finds each asset's version
// and its bars-th latest date, and one per distinct such date (one for
// the assets of a market that trade on the same days) reads the records
// from it on. The stored copies are neither read nor written. Assets that do not exist are left out of the result.
func (s *Store) PriceTailsOf(ctx context.Context, ids []uuid.UUID, bars int) (map[uuid.UUID]VersionedColumns, error) {
	out := make(map[uuid.UUID]VersionedColumns, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	if bars < 1 {
		return nil, fmt.Errorf("marketdata: price tails of %d bars", bars)
	}
	// Each asset's first date is found by its index on (asset_id, date),
	// bars-1 entries back from its latest; an asset with fewer bars has
	// none, and all of its records are read.
	rows, err := s.db.QueryContext(ctx, `SELECT a.id, a.prices_version,
		(SELECT q.date FROM prices AS q WHERE q.asset_id = a.id ORDER BY q.date DESC LIMIT 1 OFFSET ?) AS first
		FROM assets AS a WHERE a.id IN (?)`, bars-1, bun.In(ids))
	if err != nil {
		return nil, fmt.Errorf("marketdata: price tails: %w", err)
	}
	byFrom := map[calendar.Date][]uuid.UUID{}
	for rows.Next() {
		var id uuid.UUID
		var version int64
		var first SQLDate
		if err := rows.Scan(&id, &version, &first); err != nil {
			rows.Close()
			return nil, fmt.Errorf("marketdata: price tails: %w", err)
		}
		out[id] = VersionedColumns{Version: version}
		byFrom[calendar.Date(first)] = append(byFrom[calendar.Date(first)], id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("marketdata: price tails: %w", err)
	}
	// Read after the versions: the records are at least as new as them.
	// The assets of a market share their dates: one read for most.
	for from, group := range byFrom {
		read, err := s.recordColumns(ctx, group, from)
		if err != nil {
			return nil, err
		}
		for _, id := range group {
			vc := out[id]
			vc.Bars = read[id]
			out[id] = vc
		}
	}
	return out, nil
}

// appendSeries returns the bars of a followed by those of b, in new
// slices when both have bars.
func appendSeries(a, b ohlcv.Series) ohlcv.Series {
	switch {
	case a.Len() == 0:
		return b
	case b.Len() == 0:
		return a
	}
	n := a.Len() + b.Len()
	cat := func(x, y []float64) []float64 { return append(append(make([]float64, 0, n), x...), y...) }
	return ohlcv.Series{Dates: append(append(make([]calendar.Date, 0, n), a.Dates...), b.Dates...),
		Open: cat(a.Open, b.Open), High: cat(a.High, b.High), Low: cat(a.Low, b.Low),
		Close: cat(a.Close, b.Close), Volume: cat(a.Volume, b.Volume)}
}
