package marketdata

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

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
// [Store.PriceColumns] would, in two queries whatever their number: one
// reads the price versions and the stored copies, the other the price
// records of the assets whose copy is missing or stale. It does not store
// the copies it rebuilds (PriceColumns does, for the next reader). Assets
// that do not exist are left out of the result.
//
// It is meant for passes over many assets, such as the evaluation of
// alerts after an import: per asset, PriceColumns pays several round
// trips, and a stale copy's rebuild a write transaction.
func (s *Store) PriceColumnsOf(ctx context.Context, ids []uuid.UUID) (map[uuid.UUID]VersionedColumns, error) {
	out := make(map[uuid.UUID]VersionedColumns, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.db.QueryContext(ctx, `SELECT a.id, a.prices_version, pc.version, pc.data
		FROM assets AS a LEFT JOIN price_columns AS pc ON pc.asset_id = a.id
		WHERE a.id IN (?) ORDER BY a.id, pc.chunk`, bun.In(ids))
	if err != nil {
		return nil, fmt.Errorf("marketdata: price columns: %w", err)
	}
	type copyOf struct {
		version int64
		fresh   bool
		data    []byte
	}
	copies := map[uuid.UUID]*copyOf{}
	var order []uuid.UUID
	for rows.Next() {
		var id uuid.UUID
		var current int64
		var version sql.NullInt64
		var chunk sql.RawBytes // valid until Next: copied at once
		if err := rows.Scan(&id, &current, &version, &chunk); err != nil {
			rows.Close()
			return nil, fmt.Errorf("marketdata: price columns: %w", err)
		}
		c, ok := copies[id]
		if !ok {
			c = &copyOf{version: current, fresh: true}
			copies[id] = c
			order = append(order, id)
		}
		c.fresh = c.fresh && version.Valid && version.Int64 == current
		c.data = append(c.data, chunk...)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("marketdata: price columns: %w", err)
	}
	var stale []uuid.UUID
	for _, id := range order {
		c := copies[id]
		if c.fresh {
			if b, err := decodeColumns(c.data); err == nil {
				out[id] = VersionedColumns{Version: c.version, Bars: b}
				continue
			}
		}
		stale = append(stale, id)
		out[id] = VersionedColumns{Version: c.version}
	}
	if len(stale) == 0 {
		return out, nil
	}
	// Read after the versions: the records are at least as new as them.
	rows, err = s.db.QueryContext(ctx, "SELECT asset_id, "+priceLine+" FROM prices WHERE asset_id IN (?) ORDER BY asset_id, date", bun.In(stale))
	if err != nil {
		return nil, fmt.Errorf("marketdata: price columns: %w", err)
	}
	defer rows.Close()
	var id uuid.UUID
	var line string
	var f [5]float64
	var cur ohlcv.Series
	var curID uuid.UUID
	put := func() {
		if curID != uuid.Nil {
			vc := out[curID]
			vc.Bars = cur
			out[curID] = vc
		}
	}
	for rows.Next() {
		if err := rows.Scan(&id, &line); err != nil {
			return nil, fmt.Errorf("marketdata: price columns: %w", err)
		}
		if id != curID {
			put()
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
	put()
	return out, nil
}
