package marketdata

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
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
	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/marketdata/calendar"
)

// Store reads and writes market data. It works on a database or inside a
// transaction: build it from either. The SQL is written once for both
// dialects (PostgreSQL and SQLite).
type Store struct {
	db bun.IDB
}

// NewStore returns a Store on db, a *bun.DB or a bun.Tx.
func NewStore(db bun.IDB) *Store {
	return &Store{db: db}
}

// notFound turns sql.ErrNoRows into a [*tradekit.Error] of kind
// [tradekit.ErrNotFound] saying "<what> not found", and wraps any other err.
func notFound(err error, format string, args ...any) error {
	what := fmt.Sprintf(format, args...)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("marketdata: %w", tradekit.Errorf(tradekit.ErrNotFound, "%s not found", what))
	}
	return fmt.Errorf("marketdata: %s: %w", what, err)
}

// SQLDate stores a calendar.Date as YYYY-MM-DD (TEXT in SQLite, DATE in
// PostgreSQL) and scans it back from either form; the zero Date is NULL.
// Convert to use it: args = append(args, marketdata.SQLDate(d)), or
// rows.Scan((*marketdata.SQLDate)(&d)).
type SQLDate calendar.Date

// Value implements [driver.Valuer].
func (d SQLDate) Value() (driver.Value, error) {
	if (d == SQLDate{}) {
		return nil, nil
	}
	return calendar.Date(d).String(), nil
}

// Scan implements [sql.Scanner].
func (d *SQLDate) Scan(src any) error {
	var s string
	switch v := src.(type) {
	case nil:
		*d = SQLDate{}
		return nil
	case time.Time:
		*d = SQLDate(calendar.NewDate(v.Year(), v.Month(), v.Day()))
		return nil
	case string:
		s = v
	case []byte:
		s = string(v)
	default:
		return fmt.Errorf("marketdata: cannot scan %T into a date", src)
	}
	if len(s) > 10 {
		s = s[:10] // a timestamp's date part
	}
	cd, err := calendar.ParseDate(s)
	if err != nil {
		return err
	}
	*d = SQLDate(cd)
	return nil
}

// ---- exchanges ----

const exchangeColumns = "id, symbol, mic, name, timezone, country, currency, open_time, close_time"

// Exchanges returns every exchange, by symbol.
func (s *Store) Exchanges(ctx context.Context) ([]Exchange, error) {
	var out []Exchange
	if err := s.db.NewRaw("SELECT "+exchangeColumns+" FROM exchanges ORDER BY symbol").Scan(ctx, &out); err != nil {
		return nil, fmt.Errorf("marketdata: exchanges: %w", err)
	}
	return out, nil
}

// Exchange returns the exchange with the given id. The error wraps
// [tradekit.ErrNotFound] when there is none.
func (s *Store) Exchange(ctx context.Context, id uuid.UUID) (Exchange, error) {
	var e Exchange
	if err := s.db.NewRaw("SELECT "+exchangeColumns+" FROM exchanges WHERE id = ?", id).Scan(ctx, &e); err != nil {
		return Exchange{}, notFound(err, "exchange %s", id)
	}
	return e, nil
}

// ExchangeBySymbol returns the exchange with the given symbol, ignoring
// case. The error wraps [tradekit.ErrNotFound] when there is none.
func (s *Store) ExchangeBySymbol(ctx context.Context, symbol string) (Exchange, error) {
	var e Exchange
	err := s.db.NewRaw("SELECT "+exchangeColumns+" FROM exchanges WHERE symbol = ?", strings.ToUpper(symbol)).Scan(ctx, &e)
	if err != nil {
		return Exchange{}, notFound(err, "exchange %s", tradekit.Quote(symbol))
	}
	return e, nil
}

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
	return nil
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

// ---- industries ----

// industryTree is every industry node with its subtree's asset count.
type industryTree struct {
	nodes    []Industry          // sector first, then groups, then industries; by name within a level
	byID     map[uuid.UUID]int   // index into nodes
	children map[uuid.UUID][]int // direct children
	counts   map[uuid.UUID]int   // assets attached directly to a node
}

func levelRank(l Level) int {
	switch l {
	case Sector:
		return 0
	case IndustryGroup:
		return 1
	}
	return 2
}

// tree loads the whole industry tree (it is small: a few hundred nodes)
// and counts the assets below every node.
func (s *Store) tree(ctx context.Context) (*industryTree, error) {
	t := &industryTree{byID: map[uuid.UUID]int{}, children: map[uuid.UUID][]int{}, counts: map[uuid.UUID]int{}}
	if err := s.db.NewRaw("SELECT id, name, level, parent_id FROM industries").Scan(ctx, &t.nodes); err != nil {
		return nil, fmt.Errorf("marketdata: industries: %w", err)
	}
	var counts []struct {
		ID uuid.UUID `bun:"industry_id"`
		N  int       `bun:"n"`
	}
	err := s.db.NewRaw("SELECT industry_id, COUNT(*) AS n FROM assets WHERE industry_id IS NOT NULL GROUP BY industry_id").Scan(ctx, &counts)
	if err != nil {
		return nil, fmt.Errorf("marketdata: industry asset counts: %w", err)
	}
	for _, c := range counts {
		t.counts[c.ID] = c.N
	}
	slices.SortFunc(t.nodes, func(a, b Industry) int {
		if r := levelRank(a.Level) - levelRank(b.Level); r != 0 {
			return r
		}
		return strings.Compare(a.Name, b.Name)
	})
	for i, n := range t.nodes {
		t.byID[n.ID] = i
		if n.ParentID != nil {
			t.children[*n.ParentID] = append(t.children[*n.ParentID], i)
		}
	}
	// Bottom-up: industries, then groups, then sectors.
	for i := len(t.nodes) - 1; i >= 0; i-- {
		n := &t.nodes[i]
		n.AssetCount += t.counts[n.ID]
		for _, c := range t.children[n.ID] {
			n.AssetCount += t.nodes[c].AssetCount
		}
	}
	return t, nil
}

// subtree returns the ids of the node at i and all nodes below it.
func (t *industryTree) subtree(i int) []uuid.UUID {
	ids := []uuid.UUID{t.nodes[i].ID}
	for _, c := range t.children[t.nodes[i].ID] {
		ids = append(ids, t.subtree(c)...)
	}
	return ids
}

func (t *industryTree) node(id uuid.UUID) (int, error) {
	i, ok := t.byID[id]
	if !ok {
		return 0, fmt.Errorf("marketdata: %w", tradekit.Errorf(tradekit.ErrNotFound, "industry %s not found", id))
	}
	return i, nil
}

// Industries returns the industry nodes of the given level ("" for all),
// sectors first, then industry groups, then industries, by name within a
// level, each with the count of assets below it. The error wraps
// [tradekit.ErrInvalid] for an unknown level.
func (s *Store) Industries(ctx context.Context, level Level) ([]Industry, error) {
	if level != "" && !level.IsValid() {
		return nil, fmt.Errorf("marketdata: industry level %q: %w", level, tradekit.ErrInvalid)
	}
	t, err := s.tree(ctx)
	if err != nil {
		return nil, err
	}
	out := []Industry{}
	for _, n := range t.nodes {
		if level == "" || n.Level == level {
			out = append(out, n)
		}
	}
	return out, nil
}

// Industry returns the industry node with the given id and its asset
// count. The error wraps [tradekit.ErrNotFound] when there is none.
func (s *Store) Industry(ctx context.Context, id uuid.UUID) (Industry, error) {
	t, err := s.tree(ctx)
	if err != nil {
		return Industry{}, err
	}
	i, err := t.node(id)
	if err != nil {
		return Industry{}, err
	}
	return t.nodes[i], nil
}

// IndustryChildren returns the direct children of the node with the given
// id, by name. The error wraps [tradekit.ErrNotFound] when there is no
// such node.
func (s *Store) IndustryChildren(ctx context.Context, id uuid.UUID) ([]Industry, error) {
	t, err := s.tree(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := t.node(id); err != nil {
		return nil, err
	}
	out := []Industry{}
	for _, c := range t.children[id] {
		out = append(out, t.nodes[c])
	}
	return out, nil
}

// IndustryAssets returns the assets at the node with the given id or
// anywhere below it, by symbol. The error wraps [tradekit.ErrNotFound]
// when there is no such node.
func (s *Store) IndustryAssets(ctx context.Context, id uuid.UUID) ([]Asset, error) {
	t, err := s.tree(ctx)
	if err != nil {
		return nil, err
	}
	i, err := t.node(id)
	if err != nil {
		return nil, err
	}
	out := []Asset{}
	err = s.db.NewRaw("SELECT "+assetColumns+" FROM assets WHERE industry_id IN (?) ORDER BY symbol",
		bun.In(t.subtree(i))).Scan(ctx, &out)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("marketdata: assets of industry %s: %w", id, err)
	}
	return out, nil
}

func (s *Store) industryRow(ctx context.Context, id uuid.UUID) (Industry, error) {
	var n Industry
	if err := s.db.NewRaw("SELECT id, name, level, parent_id FROM industries WHERE id = ?", id).Scan(ctx, &n); err != nil {
		return Industry{}, notFound(err, "industry %s", id)
	}
	return n, nil
}

// IndustryByName returns the node of the given level and name (compared
// case-insensitively). The error wraps [tradekit.ErrNotFound] when there
// is none.
func (s *Store) IndustryByName(ctx context.Context, level Level, name string) (Industry, error) {
	var n Industry
	err := s.db.NewRaw("SELECT id, name, level, parent_id FROM industries WHERE level = ? AND LOWER(name) = ?",
		string(level), strings.ToLower(strings.TrimSpace(name))).Scan(ctx, &n)
	if err != nil {
		return Industry{}, notFound(err, "%s %s", level, tradekit.Quote(name))
	}
	return n, nil
}

// SaveIndustry inserts n, or updates the node with its level and name,
// and sets n.ID to the stored id (a new node without an id gets
// [IndustryID]). A sector has no parent; an industry group's parent is a
// sector and an industry's an industry group: anything else is an error
// wrapping [tradekit.ErrInvalid].
func (s *Store) SaveIndustry(ctx context.Context, n *Industry) error {
	n.Name = strings.TrimSpace(n.Name)
	if n.Name == "" || !n.Level.IsValid() {
		return fmt.Errorf("marketdata: industry %q: a name and a level (sector, industry_group, industry) are required: %w",
			n.Name, tradekit.ErrInvalid)
	}
	if want := n.Level.parent(); want == "" {
		if n.ParentID != nil {
			return fmt.Errorf("marketdata: sector %q cannot have a parent: %w", n.Name, tradekit.ErrInvalid)
		}
	} else {
		if n.ParentID == nil {
			return fmt.Errorf("marketdata: %s %q needs a parent %s: %w", n.Level, n.Name, want, tradekit.ErrInvalid)
		}
		p, err := s.industryRow(ctx, *n.ParentID)
		if err != nil || p.Level != want {
			return fmt.Errorf("marketdata: %s %q: parent %s is not a %s: %w", n.Level, n.Name, *n.ParentID, want, tradekit.ErrInvalid)
		}
	}
	if n.ID == uuid.Nil {
		n.ID = IndustryID(n.Level, n.Name)
	}
	err := s.db.NewRaw(`INSERT INTO industries (id, name, level, parent_id) VALUES (?, ?, ?, ?)
		ON CONFLICT (level, name) DO UPDATE SET parent_id = excluded.parent_id RETURNING id`,
		n.ID, n.Name, string(n.Level), n.ParentID).Scan(ctx, &n.ID)
	if err != nil {
		return fmt.Errorf("marketdata: save industry %q: %w", n.Name, err)
	}
	return nil
}

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

// copyPrices writes ps on PostgreSQL with COPY into a temporary table of
// the connection's session, then one INSERT ... SELECT with the upsert
// clause. Inside a transaction begun on conn (see [InConnTx]) it is all or
// nothing. It reports whether any row changed.
func copyPrices(ctx context.Context, conn bun.Conn, ps []Price) (bool, error) {
	_, err := conn.ExecContext(ctx, `CREATE TEMP TABLE IF NOT EXISTS prices_load (
		asset_id UUID, date DATE, open NUMERIC, high NUMERIC, low NUMERIC, close NUMERIC, volume BIGINT)`)
	if err != nil {
		return false, fmt.Errorf("marketdata: save prices: %w", err)
	}
	if _, err := conn.ExecContext(ctx, "TRUNCATE prices_load"); err != nil {
		return false, fmt.Errorf("marketdata: save prices: %w", err)
	}
	var buf bytes.Buffer
	buf.Grow(len(ps) * 80)
	var line []byte
	for _, p := range ps {
		line = line[:0]
		line = append(line, p.AssetID.String()...)
		line = append(line, '\t')
		line, _ = p.Date.AppendText(line)
		for _, d := range [4]decimal.Decimal{p.Open, p.High, p.Low, p.Close} {
			line = append(line, '\t')
			line = append(line, d.String()...)
		}
		line = append(line, '\t')
		line = strconv.AppendInt(line, p.Volume, 10)
		line = append(line, '\n')
		buf.Write(line)
	}
	if _, err := pgdriver.CopyFrom(ctx, conn, &buf, "COPY prices_load FROM STDIN"); err != nil {
		return false, fmt.Errorf("marketdata: save prices: copy: %w", err)
	}
	res, err := conn.ExecContext(ctx, "INSERT INTO prices ("+priceColumns+") SELECT "+priceColumns+" FROM prices_load"+priceUpsert)
	if err != nil {
		return false, fmt.Errorf("marketdata: save prices: %w", err)
	}
	if _, err := conn.ExecContext(ctx, "TRUNCATE prices_load"); err != nil {
		return false, fmt.Errorf("marketdata: save prices: %w", err)
	}
	n, err := res.RowsAffected()
	return err != nil || n > 0, nil
}

// bumpPriceVersions adds one to the price version (see [PriceVersion]) of
// every asset in ps and tells listening [Versions] so.
func (s *Store) bumpPriceVersions(ctx context.Context, ps []Price) error {
	var ids []uuid.UUID
	seen := map[uuid.UUID]bool{}
	for _, p := range ps {
		if !seen[p.AssetID] {
			seen[p.AssetID] = true
			ids = append(ids, p.AssetID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	_, err := s.db.NewRaw("UPDATE assets SET prices_version = prices_version + 1, prices_updated_at = ? WHERE id IN (?)",
		time.Now().UTC(), bun.In(ids)).Exec(ctx)
	if err == nil {
		err = s.notifyVersions(ctx, ids)
	}
	if err != nil {
		return fmt.Errorf("marketdata: save prices: version: %w", err)
	}
	return nil
}

// InConnTx runs fn in a transaction on one connection of db, with a Store
// built on that connection: on PostgreSQL, [Store.SavePrices] then loads
// with COPY. The transaction commits when fn returns nil and rolls back
// otherwise. On SQLite it is db.RunInTx with a Store on the bun.Tx.
func InConnTx(ctx context.Context, db *bun.DB, fn func(ctx context.Context, st *Store) error) error {
	if db.Dialect().Name() != dialect.PG {
		return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error { return fn(ctx, NewStore(tx)) })
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("marketdata: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
		return fmt.Errorf("marketdata: begin: %w", err)
	}
	done := false
	defer func() {
		if done {
			return
		}
		// fn failed or panicked: roll back, and never hand the pool a
		// connection left in an unknown state.
		if _, err := conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK"); err != nil {
			conn.Raw(func(any) error { return driver.ErrBadConn })
		}
	}()
	if err := fn(ctx, NewStore(conn)); err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return fmt.Errorf("marketdata: commit: %w", err)
	}
	done = true
	return nil
}
