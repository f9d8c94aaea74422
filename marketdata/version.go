package marketdata

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// PriceVersion identifies the state of an asset's prices: Version grows
// by one each time [Store.SavePrices] changes them or [Store.SaveActions]
// changes the asset's corporate actions (which change its adjusted
// series), at UpdatedAt (zero before any). Caches of values computed from
// prices, as traded or adjusted, key on it; a cache holding both keeps
// them under different keys.
type PriceVersion struct {
	Version   int64
	UpdatedAt time.Time
}

// PriceVersion returns the price version of the asset. The error wraps
// [tradekit.ErrNotFound] when there is no such asset.
func (s *Store) PriceVersion(ctx context.Context, assetID uuid.UUID) (PriceVersion, error) {
	var row struct {
		Version   int64      `bun:"prices_version"`
		UpdatedAt *time.Time `bun:"prices_updated_at"`
	}
	err := s.db.NewSelect().Table("assets").Column("prices_version", "prices_updated_at").
		Where("id = ?", assetID).Scan(ctx, &row)
	if err != nil {
		return PriceVersion{}, notFound(err, "asset %s", assetID)
	}
	v := PriceVersion{Version: row.Version}
	if row.UpdatedAt != nil {
		v.UpdatedAt = row.UpdatedAt.UTC()
	}
	return v, nil
}
