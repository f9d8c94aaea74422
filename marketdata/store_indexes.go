package marketdata

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/calendar"
)

// ---- indexes ----

// countMembers is the SQL of an index's constituent count on a date (the
// second argument).
const countMembers = `(SELECT COUNT(*) FROM index_constituents c WHERE c.index_id = i.id
	AND c.valid_from <= ? AND (c.valid_to IS NULL OR c.valid_to > ?))`

// Indexes returns every index, by symbol, with its number of constituents
// on the date asOf.
func (s *Store) Indexes(ctx context.Context, asOf calendar.Date) ([]Index, error) {
	var rows []struct {
		Index
		N int `bun:"n"`
	}
	d := SQLDate(asOf)
	err := s.db.NewRaw("SELECT i.id, i.symbol, i.name, i.description, "+countMembers+" AS n FROM market_indexes i ORDER BY i.symbol",
		d, d).Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("marketdata: indexes: %w", err)
	}
	out := make([]Index, len(rows))
	for i, r := range rows {
		out[i] = r.Index
		out[i].AssetCount = r.N
	}
	return out, nil
}

// Index returns the index with the given id and its number of
// constituents on asOf. The error wraps [tradekit.ErrNotFound] when there
// is none.
func (s *Store) Index(ctx context.Context, id uuid.UUID, asOf calendar.Date) (Index, error) {
	var row struct {
		Index
		N int `bun:"n"`
	}
	d := SQLDate(asOf)
	err := s.db.NewRaw("SELECT i.id, i.symbol, i.name, i.description, "+countMembers+" AS n FROM market_indexes i WHERE i.id = ?",
		d, d, id).Scan(ctx, &row)
	if err != nil {
		return Index{}, notFound(err, "index %s", id)
	}
	row.Index.AssetCount = row.N
	return row.Index, nil
}

// IndexBySymbol returns the index with the given symbol, ignoring case,
// without its asset count. The error wraps [tradekit.ErrNotFound] when
// there is none.
func (s *Store) IndexBySymbol(ctx context.Context, symbol string) (Index, error) {
	var x Index
	err := s.db.NewRaw("SELECT id, symbol, name, description FROM market_indexes WHERE symbol = ?", strings.ToUpper(symbol)).Scan(ctx, &x)
	if err != nil {
		return Index{}, notFound(err, "index %s", tradekit.Quote(symbol))
	}
	return x, nil
}

// IndexAssets returns the constituents of the index on asOf, by symbol:
// the assets with a membership period containing that date. The error
// wraps [tradekit.ErrNotFound] when there is no such index.
func (s *Store) IndexAssets(ctx context.Context, id uuid.UUID, asOf calendar.Date) ([]Asset, error) {
	if _, err := s.indexByID(ctx, id); err != nil {
		return nil, err
	}
	out := []Asset{}
	d := SQLDate(asOf)
	err := s.db.NewRaw(`SELECT a.id, a.symbol, a.name, a.type, a.exchange_id, a.currency, a.is_active, a.industry_id
		FROM assets a JOIN index_constituents c ON c.asset_id = a.id
		WHERE c.index_id = ? AND c.valid_from <= ? AND (c.valid_to IS NULL OR c.valid_to > ?)
		ORDER BY a.symbol`, id, d, d).Scan(ctx, &out)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("marketdata: constituents of %s: %w", id, err)
	}
	return out, nil
}

// indexByID returns the index with the given id, without its
// asset count. The error wraps [tradekit.ErrNotFound] when there is none.
func (s *Store) indexByID(ctx context.Context, id uuid.UUID) (Index, error) {
	var x Index
	if err := s.db.NewRaw("SELECT id, symbol, name, description FROM market_indexes WHERE id = ?", id).Scan(ctx, &x); err != nil {
		return Index{}, notFound(err, "index %s", id)
	}
	return x, nil
}

// SaveIndex inserts x, or updates the index with its symbol, and sets x.ID
// to the stored id (a new index without an id gets [IndexID]).
func (s *Store) SaveIndex(ctx context.Context, x *Index) error {
	x.Symbol = NormalizeSymbol(x.Symbol)
	if x.Symbol == "" || strings.TrimSpace(x.Name) == "" {
		return fmt.Errorf("marketdata: index %q: symbol and name are required: %w", x.Symbol, tradekit.ErrInvalid)
	}
	if x.ID == uuid.Nil {
		x.ID = IndexID(x.Symbol)
	}
	err := s.db.NewRaw(`INSERT INTO market_indexes (id, symbol, name, description) VALUES (?, ?, ?, ?)
		ON CONFLICT (symbol) DO UPDATE SET name = excluded.name, description = excluded.description RETURNING id`,
		x.ID, x.Symbol, x.Name, x.Description).Scan(ctx, &x.ID)
	if err != nil {
		return fmt.Errorf("marketdata: save index %s: %w", x.Symbol, err)
	}
	return nil
}

// SaveConstituent inserts the membership period c, or updates the end of
// the period of the same index, asset and start. The error wraps
// [tradekit.ErrInvalid] when To is not after From, and
// [tradekit.ErrNotFound] when the index or asset does not exist.
func (s *Store) SaveConstituent(ctx context.Context, c Constituent) error {
	if !c.From.IsValid() || (c.To != calendar.Date{} && !c.To.After(c.From)) {
		return fmt.Errorf("marketdata: constituent period %v to %v: %w", c.From, c.To, tradekit.ErrInvalid)
	}
	if _, err := s.indexByID(ctx, c.IndexID); err != nil {
		return err
	}
	if _, err := s.Asset(ctx, c.AssetID); err != nil {
		return err
	}
	_, err := s.db.NewRaw(`INSERT INTO index_constituents (index_id, asset_id, valid_from, valid_to) VALUES (?, ?, ?, ?)
		ON CONFLICT (index_id, asset_id, valid_from) DO UPDATE SET valid_to = excluded.valid_to`,
		c.IndexID, c.AssetID, SQLDate(c.From), SQLDate(c.To)).Exec(ctx)
	if err != nil {
		return fmt.Errorf("marketdata: save constituent: %w", err)
	}
	return nil
}

// Constituents returns every membership period of the index, by asset id
// and start.
func (s *Store) Constituents(ctx context.Context, indexID uuid.UUID) ([]Constituent, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT index_id, asset_id, valid_from, valid_to FROM index_constituents
		WHERE index_id = ? ORDER BY asset_id, valid_from`, indexID)
	if err != nil {
		return nil, fmt.Errorf("marketdata: constituents: %w", err)
	}
	defer rows.Close()
	var out []Constituent
	for rows.Next() {
		var c Constituent
		if err := rows.Scan(&c.IndexID, &c.AssetID, (*SQLDate)(&c.From), (*SQLDate)(&c.To)); err != nil {
			return nil, fmt.Errorf("marketdata: constituents: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("marketdata: constituents: %w", err)
	}
	return out, nil
}
