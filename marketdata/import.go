package marketdata

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/calendar"
)

// PriceImport describes the asset whose prices [ImportPrices] loads. Only
// Symbol is required; the other fields are used when the asset is new.
type PriceImport struct {
	Symbol string
	// Name defaults to the symbol.
	Name string
	// Type defaults to [Stock].
	Type AssetType
	// Currency defaults to USD.
	Currency string
	// Exchange is the exchange symbol; it defaults to CRYPTO for a crypto
	// asset and NYSE otherwise.
	Exchange string
}

// ImportResult summarises an import.
type ImportResult struct {
	// Asset is the asset the prices belong to.
	Asset Asset
	// Exchange is the asset's exchange.
	Exchange Exchange
	// Created is true when the import created the asset.
	Created bool
	// Rows is the number of records written (inserted or updated).
	Rows int
	// From and To are the first and last dates imported.
	From, To calendar.Date
	// NonTradingDays lists, in date order, the imported dates on which the
	// exchange holds no session by its calendar: weekends and holidays
	// ([calendar.Calendar.IsTradingDay]). Their prices are stored all the
	// same, but such dates are often a sign of a wrong symbol, exchange or
	// date column. It is empty when the asset has no exchange or the
	// exchange no calendar.
	NonTradingDays []calendar.Date
}

// ImportPrices stores bars (as [ReadPricesCSV] returns them) as the daily
// prices of the asset spec names, creating the asset when its symbol is
// unknown. Dates already stored are updated, never duplicated. Run it on
// a Store built on a transaction to import all or nothing. The error wraps
// [tradekit.ErrInvalid] for a bad spec, for no bars at all (then no asset
// is created) or for a bar that fails [Price.Validate].
func ImportPrices(ctx context.Context, st *Store, spec PriceImport, bars []Price) (ImportResult, error) {
	var res ImportResult
	if len(bars) == 0 {
		return res, fmt.Errorf("marketdata: %w", tradekit.Errorf(tradekit.ErrInvalid, "no prices to import for %s", tradekit.Quote(spec.Symbol)))
	}
	a, err := st.AssetBySymbol(ctx, spec.Symbol)
	switch {
	case errors.Is(err, tradekit.ErrNotFound):
		if a, err = newAsset(ctx, st, spec); err != nil {
			return res, err
		}
		res.Created = true
	case err != nil:
		return res, err
	}
	res.Asset = a
	for i := range bars {
		if err := bars[i].Validate(); err != nil {
			return res, err
		}
		bars[i].AssetID = a.ID
		bars[i].ID = uuid.Nil
		if i == 0 || bars[i].Date.Before(res.From) {
			res.From = bars[i].Date
		}
		if bars[i].Date.After(res.To) {
			res.To = bars[i].Date
		}
	}
	if err := st.SavePrices(ctx, bars); err != nil {
		return res, err
	}
	res.Rows = len(bars)
	res.Exchange, err = st.Exchange(ctx, a.ExchangeID)
	if err != nil && !errors.Is(err, tradekit.ErrNotFound) {
		return res, err
	}
	if cal, ok := res.Exchange.Calendar(); ok { // none without an exchange
		for _, b := range bars {
			if !cal.IsTradingDay(b.Date) {
				res.NonTradingDays = append(res.NonTradingDays, b.Date)
			}
		}
		slices.SortFunc(res.NonTradingDays, calendar.Date.Compare)
	}
	return res, nil
}

func newAsset(ctx context.Context, st *Store, spec PriceImport) (Asset, error) {
	a := Asset{Symbol: spec.Symbol, Name: spec.Name, Type: spec.Type, Currency: spec.Currency, IsActive: true}
	if a.Name == "" {
		a.Name = NormalizeSymbol(spec.Symbol)
	}
	if a.Type == "" {
		a.Type = Stock
	}
	if a.Currency == "" {
		a.Currency = "USD"
	}
	ex := spec.Exchange
	if ex == "" {
		ex = "NYSE"
		if a.Type == Crypto {
			ex = "CRYPTO"
		}
	}
	e, err := st.ExchangeBySymbol(ctx, ex)
	if errors.Is(err, tradekit.ErrNotFound) {
		return Asset{}, fmt.Errorf("marketdata: %w", tradekit.Errorf(tradekit.ErrInvalid, "unknown exchange %s", tradekit.Quote(ex)))
	}
	if err != nil {
		return Asset{}, err
	}
	a.ExchangeID = e.ID
	if err := st.SaveAsset(ctx, &a); err != nil {
		return Asset{}, err
	}
	return a, nil
}

// ReferenceKind names a kind of reference data [ImportReference] loads.
type ReferenceKind string

// The kinds of reference data, with their columns (JSON: the same keys).
// Column names ignore case, spaces and underscores.
const (
	// RefIndustries: name, level (sector, industry_group, industry), parent
	// (the parent's name; empty for a sector). Rows may come in any order.
	RefIndustries ReferenceKind = "industries"
	// RefAssets: symbol, name, type, exchange (symbol), currency, and
	// optionally industry (the name of an industry node, lowest level
	// first) and isActive (default true).
	RefAssets ReferenceKind = "assets"
	// RefIndexes: symbol, name, and optionally description.
	RefIndexes ReferenceKind = "indexes"
	// RefConstituents: index (symbol), symbol (the asset), from (date), and
	// optionally to (date, excluded; empty while a member).
	RefConstituents ReferenceKind = "constituents"
	// RefProfiles: symbol, description, sector, industry, marketCap, website,
	// logoUrl.
	RefProfiles ReferenceKind = "profiles"
	// RefFundamentals: symbol, peRatio, eps, revenue, marketCap,
	// dividendYield (a fraction), beta, updatedAt (a date or an RFC 3339
	// time).
	RefFundamentals ReferenceKind = "fundamentals"
)

// ReferenceKinds lists the kinds in the order a fresh universe is best
// loaded in.
func ReferenceKinds() []ReferenceKind {
	return []ReferenceKind{RefIndustries, RefAssets, RefIndexes, RefConstituents, RefProfiles, RefFundamentals}
}

// ImportReference loads reference data of the given kind from r (CSV with
// a header row, or a JSON array of objects) and returns the number of
// records stored; a file with no records is a *[ParseError]. Existing rows with the same natural key (symbol; level
// and name; index, asset and start date) are updated. The first bad
// record stops the import with a *[ParseError] naming its line; run it on
// a Store built on a transaction so that nothing is written then.
func ImportReference(ctx context.Context, st *Store, kind ReferenceKind, r io.Reader, f Format) (int, error) {
	var required []string
	switch kind {
	case RefIndustries:
		required = []string{"name", "level"}
	case RefAssets:
		required = []string{"symbol", "name", "type", "exchange", "currency"}
	case RefIndexes:
		required = []string{"symbol", "name"}
	case RefConstituents:
		required = []string{"index", "symbol", "from"}
	case RefProfiles:
		required = []string{"symbol", "description", "sector", "industry", "marketcap", "website", "logourl"}
	case RefFundamentals:
		required = []string{"symbol", "peratio", "eps", "revenue", "marketcap", "dividendyield", "beta", "updatedat"}
	default:
		return 0, fmt.Errorf("marketdata: %w", tradekit.Errorf(tradekit.ErrInvalid, "unknown reference kind %s", tradekit.Quote(string(kind))))
	}
	recs, err := readRecords(r, f, required...)
	if err != nil {
		return 0, err
	}
	if kind == RefIndustries {
		// Parents first, whatever the file's order.
		slices.SortStableFunc(recs, func(a, b record) int {
			return levelRank(Level(strings.ToLower(a.get("level")))) - levelRank(Level(strings.ToLower(b.get("level"))))
		})
	}
	for _, rec := range recs {
		if err := importRecord(ctx, st, kind, rec); err != nil {
			var pe *ParseError
			if errors.As(err, &pe) || !errors.Is(err, tradekit.ErrInvalid) && !errors.Is(err, tradekit.ErrNotFound) {
				return 0, err
			}
			return 0, rec.errorf("%s", trimPrefix(err))
		}
	}
	return len(recs), nil
}

func importRecord(ctx context.Context, st *Store, kind ReferenceKind, rec record) error {
	switch kind {
	case RefIndustries:
		n := Industry{Name: rec.get("name"), Level: Level(strings.ToLower(rec.get("level")))}
		if !n.Level.IsValid() {
			return rec.errorf("level %q: want sector, industry_group or industry", rec.get("level"))
		}
		if parent := rec.get("parent"); parent != "" {
			p, err := st.IndustryByName(ctx, n.Level.parent(), parent)
			if err != nil {
				return rec.errorf("parent %q: no %s of that name", parent, n.Level.parent())
			}
			n.ParentID = &p.ID
		}
		return st.SaveIndustry(ctx, &n)
	case RefAssets:
		a := Asset{Symbol: rec.get("symbol"), Name: rec.get("name"), Type: AssetType(strings.ToLower(rec.get("type"))),
			Currency: rec.get("currency"), IsActive: true}
		e, err := st.ExchangeBySymbol(ctx, rec.get("exchange"))
		if err != nil {
			return rec.errorf("exchange %q: unknown", rec.get("exchange"))
		}
		a.ExchangeID = e.ID
		if v := rec.get("isactive"); v != "" {
			if a.IsActive, err = strconv.ParseBool(v); err != nil {
				return rec.errorf("isActive %q: want true or false", v)
			}
		}
		if name := rec.get("industry"); name != "" {
			var n Industry
			for _, l := range []Level{IndustryLevel, IndustryGroup, Sector} {
				if n, err = st.IndustryByName(ctx, l, name); err == nil {
					break
				}
			}
			if err != nil {
				return rec.errorf("industry %q: unknown (import industries first)", name)
			}
			a.IndustryID = &n.ID
		}
		return st.SaveAsset(ctx, &a)
	case RefIndexes:
		x := Index{Symbol: rec.get("symbol"), Name: rec.get("name"), Description: rec.get("description")}
		return st.SaveIndex(ctx, &x)
	case RefConstituents:
		x, err := st.IndexBySymbol(ctx, rec.get("index"))
		if err != nil {
			return rec.errorf("index %q: unknown (import indexes first)", rec.get("index"))
		}
		a, err := st.AssetBySymbol(ctx, rec.get("symbol"))
		if err != nil {
			return rec.errorf("asset %q: unknown (import assets first)", rec.get("symbol"))
		}
		c := Constituent{IndexID: x.ID, AssetID: a.ID}
		if c.From, err = parseDate(rec, "from"); err != nil {
			return err
		}
		if rec.get("to") != "" {
			if c.To, err = parseDate(rec, "to"); err != nil {
				return err
			}
			if !c.To.After(c.From) {
				return rec.errorf("to %s must be after from %s", c.To, c.From)
			}
		}
		return st.SaveConstituent(ctx, c)
	case RefProfiles:
		a, err := st.AssetBySymbol(ctx, rec.get("symbol"))
		if err != nil {
			return rec.errorf("asset %q: unknown (import assets first)", rec.get("symbol"))
		}
		p := Profile{AssetID: a.ID, Description: rec.get("description"), Sector: rec.get("sector"),
			Industry: rec.get("industry"), Website: rec.get("website"), LogoURL: rec.get("logourl")}
		if p.MarketCap, err = parseDecimal(rec, "marketcap"); err != nil {
			return err
		}
		return st.SaveProfile(ctx, p)
	case RefFundamentals:
		a, err := st.AssetBySymbol(ctx, rec.get("symbol"))
		if err != nil {
			return rec.errorf("asset %q: unknown (import assets first)", rec.get("symbol"))
		}
		f := Fundamentals{AssetID: a.ID}
		for _, c := range []struct {
			key string
			dst *decimal.Decimal
		}{{"peratio", &f.PERatio}, {"eps", &f.EPS}, {"revenue", &f.Revenue}, {"marketcap", &f.MarketCap},
			{"dividendyield", &f.DividendYield}, {"beta", &f.Beta}} {
			if *c.dst, err = parseDecimal(rec, c.key); err != nil {
				return err
			}
		}
		u := rec.get("updatedat")
		if f.UpdatedAt, err = time.Parse(time.RFC3339, u); err != nil {
			if f.UpdatedAt, err = time.Parse("2006-01-02", u); err != nil {
				if IsDateShaped(u) {
					return rec.errorf("updatedAt %q: no such date", u)
				}
				return rec.errorf("updatedAt %q: want YYYY-MM-DD or an RFC 3339 time", u)
			}
		}
		return st.SaveFundamentals(ctx, f)
	}
	return nil
}
