package paper

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/google/uuid"

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
	md      *marketdata.Store
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

// get returns the asset's latest stored price; the error wraps
// [tradekit.ErrNotFound] when the asset has none. Call it outside a
// transaction: it reads through the pool.
func (c *lastCloses) get(ctx context.Context, assetID uuid.UUID) (marketdata.Price, error) {
	v, err := c.version(ctx, assetID)
	if err != nil {
		return marketdata.Price{}, fmt.Errorf("paper: %w", err)
	}
	c.mu.Lock()
	lc, hit := c.m[assetID]
	c.mu.Unlock()
	if !hit || lc.version != v.Version {
		lc = lastClose{version: v.Version}
		lc.price, err = c.md.LatestPrice(ctx, assetID)
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
