package marketdata

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/calendar"
)

// ---- prices ----

const priceColumns = "asset_id, date, open, high, low, close, volume"

// priceLine is the SQL of one price row as a single text value,
// "YYYY-MM-DD,open,high,low,close,volume": one column reads much faster
// than six through the pure-Go SQLite driver, and both databases print
// dates and numbers in these forms.
const priceLine = "date || ',' || open || ',' || high || ',' || low || ',' || close || ',' || volume"

// queryPrices returns the asset's records that match the SQL condition
// cond (after "asset_id = ? AND"), in the order of the SQL order clause.
func (s *Store) queryPrices(ctx context.Context, assetID uuid.UUID, cond, order string, args ...any) ([]Price, error) {
	q := "SELECT " + priceLine + " FROM prices WHERE asset_id = ?"
	if cond != "" {
		q += " AND " + cond
	}
	rows, err := s.db.QueryContext(ctx, q+" "+order, append([]any{assetID}, args...)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Price{}
	var line sql.RawBytes
	for rows.Next() {
		if err := rows.Scan(&line); err != nil {
			return nil, err
		}
		p, err := parsePriceLine(line)
		if err != nil {
			return nil, fmt.Errorf("price of %s %q: %w", assetID, line, err)
		}
		p.AssetID = assetID
		p.ID = PriceID(assetID, p.Date)
		out = append(out, p)
	}
	return out, rows.Err()
}

// parsePriceLine parses a priceLine value.
func parsePriceLine(b []byte) (Price, error) {
	var p Price
	var f [6][]byte
	for i := range f {
		j := bytes.IndexByte(b, ',')
		if i == len(f)-1 {
			j = len(b)
		} else if j < 0 {
			return Price{}, errors.New("too few fields")
		}
		f[i], b = b[:j], b[min(j+1, len(b)):]
	}
	var d SQLDate
	if err := d.Scan(f[0]); err != nil {
		return Price{}, err
	}
	p.Date = calendar.Date(d)
	var err error
	for i, dst := range [4]*decimal.Decimal{&p.Open, &p.High, &p.Low, &p.Close} {
		if *dst, err = parseDecimalText(f[i+1]); err != nil {
			return Price{}, err
		}
	}
	if p.Volume, err = strconv.ParseInt(string(f[5]), 10, 64); err != nil {
		return Price{}, err
	}
	return p, nil
}

// parseDecimalText parses a decimal as the databases print it ("101.5",
// PostgreSQL's "101.500000000000000000", "-3"). Trailing fractional zeros
// are dropped; up to 18 remaining digits are read into an int64 (one
// allocation), anything else goes to decimal.NewFromString.
func parseDecimalText(b []byte) (decimal.Decimal, error) {
	if dot := bytes.IndexByte(b, '.'); dot >= 0 {
		for len(b) > dot+1 && b[len(b)-1] == '0' {
			b = b[:len(b)-1]
		}
		if len(b) == dot+1 {
			b = b[:dot]
		}
	}
	var m int64
	var exp int32
	digits, seenDot, neg := 0, false, false
	for i, ch := range b {
		switch {
		case ch >= '0' && ch <= '9':
			m = m*10 + int64(ch-'0')
			digits++
			if seenDot {
				exp--
			}
		case ch == '.' && !seenDot:
			seenDot = true
		case ch == '-' && i == 0:
			neg = true
		default:
			digits = 99 // anything else: the general parser decides
		}
	}
	if digits == 0 || digits > 18 {
		return decimal.NewFromString(string(b))
	}
	if neg {
		m = -m
	}
	return decimal.New(m, exp), nil
}

// Prices returns the daily records of the asset from from to to, both
// included, oldest first; a zero bound is open. The error wraps
// [tradekit.ErrNotFound] when the asset does not exist, and
// [tradekit.ErrInvalid] when from is after to.
func (s *Store) Prices(ctx context.Context, assetID uuid.UUID, from, to calendar.Date) ([]Price, error) {
	zero := calendar.Date{}
	if from != zero && to != zero && from.After(to) {
		return nil, fmt.Errorf("marketdata: from %s is after to %s: %w", from, to, tradekit.ErrInvalid)
	}
	var conds []string
	var args []any
	if from != zero {
		conds = append(conds, "date >= ?")
		args = append(args, SQLDate(from))
	}
	if to != zero {
		conds = append(conds, "date <= ?")
		args = append(args, SQLDate(to))
	}
	out, err := s.queryPrices(ctx, assetID, strings.Join(conds, " AND "), "ORDER BY date", args...)
	if err != nil {
		return nil, fmt.Errorf("marketdata: prices of %s: %w", assetID, err)
	}
	if len(out) == 0 {
		if _, err := s.Asset(ctx, assetID); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// LatestPrice returns the asset's most recent daily record. The error
// wraps [tradekit.ErrNotFound] when the asset does not exist or has no
// prices.
func (s *Store) LatestPrice(ctx context.Context, assetID uuid.UUID) (Price, error) {
	out, err := s.queryPrices(ctx, assetID, "", "ORDER BY date DESC LIMIT 1")
	if err != nil {
		return Price{}, fmt.Errorf("marketdata: latest price of %s: %w", assetID, err)
	}
	if len(out) == 0 {
		return Price{}, fmt.Errorf("marketdata: %w", tradekit.Errorf(tradekit.ErrNotFound, "asset %s has no prices", assetID))
	}
	return out[0], nil
}

// LastPriceDate returns the date of the latest daily record of any
// asset, and false when there is none.
func (s *Store) LastPriceDate(ctx context.Context) (calendar.Date, bool, error) {
	var d *SQLDate
	if err := s.db.NewRaw("SELECT MAX(date) FROM prices").Scan(ctx, &d); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return calendar.Date{}, false, fmt.Errorf("marketdata: last price date: %w", err)
	}
	if d == nil || !calendar.Date(*d).IsValid() {
		return calendar.Date{}, false, nil
	}
	return calendar.Date(*d), true, nil
}

// Price returns the price record with the given id (see [PriceID]). The
// error wraps [tradekit.ErrNotFound] when there is none.
func (s *Store) Price(ctx context.Context, id uuid.UUID) (Price, error) {
	assets, date, err := s.priceAssets(ctx, id)
	if err != nil {
		return Price{}, err
	}
	for _, a := range assets {
		out, err := s.queryPrices(ctx, a, "date = ?", "", SQLDate(date))
		if err != nil {
			return Price{}, fmt.Errorf("marketdata: price %s: %w", id, err)
		}
		if len(out) > 0 {
			return out[0], nil
		}
	}
	return Price{}, priceNotFound(id)
}

// PriceLocation returns the asset and the date of the price record with
// the given id, read from the id and the assets, without reading the
// record: callers that hold the asset's prices find it there. The error
// wraps [tradekit.ErrNotFound] when no asset can hold such a record; the
// asset may still have no record on that date.
func (s *Store) PriceLocation(ctx context.Context, id uuid.UUID) (uuid.UUID, calendar.Date, error) {
	assets, date, err := s.priceAssets(ctx, id)
	if err != nil {
		return uuid.UUID{}, calendar.Date{}, err
	}
	if len(assets) == 0 {
		return uuid.UUID{}, calendar.Date{}, priceNotFound(id)
	}
	// Assets whose ids share a price id's twelve bytes are refused when
	// stored (checkPriceIDPrefix): there is one.
	return assets[0], date, nil
}

// priceAssets returns the assets that a price id can belong to (almost
// always one) and its date.
func (s *Store) priceAssets(ctx context.Context, id uuid.UUID) ([]uuid.UUID, calendar.Date, error) {
	asset, date, ok := parsePriceID(id)
	if !ok {
		return nil, calendar.Date{}, priceNotFound(id)
	}
	// The assets whose ids start with the id's first six bytes (the bytes
	// before the version nibble): almost always exactly one.
	var lo, hi uuid.UUID
	copy(lo[:6], asset[:6])
	copy(hi[:6], asset[:6])
	for i := 6; i < 16; i++ {
		hi[i] = 0xff
	}
	var candidates []uuid.UUID
	if err := s.db.NewRaw("SELECT id FROM assets WHERE id >= ? AND id <= ?", lo, hi).Scan(ctx, &candidates); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, calendar.Date{}, fmt.Errorf("marketdata: price %s: %w", id, err)
	}
	out := candidates[:0]
	for _, a := range candidates {
		if matchesPriceID(a, asset) {
			out = append(out, a)
		}
	}
	return out, date, nil
}

// priceNotFound is the error for a price id that names no record.
func priceNotFound(id uuid.UUID) error {
	return fmt.Errorf("marketdata: %w", tradekit.Errorf(tradekit.ErrNotFound, "price %s not found", id))
}

// CountPrices returns the number of price records of the asset.
func (s *Store) CountPrices(ctx context.Context, assetID uuid.UUID) (int, error) {
	var n int
	if err := s.db.NewRaw("SELECT COUNT(*) FROM prices WHERE asset_id = ?", assetID).Scan(ctx, &n); err != nil {
		return 0, fmt.Errorf("marketdata: count prices: %w", err)
	}
	return n, nil
}

// priceBatch is the number of rows per INSERT statement of SavePrices.
const priceBatch = 1000

// SavePrices upserts the records: a record for an asset and date already
// stored has its prices and volume replaced. Ids are ignored: a record's
// id is always [PriceID] of its asset and date. The records are written in multi-row statements of
// priceBatch rows; run SavePrices on a Store built on a transaction to
// make it all or nothing. Records stored unchanged are not rewritten.
//
// On PostgreSQL, a Store built on a bun.Conn inside a transaction begun
// on it (see [InConnTx]) loads the records with COPY instead, several
// times faster for large imports.
// SavePrices does not validate the bars (see [Price.Validate]); records
// must not repeat an asset and date.
func (s *Store) SavePrices(ctx context.Context, ps []Price) error {
	if conn, ok := s.db.(bun.Conn); ok && s.db.Dialect().Name() == dialect.PG && len(ps) > 0 {
		changed, err := copyPrices(ctx, conn, ps)
		if err != nil {
			return err
		}
		if !changed {
			return nil
		}
		return s.bumpPriceVersions(ctx, ps)
	}
	var b strings.Builder
	changed := false
	for start := 0; start < len(ps); start += priceBatch {
		batch := ps[start:min(start+priceBatch, len(ps))]
		b.Reset()
		b.Grow(len(batch) * 160)
		b.WriteString("INSERT INTO prices (" + priceColumns + ") VALUES ")
		var buf []byte
		for i, p := range batch {
			if i > 0 {
				b.WriteByte(',')
			}
			buf = buf[:0]
			buf = append(buf, "('"...)
			buf = append(buf, p.AssetID.String()...)
			buf = append(buf, "','"...)
			buf, _ = p.Date.AppendText(buf)
			for _, d := range [4]decimal.Decimal{p.Open, p.High, p.Low, p.Close} {
				buf = append(buf, "','"...)
				buf = append(buf, d.String()...) // digits, '-' and '.' only: safe to inline
			}
			buf = append(buf, "',"...)
			buf = strconv.AppendInt(buf, p.Volume, 10)
			buf = append(buf, ')')
			b.Write(buf)
		}
		b.WriteString(priceUpsert)
		res, err := s.db.ExecContext(ctx, b.String())
		if err != nil {
			return fmt.Errorf("marketdata: save prices: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil || n > 0 {
			changed = true
		}
	}
	if !changed {
		return nil
	}
	return s.bumpPriceVersions(ctx, ps)
}

// priceUpsert is the conflict clause of every price write: rows already
// stored as they are stay untouched (no write, no dead row), so that
// re-importing the same data changes nothing, price version included.
const priceUpsert = ` ON CONFLICT (asset_id, date) DO UPDATE SET open = excluded.open, high = excluded.high,
	low = excluded.low, close = excluded.close, volume = excluded.volume
	WHERE prices.open IS DISTINCT FROM excluded.open OR prices.high IS DISTINCT FROM excluded.high
		OR prices.low IS DISTINCT FROM excluded.low OR prices.close IS DISTINCT FROM excluded.close
		OR prices.volume IS DISTINCT FROM excluded.volume`

// bumpPriceVersions adds one to the price version (see [PriceVersion]) of
// every asset in ps, lowers each one's prices_changed_from to the earliest
// date it has in ps (records with a zero date count as changed from the
// first day), and tells listening [Versions] so. Readers of the stored
// copies of the columns bring a stale copy up to date from that date (see
// [Store.PriceColumnsOf]).
func (s *Store) bumpPriceVersions(ctx context.Context, ps []Price) error {
	from := map[uuid.UUID]calendar.Date{}
	var ids []uuid.UUID
	for _, p := range ps {
		d := p.Date
		if !d.IsValid() {
			d = firstDay
		}
		if old, ok := from[p.AssetID]; !ok {
			ids = append(ids, p.AssetID)
			from[p.AssetID] = d
		} else if d.Before(old) {
			from[p.AssetID] = d
		}
	}
	// One statement per date: after a day's import, one for all assets.
	byDate := map[calendar.Date][]uuid.UUID{}
	var dates []calendar.Date
	for _, id := range ids {
		d := from[id]
		if byDate[d] == nil {
			dates = append(dates, d)
		}
		byDate[d] = append(byDate[d], id)
	}
	slices.SortFunc(dates, calendar.Date.Compare)
	for _, d := range dates {
		_, err := s.db.NewRaw(`UPDATE assets SET prices_version = prices_version + 1, prices_updated_at = ?,
			prices_changed_from = CASE WHEN prices_changed_from IS NULL OR prices_changed_from > ? THEN ? ELSE prices_changed_from END
			WHERE id IN (?)`, s.now().UTC(), SQLDate(d), SQLDate(d), bun.In(byDate[d])).Exec(ctx)
		if err != nil {
			return fmt.Errorf("marketdata: save prices: version: %w", err)
		}
	}
	if err := s.notifyVersions(ctx, ids); err != nil {
		return fmt.Errorf("marketdata: save prices: version: %w", err)
	}
	return nil
}

// firstDay is the prices_changed_from of records whose date is not known:
// before every record.
var firstDay = calendar.NewDate(1, time.January, 1)

// bumpVersions adds one to the price version of the assets ids (distinct)
// and tells listening [Versions] so, at commit.
func (s *Store) bumpVersions(ctx context.Context, ids []uuid.UUID) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := s.db.NewRaw("UPDATE assets SET prices_version = prices_version + 1, prices_updated_at = ? WHERE id IN (?)",
		s.now().UTC(), bun.In(ids)).Exec(ctx)
	if err != nil {
		return err
	}
	return s.notifyVersions(ctx, ids)
}
