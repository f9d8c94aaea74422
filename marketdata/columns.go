package marketdata

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/ohlcv"
)

// PriceColumns returns the asset's whole daily history as float64
// columns with their dates (all five columns), each price the float64
// nearest its stored decimal. The error
// wraps [tradekit.ErrNotFound] when the asset does not exist.
//
// It reads a derived copy of the prices kept in a few values per asset
// (table price_columns), tagged with the price version it was built from:
// a compact encoding, each price a varint of its change in cents (or at
// whatever scale its column needs), decoded to the exact same float64
// (see encodeColumns).
// When the copy is older than the asset's prices, PriceColumns brings it
// up to date from the records written since (see [Store.PriceColumnsOf]),
// or rebuilds it from every record when it is missing or that is not
// known, and stores it for the next reader.
// The pure-Go SQLite driver pays a mutex round trip per value it hands
// over, so a few values are several times faster than 2,500 rows.
func (s *Store) PriceColumns(ctx context.Context, assetID uuid.UUID) (ohlcv.Series, error) {
	got, err := s.columnsOf(ctx, []uuid.UUID{assetID}, func(uuid.UUID, int, bool) bool { return true })
	if err != nil {
		return ohlcv.Series{}, err
	}
	vc, ok := got[assetID]
	if !ok {
		return ohlcv.Series{}, fmt.Errorf("marketdata: asset %s: %w", assetID, tradekit.ErrNotFound)
	}
	return vc.Bars, nil
}

// maxColumnsSize bounds the buffer PriceColumns allocates from the size
// a stored copy declares: far beyond a century of days.
const maxColumnsSize = 16 << 20

// columnsChunk is the most bytes of the encoded columns in one row: small
// enough to fit in one 4 KiB SQLite page, so reading it needs no overflow
// pages and no allocation inside SQLite.
const columnsChunk = 3900

// saveColumns replaces the stored copy of the asset's columns with data,
// built from version, unless a newer copy is there. When version is still
// the asset's, it clears the asset's prices_changed_from: the copy holds
// every record written so far.
func (s *Store) saveColumns(ctx context.Context, assetID uuid.UUID, version int64, data []byte) error {
	var q strings.Builder
	q.WriteString("INSERT INTO price_columns (asset_id, chunk, version, data) VALUES ")
	var args []any
	for i := 0; i*columnsChunk < len(data); i++ {
		if i > 0 {
			q.WriteByte(',')
		}
		q.WriteString("(?, ?, ?, ?)")
		args = append(args, assetID, i, version, data[i*columnsChunk:min((i+1)*columnsChunk, len(data))])
	}
	q.WriteString(" ON CONFLICT (asset_id, chunk) DO UPDATE SET version = excluded.version, data = excluded.data")
	save := func(ctx context.Context, tx bun.Tx) error {
		var newer int
		err := tx.NewRaw("SELECT COUNT(*) FROM price_columns WHERE asset_id = ? AND version > ?", assetID, version).Scan(ctx, &newer)
		if err != nil || newer > 0 {
			return err
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM price_columns WHERE asset_id = ?", assetID); err != nil {
			return err
		}
		if _, err = tx.ExecContext(ctx, q.String(), args...); err != nil {
			return err
		}
		_, err = tx.NewRaw("UPDATE assets SET prices_changed_from = NULL WHERE id = ? AND prices_version = ?",
			assetID, version).Exec(ctx)
		return err
	}
	if err := s.db.RunInTx(ctx, nil, save); err != nil {
		return fmt.Errorf("marketdata: store price columns of %s: %w", assetID, err)
	}
	return nil
}

// parseColumns parses "YYYY-MM-DD,open,high,low,close,volume", as both
// databases print a price row, into the date and f.
func parseColumns(line string, f *[5]float64) (calendar.Date, error) {
	date, rest, ok := strings.Cut(line, ",")
	if !ok || len(date) != 10 {
		return calendar.Date{}, errors.New("malformed price row")
	}
	d, err := calendar.ParseDate(date)
	if err != nil {
		return calendar.Date{}, err
	}
	for i := range f {
		field, tail, more := strings.Cut(rest, ",")
		if more != (i < len(f)-1) {
			return calendar.Date{}, errors.New("malformed price row")
		}
		if f[i], err = strconv.ParseFloat(field, 64); err != nil {
			return calendar.Date{}, err
		}
		rest = tail
	}
	return d, nil
}

// PriceSeries returns the prices ps, which must be one asset's in
// ascending date order, as columns: each price the float64 nearest its
// decimal, as [Store.PriceColumns] gives them.
func PriceSeries(ps []Price) ohlcv.Series {
	n := len(ps)
	s := ohlcv.Series{Dates: make([]calendar.Date, n), Open: make([]float64, n), High: make([]float64, n),
		Low: make([]float64, n), Close: make([]float64, n), Volume: make([]float64, n)}
	for i, p := range ps {
		s.Dates[i] = p.Date
		s.Open[i], s.High[i], s.Low[i] = p.Open.InexactFloat64(), p.High.InexactFloat64(), p.Low.InexactFloat64()
		s.Close[i], s.Volume[i] = p.Close.InexactFloat64(), float64(p.Volume)
	}
	return s
}
