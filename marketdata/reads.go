package marketdata

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/database"
	"github.com/tradekit/tradekit/ohlcv"
)

// ReadFunc runs fn, a read-only query, on the database that should
// answer it, telling fn whether that is a replica, and returns fn's
// error; it may run fn again elsewhere when fn fails (see
// database.Replicas.Read, which is one).
type ReadFunc func(ctx context.Context, fn func(db bun.IDB, replica bool) error) error

// On returns the ReadFunc that runs every read on db.
func On(db bun.IDB) ReadFunc {
	return func(_ context.Context, fn func(bun.IDB, bool) error) error { return fn(db, false) }
}

// Reads is the read-only side of [Store] for serving market data: the
// same queries, each run where its ReadFunc sends it, typically a
// streaming replica (see database.Replicas), so its answers may be as old
// as the replicas' bound on lag. Nothing that writes, and nothing that
// must see its own writes, belongs here.
//
// The price reads that feed caches keyed by price version
// ([Reads.PricesAt], [Reads.PriceColumnsAt], [Reads.AdjustedPriceColumnsAt])
// are exact instead: on a replica they first read the asset's price
// version there, and unless it has reached the version the caller holds
// (read from the primary, see [Versions]) they fail with
// database.ErrStale, on which the ReadFunc runs them on the primary.
// What they return is therefore at least as new as that version, as a
// read of the primary's is, and may be cached under it for as long as it
// is current, however far behind a replica is.
type Reads struct {
	read   ReadFunc
	assets encodedAssets // the cache of EncodedAssets
}

// NewReads returns the reads run through read.
func NewReads(read ReadFunc) *Reads { return &Reads{read: read} }

// encodedAssets is the last encoded list of every asset and its version.
type encodedAssets struct {
	mu      sync.Mutex // held while the list is read and encoded: one rebuild at a time
	ok      bool
	version int64
	data    []byte
}

// EncodedAssets returns encode's form of [Store.Assets], the list of every
// asset, and the asset list version ([Store.AssetListVersion]) read before
// it, from a cache that holds the last list encoded: a request pays one
// query for the version, and the list is read and encoded again only
// after an asset was saved. encode must be the same function on every
// call (the cache does not know it) and must not keep the slice it is
// given; the bytes returned are shared, and must not be modified. The
// version and the list are read on the same database, so a replica's
// list is cached under the replica's version; a change of version either
// way rebuilds it. Errors are those of the reads and of encode.
func (r *Reads) EncodedAssets(ctx context.Context, encode func([]Asset) ([]byte, error)) ([]byte, int64, error) {
	var out []byte
	var version int64
	err := r.read(ctx, func(db bun.IDB, _ bool) error {
		st := NewStore(db)
		v, err := st.AssetListVersion(ctx)
		if err != nil {
			return err
		}
		c := &r.assets
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.ok && c.version == v {
			out, version = c.data, v
			return nil
		}
		list, err := st.Assets(ctx)
		if err != nil {
			return err
		}
		data, err := encode(list)
		if err != nil {
			return err
		}
		c.ok, c.version, c.data = true, v, data
		out, version = data, v
		return nil
	})
	return out, version, err
}

// readOn runs fn on a Store over the database r's ReadFunc chooses.
func readOn[T any](ctx context.Context, r *Reads, fn func(st *Store) (T, error)) (T, error) {
	var out T
	err := r.read(ctx, func(db bun.IDB, _ bool) error {
		var err error
		out, err = fn(NewStore(db))
		return err
	})
	return out, err
}

// atVersion runs fn as readOn does, checking first, on a replica, that the
// asset's price version there is at least version.
func atVersion[T any](ctx context.Context, r *Reads, assetID uuid.UUID, version int64, fn func(st *Store) (T, error)) (T, error) {
	var out T
	err := r.read(ctx, func(db bun.IDB, replica bool) error {
		st := NewStore(db)
		if replica {
			if err := st.checkVersion(ctx, assetID, version); err != nil {
				return err
			}
		}
		var err error
		out, err = fn(st)
		return err
	})
	return out, err
}

// checkVersion returns an error wrapping database.ErrStale unless the
// asset's price version in s's database is at least version.
func (s *Store) checkVersion(ctx context.Context, assetID uuid.UUID, version int64) error {
	v, err := s.PriceVersion(ctx, assetID)
	if errors.Is(err, tradekit.ErrNotFound) {
		// The caller's version came from a database that has the asset.
		return fmt.Errorf("marketdata: asset %s not replicated yet: %w", assetID, database.ErrStale)
	}
	if err != nil {
		return err
	}
	if v.Version < version {
		return fmt.Errorf("marketdata: asset %s at price version %d, %d wanted: %w", assetID, v.Version, version, database.ErrStale)
	}
	return nil
}

// PricesAt is [Store.Prices] of the whole history, at least as new as
// the price version version.
func (r *Reads) PricesAt(ctx context.Context, assetID uuid.UUID, version int64) ([]Price, error) {
	return atVersion(ctx, r, assetID, version, func(st *Store) ([]Price, error) {
		return st.Prices(ctx, assetID, calendar.Date{}, calendar.Date{})
	})
}

// PriceColumnsAt is [Store.PriceColumns], at least as new as the price
// version version. On a replica, where nothing can be written, a stored
// copy of the columns that is out of date is brought up to date in memory
// only.
func (r *Reads) PriceColumnsAt(ctx context.Context, assetID uuid.UUID, version int64) (ohlcv.Series, error) {
	return r.columnsAt(ctx, assetID, version, false)
}

// AdjustedPriceColumnsAt is [Store.AdjustedPriceColumns], at least as new
// as the price version version, as [Reads.PriceColumnsAt].
func (r *Reads) AdjustedPriceColumnsAt(ctx context.Context, assetID uuid.UUID, version int64) (ohlcv.Series, error) {
	return r.columnsAt(ctx, assetID, version, true)
}

// columnsAt reads the asset's columns, adjusted or not.
func (r *Reads) columnsAt(ctx context.Context, assetID uuid.UUID, version int64, adjusted bool) (ohlcv.Series, error) {
	var out ohlcv.Series
	err := r.read(ctx, func(db bun.IDB, replica bool) error {
		st := NewStore(db)
		if !replica {
			var err error
			if adjusted {
				out, err = st.AdjustedPriceColumns(ctx, assetID)
			} else {
				out, err = st.PriceColumns(ctx, assetID)
			}
			return err
		}
		if err := st.checkVersion(ctx, assetID, version); err != nil {
			return err
		}
		if adjusted {
			acts, err := st.actions(ctx, assetID)
			if err != nil {
				return err
			}
			if len(acts) > 0 {
				all, err := st.Prices(ctx, assetID, calendar.Date{}, calendar.Date{})
				if err != nil {
					return err
				}
				out = PriceSeries(Adjust(all, acts))
				return nil
			}
		}
		got, err := st.columnsOf(ctx, []uuid.UUID{assetID}, func(uuid.UUID, int, bool) bool { return false })
		if err != nil {
			return err
		}
		vc, ok := got[assetID]
		if !ok {
			return fmt.Errorf("marketdata: asset %s not replicated yet: %w", assetID, database.ErrStale)
		}
		out = vc.Bars
		return nil
	})
	return out, err
}

// Assets is [Store.Assets].
func (r *Reads) Assets(ctx context.Context) ([]Asset, error) {
	return readOn(ctx, r, func(st *Store) ([]Asset, error) { return st.Assets(ctx) })
}

// FindAssets is [Store.FindAssets].
func (r *Reads) FindAssets(ctx context.Context, f AssetFilter) ([]Asset, error) {
	return readOn(ctx, r, func(st *Store) ([]Asset, error) { return st.FindAssets(ctx, f) })
}

// Asset is [Store.Asset].
func (r *Reads) Asset(ctx context.Context, id uuid.UUID) (Asset, error) {
	return readOn(ctx, r, func(st *Store) (Asset, error) { return st.Asset(ctx, id) })
}

// AssetBySymbol is [Store.AssetBySymbol].
func (r *Reads) AssetBySymbol(ctx context.Context, symbol string) (Asset, error) {
	return readOn(ctx, r, func(st *Store) (Asset, error) { return st.AssetBySymbol(ctx, symbol) })
}

// Profile is [Store.Profile].
func (r *Reads) Profile(ctx context.Context, assetID uuid.UUID) (Profile, error) {
	return readOn(ctx, r, func(st *Store) (Profile, error) { return st.Profile(ctx, assetID) })
}

// Fundamentals is [Store.Fundamentals].
func (r *Reads) Fundamentals(ctx context.Context, assetID uuid.UUID) (Fundamentals, error) {
	return readOn(ctx, r, func(st *Store) (Fundamentals, error) { return st.Fundamentals(ctx, assetID) })
}

// Industries is [Store.Industries].
func (r *Reads) Industries(ctx context.Context, level Level) ([]Industry, error) {
	return readOn(ctx, r, func(st *Store) ([]Industry, error) { return st.Industries(ctx, level) })
}

// Industry is [Store.Industry].
func (r *Reads) Industry(ctx context.Context, id uuid.UUID) (Industry, error) {
	return readOn(ctx, r, func(st *Store) (Industry, error) { return st.Industry(ctx, id) })
}

// IndustryChildren is [Store.IndustryChildren].
func (r *Reads) IndustryChildren(ctx context.Context, id uuid.UUID) ([]Industry, error) {
	return readOn(ctx, r, func(st *Store) ([]Industry, error) { return st.IndustryChildren(ctx, id) })
}

// IndustryAssets is [Store.IndustryAssets].
func (r *Reads) IndustryAssets(ctx context.Context, id uuid.UUID) ([]Asset, error) {
	return readOn(ctx, r, func(st *Store) ([]Asset, error) { return st.IndustryAssets(ctx, id) })
}

// Indexes is [Store.Indexes].
func (r *Reads) Indexes(ctx context.Context, asOf calendar.Date) ([]Index, error) {
	return readOn(ctx, r, func(st *Store) ([]Index, error) { return st.Indexes(ctx, asOf) })
}

// Index is [Store.Index].
func (r *Reads) Index(ctx context.Context, id uuid.UUID, asOf calendar.Date) (Index, error) {
	return readOn(ctx, r, func(st *Store) (Index, error) { return st.Index(ctx, id, asOf) })
}

// IndexBySymbol is [Store.IndexBySymbol].
func (r *Reads) IndexBySymbol(ctx context.Context, symbol string) (Index, error) {
	return readOn(ctx, r, func(st *Store) (Index, error) { return st.IndexBySymbol(ctx, symbol) })
}

// IndexAssets is [Store.IndexAssets].
func (r *Reads) IndexAssets(ctx context.Context, id uuid.UUID, asOf calendar.Date) ([]Asset, error) {
	return readOn(ctx, r, func(st *Store) ([]Asset, error) { return st.IndexAssets(ctx, id, asOf) })
}

// Actions is [Store.Actions].
func (r *Reads) Actions(ctx context.Context, assetID uuid.UUID) ([]Action, error) {
	return readOn(ctx, r, func(st *Store) ([]Action, error) { return st.Actions(ctx, assetID) })
}

// AdjustedPrices is [Store.AdjustedPrices].
func (r *Reads) AdjustedPrices(ctx context.Context, assetID uuid.UUID, from, to calendar.Date) ([]Price, error) {
	return readOn(ctx, r, func(st *Store) ([]Price, error) { return st.AdjustedPrices(ctx, assetID, from, to) })
}

// PriceLocation is [Store.PriceLocation].
func (r *Reads) PriceLocation(ctx context.Context, id uuid.UUID) (uuid.UUID, calendar.Date, error) {
	type loc struct {
		asset uuid.UUID
		date  calendar.Date
	}
	l, err := readOn(ctx, r, func(st *Store) (loc, error) {
		a, d, err := st.PriceLocation(ctx, id)
		return loc{a, d}, err
	})
	return l.asset, l.date, err
}

// CountPrices is [Store.CountPrices].
func (r *Reads) CountPrices(ctx context.Context, assetID uuid.UUID) (int, error) {
	return readOn(ctx, r, func(st *Store) (int, error) { return st.CountPrices(ctx, assetID) })
}

// Exchanges is [Store.Exchanges].
func (r *Reads) Exchanges(ctx context.Context) ([]Exchange, error) {
	return readOn(ctx, r, func(st *Store) ([]Exchange, error) { return st.Exchanges(ctx) })
}

// Exchange is [Store.Exchange].
func (r *Reads) Exchange(ctx context.Context, id uuid.UUID) (Exchange, error) {
	return readOn(ctx, r, func(st *Store) (Exchange, error) { return st.Exchange(ctx, id) })
}

// ExchangeBySymbol is [Store.ExchangeBySymbol].
func (r *Reads) ExchangeBySymbol(ctx context.Context, symbol string) (Exchange, error) {
	return readOn(ctx, r, func(st *Store) (Exchange, error) { return st.ExchangeBySymbol(ctx, symbol) })
}
