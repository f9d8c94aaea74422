package marketdata

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
)

// ---- assets ----

const assetColumns = "id, symbol, name, type, exchange_id, currency, is_active, industry_id"

// Assets returns every asset, by symbol.
func (s *Store) Assets(ctx context.Context) ([]Asset, error) {
	var out []Asset
	if err := s.db.NewRaw("SELECT "+assetColumns+" FROM assets ORDER BY symbol").Scan(ctx, &out); err != nil {
		return nil, fmt.Errorf("marketdata: assets: %w", err)
	}
	return out, nil
}

// AssetFilter selects assets for [Store.FindAssets]. Its zero value
// selects every asset; each field set narrows the selection.
type AssetFilter struct {
	// Type keeps assets of this type; "" keeps every type.
	Type AssetType
	// ExchangeID keeps the assets listed on this exchange; nil keeps all.
	ExchangeID *uuid.UUID
	// Prefix keeps the assets whose symbol or name starts with it,
	// ignoring case (Unicode simple folding); "" keeps all.
	Prefix string
}

// Match reports whether a passes every condition of f.
func (f AssetFilter) Match(a Asset) bool {
	if f.Type != "" && a.Type != f.Type {
		return false
	}
	if f.ExchangeID != nil && a.ExchangeID != *f.ExchangeID {
		return false
	}
	return f.Prefix == "" || hasPrefixFold(a.Symbol, f.Prefix) || hasPrefixFold(a.Name, f.Prefix)
}

// hasPrefixFold reports whether s starts with prefix, ignoring case: it
// compares rune by rune with [strings.EqualFold]'s simple folding.
func hasPrefixFold(s, prefix string) bool {
	for _, p := range prefix {
		if s == "" {
			return false
		}
		r, size := utf8.DecodeRuneInString(s)
		if r != p && !strings.EqualFold(string(r), string(p)) {
			return false
		}
		s = s[size:]
	}
	return true
}

// FindAssets returns the assets that f selects, by symbol; the zero
// filter gives what [Store.Assets] gives. Type and exchange narrow the
// query; the prefix is matched in Go, so that case folds the same way on
// SQLite and PostgreSQL.
func (s *Store) FindAssets(ctx context.Context, f AssetFilter) ([]Asset, error) {
	q := s.db.NewSelect().ColumnExpr(assetColumns).Table("assets").OrderExpr("symbol")
	if f.Type != "" {
		q = q.Where("type = ?", f.Type)
	}
	if f.ExchangeID != nil {
		q = q.Where("exchange_id = ?", *f.ExchangeID)
	}
	var all []Asset
	if err := q.Scan(ctx, &all); err != nil {
		return nil, fmt.Errorf("marketdata: find assets: %w", err)
	}
	out := all[:0]
	for _, a := range all {
		if f.Match(a) {
			out = append(out, a)
		}
	}
	return out, nil
}

// CountAssets returns the number of assets.
func (s *Store) CountAssets(ctx context.Context) (int, error) {
	var n int
	if err := s.db.NewRaw("SELECT COUNT(*) FROM assets").Scan(ctx, &n); err != nil {
		return 0, fmt.Errorf("marketdata: count assets: %w", err)
	}
	return n, nil
}

// Asset returns the asset with the given id. The error wraps
// [tradekit.ErrNotFound] when there is none.
func (s *Store) Asset(ctx context.Context, id uuid.UUID) (Asset, error) {
	var a Asset
	if err := s.db.NewRaw("SELECT "+assetColumns+" FROM assets WHERE id = ?", id).Scan(ctx, &a); err != nil {
		return Asset{}, notFound(err, "asset %s", id)
	}
	return a, nil
}

// VersionedAsset is an asset with the version of its prices.
type VersionedAsset struct {
	Asset
	// PricesVersion is the version of the asset's prices
	// ([PriceVersion].Version).
	PricesVersion int64 `bun:"prices_version"`
}

// assetsOfChunk is the most ids one read of [Store.AssetsOf] names.
const assetsOfChunk = 1000

// AssetsOf returns the assets with the given ids and their price
// versions, by id, leaving out ids of no asset: one read for up to 1,000
// ids, whatever their number, for callers that hold many assets' ids (of
// their own rows) and need their symbols, names or versions.
func (s *Store) AssetsOf(ctx context.Context, ids []uuid.UUID) (map[uuid.UUID]VersionedAsset, error) {
	out := make(map[uuid.UUID]VersionedAsset, len(ids))
	for lo := 0; lo < len(ids); lo += assetsOfChunk {
		batch := ids[lo:min(lo+assetsOfChunk, len(ids))]
		var rows []VersionedAsset
		err := s.db.NewRaw("SELECT "+assetColumns+", prices_version FROM assets WHERE id IN (?)", bun.In(batch)).Scan(ctx, &rows)
		if err != nil {
			return nil, fmt.Errorf("marketdata: %d assets: %w", len(batch), err)
		}
		for _, a := range rows {
			out[a.ID] = a
		}
	}
	return out, nil
}

// AssetBySymbol returns the asset with the given symbol, ignoring case.
// The error wraps [tradekit.ErrNotFound] when there is none.
func (s *Store) AssetBySymbol(ctx context.Context, symbol string) (Asset, error) {
	var a Asset
	err := s.db.NewRaw("SELECT "+assetColumns+" FROM assets WHERE symbol = ?", strings.ToUpper(symbol)).Scan(ctx, &a)
	if err != nil {
		return Asset{}, notFound(err, "asset %s", tradekit.Quote(symbol))
	}
	return a, nil
}

// SaveAsset inserts a, or updates the asset with its symbol, and sets
// a.ID to the stored id (a new asset without an id gets [AssetID] of its
// symbol). The error wraps [tradekit.ErrInvalid] for an empty symbol or
// name, an unknown type, or an unknown exchange or industry, and
// [tradekit.ErrConflict] for an id whose first 12 bytes another asset's
// id shares (see [PriceID]).
func (s *Store) SaveAsset(ctx context.Context, a *Asset) error {
	a.Symbol = NormalizeSymbol(a.Symbol)
	a.Currency = strings.ToUpper(strings.TrimSpace(a.Currency))
	switch {
	case a.Symbol == "" || strings.TrimSpace(a.Name) == "":
		return fmt.Errorf("marketdata: asset %q: symbol and name are required: %w", a.Symbol, tradekit.ErrInvalid)
	case !a.Type.IsValid():
		return fmt.Errorf("marketdata: asset %s: unknown type %q: %w", a.Symbol, a.Type, tradekit.ErrInvalid)
	case len(a.Currency) != 3:
		return fmt.Errorf("marketdata: asset %s: currency %q is not a 3-letter code: %w", a.Symbol, a.Currency, tradekit.ErrInvalid)
	}
	if _, err := s.Exchange(ctx, a.ExchangeID); err != nil {
		return fmt.Errorf("marketdata: asset %s: exchange %s: %w", a.Symbol, a.ExchangeID, tradekit.ErrInvalid)
	}
	if a.IndustryID != nil {
		if _, err := s.industryRow(ctx, *a.IndustryID); err != nil {
			return fmt.Errorf("marketdata: asset %s: industry %s: %w", a.Symbol, *a.IndustryID, tradekit.ErrInvalid)
		}
	}
	if a.ID == uuid.Nil {
		a.ID = AssetID(a.Symbol)
	}
	if err := s.checkPriceIDPrefix(ctx, a.ID, a.Symbol); err != nil {
		return err
	}
	err := s.db.NewRaw(`INSERT INTO assets (`+assetColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (symbol) DO UPDATE SET name = excluded.name, type = excluded.type,
			exchange_id = excluded.exchange_id, currency = excluded.currency,
			is_active = excluded.is_active, industry_id = excluded.industry_id
		RETURNING id`,
		a.ID, a.Symbol, a.Name, string(a.Type), a.ExchangeID, a.Currency, a.IsActive, a.IndustryID).Scan(ctx, &a.ID)
	if err != nil {
		return fmt.Errorf("marketdata: save asset %s: %w", a.Symbol, err)
	}
	// After the asset: a list read under the old version may already hold
	// it, and one read under the new version does (see Reads.EncodedAssets).
	if err := s.bumpAssetListVersion(ctx); err != nil {
		return fmt.Errorf("marketdata: save asset %s: list version: %w", a.Symbol, err)
	}
	return nil
}

// bumpAssetListVersion moves the version of the asset list on.
func (s *Store) bumpAssetListVersion(ctx context.Context) error {
	_, err := s.db.NewRaw(`INSERT INTO asset_list_versions (id, version) VALUES (1, 1)
		ON CONFLICT (id) DO UPDATE SET version = asset_list_versions.version + 1`).Exec(ctx)
	return err
}

// AssetListVersion returns the version of the list of assets: it goes up
// with every [Store.SaveAsset], and is 0 before the first.
func (s *Store) AssetListVersion(ctx context.Context) (int64, error) {
	var v int64
	if err := s.db.NewRaw("SELECT COALESCE(MAX(version), 0) FROM asset_list_versions").Scan(ctx, &v); err != nil {
		return 0, fmt.Errorf("marketdata: asset list version: %w", err)
	}
	return v, nil
}

// checkPriceIDPrefix refuses an asset id whose price ids ([PriceID]) would
// collide with another asset's: one sharing its first 12 bytes, version
// nibble aside.
func (s *Store) checkPriceIDPrefix(ctx context.Context, id uuid.UUID, symbol string) error {
	var lo, hi uuid.UUID
	copy(lo[:6], id[:6])
	copy(hi[:6], id[:6])
	for i := 6; i < 16; i++ {
		hi[i] = 0xff
	}
	var others []struct {
		ID     uuid.UUID `bun:"id"`
		Symbol string    `bun:"symbol"`
	}
	err := s.db.NewRaw("SELECT id, symbol FROM assets WHERE id >= ? AND id <= ?", lo, hi).Scan(ctx, &others)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("marketdata: save asset %s: %w", symbol, err)
	}
	var prefix [12]byte
	copy(prefix[:], id[:12])
	for _, o := range others {
		if o.ID != id && o.Symbol != symbol && matchesPriceID(o.ID, prefix) {
			return fmt.Errorf("marketdata: asset %s: id %s shares its first 12 bytes with %s's, so their price ids would collide: %w",
				symbol, id, o.Symbol, tradekit.ErrConflict)
		}
	}
	return nil
}

// Profile returns the company profile of the asset. The error wraps
// [tradekit.ErrNotFound] when the asset or its profile does not exist.
func (s *Store) Profile(ctx context.Context, assetID uuid.UUID) (Profile, error) {
	var p Profile
	err := s.db.NewRaw(`SELECT asset_id, description, sector, industry, market_cap, website, logo_url
		FROM asset_profiles WHERE asset_id = ?`, assetID).Scan(ctx, &p)
	if err != nil {
		return Profile{}, notFound(err, "profile of asset %s", assetID)
	}
	return p, nil
}

// SaveProfile inserts or replaces the profile of p.AssetID. The error
// wraps [tradekit.ErrNotFound] when the asset does not exist.
func (s *Store) SaveProfile(ctx context.Context, p Profile) error {
	if _, err := s.Asset(ctx, p.AssetID); err != nil {
		return err
	}
	_, err := s.db.NewRaw(`INSERT INTO asset_profiles (asset_id, description, sector, industry, market_cap, website, logo_url)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (asset_id) DO UPDATE SET description = excluded.description, sector = excluded.sector,
			industry = excluded.industry, market_cap = excluded.market_cap, website = excluded.website,
			logo_url = excluded.logo_url`,
		p.AssetID, p.Description, p.Sector, p.Industry, p.MarketCap, p.Website, p.LogoURL).Exec(ctx)
	if err != nil {
		return fmt.Errorf("marketdata: save profile of %s: %w", p.AssetID, err)
	}
	return nil
}

// Fundamentals returns the latest fundamentals of the asset. The error
// wraps [tradekit.ErrNotFound] when the asset or its fundamentals do not
// exist.
func (s *Store) Fundamentals(ctx context.Context, assetID uuid.UUID) (Fundamentals, error) {
	var f Fundamentals
	err := s.db.NewRaw(`SELECT asset_id, pe_ratio, eps, revenue, market_cap, dividend_yield, beta, updated_at
		FROM asset_fundamentals WHERE asset_id = ?`, assetID).Scan(ctx, &f)
	if err != nil {
		return Fundamentals{}, notFound(err, "fundamentals of asset %s", assetID)
	}
	f.UpdatedAt = f.UpdatedAt.UTC()
	return f, nil
}

// SaveFundamentals inserts or replaces the fundamentals of f.AssetID. The
// error wraps [tradekit.ErrNotFound] when the asset does not exist.
func (s *Store) SaveFundamentals(ctx context.Context, f Fundamentals) error {
	if _, err := s.Asset(ctx, f.AssetID); err != nil {
		return err
	}
	_, err := s.db.NewRaw(`INSERT INTO asset_fundamentals (asset_id, pe_ratio, eps, revenue, market_cap, dividend_yield, beta, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (asset_id) DO UPDATE SET pe_ratio = excluded.pe_ratio, eps = excluded.eps,
			revenue = excluded.revenue, market_cap = excluded.market_cap,
			dividend_yield = excluded.dividend_yield, beta = excluded.beta, updated_at = excluded.updated_at`,
		f.AssetID, f.PERatio, f.EPS, f.Revenue, f.MarketCap, f.DividendYield, f.Beta, f.UpdatedAt.UTC()).Exec(ctx)
	if err != nil {
		return fmt.Errorf("marketdata: save fundamentals of %s: %w", f.AssetID, err)
	}
	return nil
}
