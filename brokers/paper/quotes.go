package paper

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/marketdata"
)

// lastCloses keeps each asset's latest stored price per price version,
// so that a placement and a matching pass read an asset's latest close
// from memory while its prices are unchanged. With Config.PriceVersion
// answering from memory (a server's, on PostgreSQL), that costs no read
// at all; otherwise one read of the version replaces the read of the
// price. It is safe for concurrent use.
type lastCloses struct {
	// version is Config.PriceVersion; when nil, the version is read from
	// the database the caller names.
	version func(ctx context.Context, assetID uuid.UUID) (marketdata.PriceVersion, error)

	mu sync.Mutex
	m  map[uuid.UUID]lastClose
}

// lastClose is an asset's latest price as of a price version; ok is false
// when the asset had no price.
type lastClose struct {
	version int64
	price   marketdata.Price
	ok      bool
}

// get returns the asset's latest stored price, reading it through db
// when it is not kept. Call it outside a transaction: the version may be
// read through the pool. The error wraps [tradekit.ErrNotFound] when the
// asset has none.
func (c *lastCloses) get(ctx context.Context, db bun.IDB, assetID uuid.UUID) (marketdata.Price, error) {
	version := c.version
	if version == nil {
		version = marketdata.NewStore(db).PriceVersion
	}
	v, err := version(ctx, assetID)
	if err != nil {
		return marketdata.Price{}, fmt.Errorf("paper: %w", err)
	}
	return c.at(ctx, db, assetID, v.Version)
}

// at returns the asset's latest stored price at price version version,
// which the caller read, reading it through db (a transaction, say) when
// it is not kept.
func (c *lastCloses) at(ctx context.Context, db bun.IDB, assetID uuid.UUID, version int64) (marketdata.Price, error) {
	c.mu.Lock()
	lc, hit := c.m[assetID]
	c.mu.Unlock()
	if !hit || lc.version != version {
		var err error
		lc = lastClose{version: version}
		lc.price, err = marketdata.NewStore(db).LatestPrice(ctx, assetID)
		switch {
		case err == nil:
			lc.ok = true
		case !errors.Is(err, tradekit.ErrNotFound):
			return marketdata.Price{}, fmt.Errorf("paper: %w", err)
		}
		c.mu.Lock()
		if cur, ok := c.m[assetID]; !ok || cur.version <= lc.version {
			c.m[assetID] = lc
		}
		c.mu.Unlock()
	}
	if !lc.ok {
		return marketdata.Price{}, fmt.Errorf("paper: %w", tradekit.Errorf(tradekit.ErrNotFound, "asset %s has no prices", assetID))
	}
	return lc.price, nil
}
