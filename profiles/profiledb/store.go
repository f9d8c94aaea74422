package profiledb

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/profiles"
)

// SaveBatch is the number of records [Store.Save] writes per statement,
// each statement being one transaction.
const SaveBatch = 50

// Record is a stored profile: the JSON form of an asset's profiles.Profile with
// the price version it was computed from and the time it was computed.
type Record struct {
	AssetID uuid.UUID
	// Symbol is the asset's symbol, filled in by the reads of [Store];
	// [Store.Save] ignores it.
	Symbol string
	// PriceVersion is the asset's price version
	// (marketdata.PriceVersion.Version) the profile was computed from.
	PriceVersion int64
	// AsOf is the date of the last bar the profile was computed from.
	AsOf calendar.Date
	// JSON is the profile's JSON form (json.Marshal of the Profile), kept
	// byte for byte.
	JSON json.RawMessage
	// UpdatedAt is when the profile was computed, in UTC.
	UpdatedAt time.Time
	// State is the binary form of the profiles.State the profile leaves
	// for the next day's update ([Build] keeps it), or nil. [Store.Save]
	// writes it; the reads of [Store] leave it nil (see [Store.States]).
	State []byte
}

// NewRecord returns the record of p, the profile of the asset assetID
// computed from its prices at version priceVersion at time updatedAt.
// It fails only if p has no AsOf date or holds a value JSON cannot encode
// (a NaN or an infinity), neither of which profiles.Compute returns.
func NewRecord(assetID uuid.UUID, priceVersion int64, p profiles.Profile, updatedAt time.Time) (Record, error) {
	if !p.AsOf.IsValid() {
		return Record{}, fmt.Errorf("profiledb: the profile of %s has no AsOf date: %w", assetID, tradekit.ErrInvalid)
	}
	b, err := json.Marshal(p)
	if err != nil {
		return Record{}, fmt.Errorf("profiledb: encode the profile of %s: %w", assetID, err)
	}
	return Record{AssetID: assetID, PriceVersion: priceVersion, AsOf: p.AsOf,
		JSON: b, UpdatedAt: updatedAt.UTC()}, nil
}

// Profile decodes the record's JSON into a Profile, AsOf included. A
// record whose JSON is not a profile's gives an error of no tradekit kind:
// stored data gone bad is not the caller's mistake.
func (r Record) Profile() (profiles.Profile, error) {
	var p profiles.Profile
	if err := json.Unmarshal(r.JSON, &p); err != nil {
		return profiles.Profile{}, fmt.Errorf("profiledb: the stored profile of %s is corrupt: %v", r.AssetID, err)
	}
	p.AsOf = r.AsOf
	return p, nil
}

// Store keeps the profiles of the assets in the profiles table, one row
// per asset. Its methods run on db, which may be a transaction.
type Store struct {
	db bun.IDB
}

// NewStore returns a Store on db.
func NewStore(db bun.IDB) *Store {
	return &Store{db: db}
}

// Save stores the records, replacing an asset's earlier record, in
// statements of [SaveBatch] records, each one transaction. A stored
// record built from a later price version than the one given is kept (so
// that of two builds running at once the one with the fresher prices
// wins). The records must not repeat an asset, and each asset must exist.
func (s *Store) Save(ctx context.Context, recs []Record) error {
	var b strings.Builder
	args := make([]any, 0, 6*SaveBatch)
	for start := 0; start < len(recs); start += SaveBatch {
		batch := recs[start:min(start+SaveBatch, len(recs))]
		b.Reset()
		args = args[:0]
		b.WriteString("INSERT INTO profiles (asset_id, price_version, as_of, profile, updated_at, state) VALUES ")
		for i, r := range batch {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("(?, ?, ?, ?, ?, ?)")
			args = append(args, r.AssetID, r.PriceVersion, marketdata.SQLDate(r.AsOf), string(r.JSON), r.UpdatedAt.UTC(), r.State)
		}
		b.WriteString(` ON CONFLICT (asset_id) DO UPDATE SET price_version = excluded.price_version,
			as_of = excluded.as_of, profile = excluded.profile, updated_at = excluded.updated_at, state = excluded.state
			WHERE profiles.price_version <= excluded.price_version`)
		if _, err := s.db.NewRaw(b.String(), args...).Exec(ctx); err != nil {
			return fmt.Errorf("profiledb: save %d profiles: %w", len(batch), err)
		}
	}
	return nil
}

// recordColumns selects a Record, but for its asset's symbol, which
// [Store.symbols] reads from marketdata.
const recordColumns = `SELECT p.asset_id, p.price_version, p.as_of, p.profile, p.updated_at FROM profiles p`

// row is a Record as scanned, Symbol aside.
type row struct {
	AssetID      uuid.UUID          `bun:"asset_id"`
	Symbol       string             `bun:"-"`
	PriceVersion int64              `bun:"price_version"`
	AsOf         marketdata.SQLDate `bun:"as_of"`
	Profile      string             `bun:"profile"`
	UpdatedAt    time.Time          `bun:"updated_at"`
}

func (r row) record() Record {
	return Record{AssetID: r.AssetID, Symbol: r.Symbol, PriceVersion: r.PriceVersion, AsOf: calendar.Date(r.AsOf),
		JSON: json.RawMessage(r.Profile), UpdatedAt: r.UpdatedAt.UTC()}
}

// Profile returns the stored profile of the asset. The error wraps
// [tradekit.ErrNotFound] when there is none (no such asset, or no profile
// built for it yet).
func (s *Store) Profile(ctx context.Context, assetID uuid.UUID) (Record, error) {
	var r row
	if err := s.db.NewRaw(recordColumns+" WHERE p.asset_id = ?", assetID).Scan(ctx, &r); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return Record{}, fmt.Errorf("profiledb: %w", tradekit.Errorf(tradekit.ErrNotFound, "no profile for asset %s", assetID))
		}
		return Record{}, fmt.Errorf("profiledb: profile of %s: %w", assetID, err)
	}
	rows, err := s.symbols(ctx, []row{r})
	if err != nil {
		return Record{}, err
	}
	return rows[0].record(), nil
}

// Profiles returns the stored profiles of the assets ids, in the order of
// ids, leaving out the assets that have none (and unknown ids). An id
// given twice is returned once.
func (s *Store) Profiles(ctx context.Context, ids []uuid.UUID) ([]Record, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var rows []row
	if err := s.db.NewRaw(recordColumns+" WHERE p.asset_id IN (?)", bun.In(ids)).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("profiledb: profiles of %d assets: %w", len(ids), err)
	}
	rows, err := s.symbols(ctx, rows)
	if err != nil {
		return nil, err
	}
	byID := make(map[uuid.UUID]row, len(rows))
	for _, r := range rows {
		byID[r.AssetID] = r
	}
	out := make([]Record, 0, len(rows))
	for _, id := range ids {
		if r, ok := byID[id]; ok {
			out = append(out, r.record())
			delete(byID, id)
		}
	}
	return out, nil
}

// symbols sets the Symbol of rows from their assets, read in one call of
// [marketdata.Store.AssetsOf]. A profile's asset always exists (the
// profiles reference the assets).
func (s *Store) symbols(ctx context.Context, rows []row) ([]row, error) {
	ids := make([]uuid.UUID, len(rows))
	for i, r := range rows {
		ids[i] = r.AssetID
	}
	assets, err := marketdata.NewStore(s.db).AssetsOf(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("profiledb: the assets of %d profiles: %w", len(rows), err)
	}
	for i := range rows {
		rows[i].Symbol = assets[rows[i].AssetID].Symbol
	}
	return rows, nil
}

// Versions returns the price version each stored profile was built from,
// by asset.
func (s *Store) Versions(ctx context.Context) (map[uuid.UUID]int64, error) {
	var rows []struct {
		AssetID      uuid.UUID `bun:"asset_id"`
		PriceVersion int64     `bun:"price_version"`
	}
	if err := s.db.NewRaw("SELECT asset_id, price_version FROM profiles").Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("profiledb: stored versions: %w", err)
	}
	out := make(map[uuid.UUID]int64, len(rows))
	for _, r := range rows {
		out[r.AssetID] = r.PriceVersion
	}
	return out, nil
}

// States returns the stored state (see [Record].State) of each of the
// assets ids that has one, by asset, in queries of 1,000 assets.
func (s *Store) States(ctx context.Context, ids []uuid.UUID) (map[uuid.UUID][]byte, error) {
	out := make(map[uuid.UUID][]byte, len(ids))
	for lo := 0; lo < len(ids); lo += 1000 {
		batch := ids[lo:min(lo+1000, len(ids))]
		var rows []struct {
			AssetID uuid.UUID `bun:"asset_id"`
			State   []byte    `bun:"state"`
		}
		if err := s.db.NewRaw("SELECT asset_id, state FROM profiles WHERE state IS NOT NULL AND asset_id IN (?)",
			bun.In(batch)).Scan(ctx, &rows); err != nil {
			return nil, fmt.Errorf("profiledb: states of %d assets: %w", len(batch), err)
		}
		for _, r := range rows {
			out[r.AssetID] = r.State
		}
	}
	return out, nil
}
